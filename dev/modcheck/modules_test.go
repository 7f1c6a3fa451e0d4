package modcheck

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

const (
	root       = "../.."
	rootModule = "github.com/mcpdrift/mcpdrift"
)

// notProduct are module directories that pin Go tools (ocb, mdatagen,
// staticcheck, Jaeger, Helm's renderer): they are built on their own, never
// in the workspace.
var notProduct = []string{"tools", "tools/jaeger", "tools/helmtemplate"}

// agentSide are the modules an agent may import, and what they must never
// pull: the Collector, contrib, or the root module (which holds both).
var agentSide = []string{"contract", "semconv", "internal/mcpwire", "interceptor", "interceptor/gosdk", "interceptor/mcpgo", "proxy"}

// collector matches a Collector or contrib module or package path.
const collector = `^(go\.opentelemetry\.io/collector|github\.com/open-telemetry/opentelemetry-collector-contrib)(/|$)`

var forbidden = regexp.MustCompile(collector + `|^` + regexp.QuoteMeta(rootModule) + `$`)

// goMod is the part of `go mod edit -json` these tests read.
type goMod struct {
	Module  struct{ Path string }
	Require []struct {
		Path    string
		Version string
	}
	Replace []struct {
		Old struct{ Path string }
		New struct{ Path, Version string }
	}
}

func goTool(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		testservers.SkipLoudly(t, "no go toolchain on PATH")
	}
	return gobin
}

