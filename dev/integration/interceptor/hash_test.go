package interceptor_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestDigestsMatchHashCLI feeds real server-everything listings through a
// session and checks every tool's span digest, and the set digest, against
// what `mcpdrift hash` prints for the same file.
func TestDigestsMatchHashCLI(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		testservers.SkipLoudly(t, "no go toolchain on PATH to build the CLI, so the digests were NOT checked against mcpdrift hash")
	}
	root := testservers.RepoRoot()
	cli := filepath.Join(t.TempDir(), "mcpdrift")
	build := exec.Command(gobin, "build", "-o", cli, "./cmd/mcpdrift")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the CLI: %v\n%s", err, out)
	}
	for _, version := range testservers.EverythingVersions {
		path := filepath.Join(root, "testdata", "fixtures", "server-everything", version, "tools-list.json")
		raw, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Run(version, func(t *testing.T) {
			out, err := exec.Command(cli, "hash", "--format", "json", path).Output()
			if err != nil {
				t.Fatal(err)
			}
			var want struct {
				Tools    map[string]string `json:"tools"`
				ToolsSet string            `json:"tools_set"`
			}
			if err := json.Unmarshal(out, &want); err != nil {
				t.Fatal(err)
			}
			w := newWire(t)
			w.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			w.recv(`{"jsonrpc":"2.0","id":1,"result":` + string(raw) + `}`)
			w.last("tools/list").want(t, map[string]any{semconv.ToolsSetDigest: want.ToolsSet, semconv.ToolsCount: len(want.Tools)})
			id := 2
			for name, digest := range want.Tools {
				w.call(id, name, `{}`)
				id++
				w.last("tools/call "+name).want(t, map[string]any{semconv.ToolDigest: digest, semconv.ToolsSetDigest: want.ToolsSet})
			}
			if len(want.Tools) < 5 {
				t.Fatalf("only %d tools in %s", len(want.Tools), path)
			}
		})
	}
}
