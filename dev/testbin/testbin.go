// Package testbin builds the main packages tests run as child processes (the
// CLI, the quickstart's demo server and agent, a stdio server) into
// _build/testbin/<owner>/ of the repository, once per test process. A fixed
// path is what lets `go build` find the binary up to date and skip the link
// when nothing it is built from changed: built into a temporary directory,
// the CLI was linked again on every test run (about 4 CPU-s each, several
// times per `make test`).
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

var (
	mu     sync.Mutex
	builds = map[string]func() (string, error){}
)

// Build builds pkg, a main package named from the repository's root
// ("./cmd/mcpdrift"), into _build/testbin/<owner>/ and returns the binary's
// absolute path; the test fails if it does not build. owner (the test's
// package, "docscheck") keeps test packages that run at once from writing
// the same file while another runs it. The build inherits the environment
// (GOFLAGS=-trimpath from make, so it reuses the packages go test compiled)
// with CGO_ENABLED=0, as make and the release build.
func Build(t testing.TB, owner, pkg string) string {
	t.Helper()
	root := testservers.RepoRoot()
	bin := filepath.Join(root, "_build", "testbin", owner, filepath.Base(pkg))
	mu.Lock()
	build, ok := builds[bin]
	if !ok {
		build = sync.OnceValues(func() (string, error) {
			cmd := exec.Command("go", "build", "-o", bin, pkg)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
			}
			return bin, nil
		})
		builds[bin] = build
	}
	mu.Unlock()
	path, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return path
}
