package modcheck

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestModulesAgreeOnVersions: every module builds on its own go.mod (GOWORK
// off), so two modules that select different versions of a shared
// dependency compile it, and everything above it, twice: the proxy module's
// older x/net and gRPC cost a cold CI run a second compile of the gRPC and
// OTLP exporter graph. Every module must select the root module's version
// of each module both build.
func TestModulesAgreeOnVersions(t *testing.T) {
	gobin := goTool(t)
	rootList := buildList(t, gobin, ".")
	for _, dir := range modules(t) {
		if dir == "." {
			continue
		}
		for path, v := range buildList(t, gobin, dir) {
			if rv, ok := rootList[path]; ok && rv != v {
				t.Errorf("%s selects %s %s, the root module %s: align them (go get %s@%s in %s)", dir, path, v, rv, path, rv, dir)
			}
		}
	}
}

// buildList is the modules that provide the packages the module in dir
// builds, its tests' included (`go list -deps -test`): module path →
// version, without the repository's own modules. Modules in the graph that
// provide no built package cost nothing and are left out.
func buildList(t *testing.T, gobin, dir string) map[string]string {
	t.Helper()
	cmd := exec.Command(gobin, "list", "-deps", "-test", "-tags", "e2e", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}", "./...")
	cmd.Dir = filepath.Join(root, dir)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -test in %s: %v", dir, err)
	}
	list := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, v, _ := strings.Cut(sc.Text(), " ")
		if v == "" || strings.HasPrefix(path, rootModule) {
			continue
		}
		list[path] = v
	}
	return list
}