// modules returns the directories (relative to the repository root, "."
// for the root) of every go.mod of the product.
func modules(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "_build" || d.Name() == "testdata" || d.Name() == "node_modules" || slices.Contains(notProduct, rel)) {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" {
			dirs = append(dirs, filepath.Dir(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(dirs)
	return dirs
}

func readGoMod(t *testing.T, gobin, dir string) goMod {
	t.Helper()
	cmd := exec.Command(gobin, "mod", "edit", "-json")
	cmd.Dir = filepath.Join(root, dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod edit -json in %s: %v", dir, err)
	}
	var m goMod
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// workModules returns the directories go.work uses, sorted.
func workModules(t *testing.T, gobin string) []string {
	t.Helper()
	cmd := exec.Command(gobin, "work", "edit", "-json", "go.work")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go work edit -json: %v", err)
	}
	var work struct{ Use []struct{ DiskPath string } }
	if err := json.Unmarshal(out, &work); err != nil {
		t.Fatal(err)
	}
	var used []string
	for _, u := range work.Use {
		used = append(used, filepath.Clean(u.DiskPath))
	}
	slices.Sort(used)
	return used
}

// makeModules returns the Makefile's MODULES, sorted.
func makeModules(t *testing.T) []string {
	t.Helper()
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^MODULES\s*:=\s*(.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no MODULES")
	}
	listed := strings.Fields(string(m[1]))
	slices.Sort(listed)
	return listed
}

// TestModulesListedEverywhere: a module missing from go.work is invisible to
// editors; one missing from MODULES is never tested or linted.
func TestModulesListedEverywhere(t *testing.T) {
	gobin := goTool(t)
	want := modules(t)
	if !slices.Contains(want, ".") || !slices.Contains(want, "interceptor/gosdk") {
		t.Fatalf("found modules %v: the walk is broken", want)
	}
	if used := workModules(t, gobin); !slices.Equal(used, want) {
		t.Errorf("go.work uses %v, want the repository's modules %v", used, want)
	}
	if listed := makeModules(t); !slices.Equal(listed, want) {
		t.Errorf("Makefile MODULES = %v, want %v", listed, want)
	}
	for _, dir := range agentSide {
		if !slices.Contains(want, dir) {
			t.Errorf("agent-side module %s has no go.mod", dir)
		}
	}
}

// TestSiblingsReplaced: every module requires its siblings at v0.0.0 with a
// replace to their directory, so each builds on its own go.mod (make, CI and
// ocb set GOWORK=off), and no agent-side module requires the root module or
// any Collector module, even for its tests.
func TestSiblingsReplaced(t *testing.T) {
	gobin := goTool(t)
	dirs := modules(t)
	for _, dir := range dirs {
		m := readGoMod(t, gobin, dir)
		if want := modulePath(dir); m.Module.Path != want {
			t.Errorf("%s/go.mod: module %s, want %s", dir, m.Module.Path, want)
		}
		replaced := map[string]string{}
		for _, r := range m.Replace {
			replaced[r.Old.Path] = r.New.Path
		}
		for _, r := range m.Require {
			if slices.Contains(agentSide, dir) && forbidden.MatchString(r.Path) {
				t.Errorf("%s/go.mod requires %s: agent-side modules must not pull the Collector", dir, r.Path)
			}
			sib, ok := strings.CutPrefix(r.Path, rootModule+"/")
			if !ok {
				continue
			}
			if !slices.Contains(dirs, sib) {
				t.Errorf("%s/go.mod requires %s, which is no module of the repository", dir, r.Path)
				continue
			}
			want, _ := filepath.Rel(filepath.Join(root, dir), filepath.Join(root, sib))
			if got := replaced[r.Path]; got == "" || filepath.Clean(got) != want {
				t.Errorf("%s/go.mod: replace %s => %q, want => %s", dir, r.Path, got, want)
			}
		}
	}
}

// devTooling reports whether dir (relative to the repository root) is a
// development module: test helpers and the tests that need them. Every other
// module of the product ships.
func devTooling(dir string) bool { return dir == "dev" || strings.HasPrefix(dir, "dev/") }

// TestShippedModulesRequireNoDevModule: a user who requires a shipped module
// gets its go.mod's requirements in their module graph, test-only or not, so
// no shipped module may require a module under dev/: tests that need the
// shared helpers live in dev/integration instead.
func TestShippedModulesRequireNoDevModule(t *testing.T) {
	gobin := goTool(t)
	for _, dir := range modules(t) {
		if devTooling(dir) {
			continue
		}
		var dev []string
		for _, r := range readGoMod(t, gobin, dir).Require {
			if sib, ok := strings.CutPrefix(r.Path, rootModule+"/"); ok && devTooling(sib) {
				dev = append(dev, r.Path)
			}
		}
		if len(dev) > 0 {
			t.Errorf("%s/go.mod requires %s: a shipped module must not require a dev module, even for its tests (move the tests to dev/integration)", dir, strings.Join(dev, ", "))
		}
	}
}

// TestTestkitImportsStandardLibraryOnly: dev/testkit's packages belong to
// the root module, and dev/integration requires the root module for them.
// Importing nothing but the standard library keeps it that way in effect:
// a test that imports testkit compiles no Collector package, nor anything
// else of the root's, into the agent-side modules' tests.
func TestTestkitImportsStandardLibraryOnly(t *testing.T) {
	gobin := goTool(t)
	cmd := exec.Command(gobin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./dev/testkit/...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./dev/testkit/...: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) == 0 {
		t.Fatal("go list -deps ./dev/testkit/... listed no package of ours: the listing is broken")
	}
	for _, pkg := range pkgs {
		if !strings.HasPrefix(pkg, rootModule+"/dev/testkit/") {
			t.Errorf("dev/testkit depends on %s: it must import the standard library only", pkg)
		}
	}
}

// TestManifestsReplaceSiblings: ocb builds its own module, which ignores the
// root go.mod's replaces; each manifest must replace every sibling the root
// requires, relative to its output_path.
func TestManifestsReplaceSiblings(t *testing.T) {
	gobin := goTool(t)
	var siblings []string
	for _, r := range readGoMod(t, gobin, ".").Require {
		if sib, ok := strings.CutPrefix(r.Path, rootModule+"/"); ok {
			siblings = append(siblings, sib)
		}
	}
	for _, manifest := range []string{"builder-config.yaml", "docs/examples/builder-extras.yaml"} {
		b, err := os.ReadFile(filepath.Join(root, manifest))
		if err != nil {
			t.Fatal(err)
		}
		for _, sib := range siblings {
			line := "- " + rootModule + "/" + sib + " => ../../" + sib + "\n"
			if !strings.Contains(string(b), line) {
				t.Errorf("%s: replaces has no %q", manifest, strings.TrimSpace(line))
			}
		}
	}
}

// TestAgentBuildList builds a fresh agent module, outside the repository,
// that imports each interceptor front-end with the repository's modules
// replaced from this checkout, and checks its build list (go list -m all):
// no Collector module, no contrib module, not the root module.
func TestAgentBuildList(t *testing.T) {
	gobin := goTool(t)
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var gomod, sums strings.Builder
	gomod.WriteString("module example.com/agent\n\ngo 1.26.0\n\nrequire (\n")
	for _, m := range []string{"interceptor/gosdk", "interceptor/mcpgo", "proxy"} {
		gomod.WriteString("\t" + modulePath(m) + " v0.0.0\n")
	}
	gomod.WriteString(")\n\nreplace (\n")
	for _, m := range agentSide {
		gomod.WriteString("\t" + modulePath(m) + " => " + filepath.Join(abs, m) + "\n")
		if b, err := os.ReadFile(filepath.Join(abs, m, "go.sum")); err == nil {
			sums.Write(b)
		}
	}
	gomod.WriteString(")\n")
	main := `package main

import (
	_ "github.com/mcpdrift/mcpdrift/interceptor/gosdk"
	_ "github.com/mcpdrift/mcpdrift/interceptor/httptap"
	_ "github.com/mcpdrift/mcpdrift/interceptor/mcpgo"
	_ "github.com/mcpdrift/mcpdrift/interceptor/stdiotap"
)

func main() {}
`
	for name, content := range map[string]string{"go.mod": gomod.String(), "go.sum": sums.String(), "main.go": main} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(gobin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("mod", "tidy")
	run("build", "./...")
	list := strings.Fields(run("list", "-m", "-f", "{{.Path}}", "all"))
	for _, m := range list {
		if forbidden.MatchString(m) {
			t.Errorf("an agent importing the interceptor front-ends has %s in its build list", m)
		}
	}
	t.Logf("an agent importing interceptor/gosdk, mcpgo, httptap and stdiotap has %d modules in its build list", len(list))
}

// TestCLILinksNoCollector: the mcpdrift CLI talks to the control plane over
// HTTP with the wire types of package apiwire; importing anything that
// imports the Collector (the extension, controlplane's views) would link
// dozens of Collector packages into a binary that runs none of them.
func TestCLILinksNoCollector(t *testing.T) {
	gobin := goTool(t)
	cmd := exec.Command(gobin, "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./cmd/mcpdrift")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/mcpdrift: %v", err)
	}
	pkgs := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(pkgs) < 50 {
		t.Fatalf("go list -deps ./cmd/mcpdrift listed %d packages: the listing is broken", len(pkgs))
	}
	isCollector := regexp.MustCompile(collector)
	for _, line := range pkgs {
		pkg, imports, _ := strings.Cut(line, " ")
		if isCollector.MatchString(pkg) {
			continue // reported at its importer outside the Collector
		}
		for _, imp := range strings.Fields(imports) {
			if isCollector.MatchString(imp) {
				t.Errorf("the CLI links the Collector: %s imports %s", pkg, imp)
			}
		}
	}
}

func modulePath(dir string) string {
	if dir == "." {
		return rootModule
	}
	return rootModule + "/" + filepath.ToSlash(dir)
}
