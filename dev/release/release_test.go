package release

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// TestRepositoryOrder: the repository's own modules, each after the
// siblings it requires (its go.sum names their hashes).
func TestRepositoryOrder(t *testing.T) {
	mods, err := findModules("../..")
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, m := range mods {
		pos[m.Path] = i
	}
	for _, want := range []string{RootModule, RootModule + "/interceptor/gosdk", RootModule + "/contract"} {
		if _, ok := pos[want]; !ok {
			t.Errorf("found %d modules, not %s", len(mods), want)
		}
	}
	for _, m := range mods {
		if strings.HasPrefix(m.Dir, "tools") {
			t.Errorf("%s is a tools module, never released", m.Dir)
		}
		for _, s := range m.Siblings {
			if pos[s] > pos[m.Path] {
				t.Errorf("%s is released before %s, which it requires", m.Path, s)
			}
		}
	}
}

func TestCycleRefused(t *testing.T) {
	a := &repoModule{Dir: "a", Path: RootModule + "/a", Siblings: []string{RootModule + "/b"}}
	b := &repoModule{Dir: "b", Path: RootModule + "/b", Siblings: []string{RootModule + "/a"}}
	_, err := dependencyOrder([]*repoModule{a, b}, map[string]*repoModule{a.Path: a, b.Path: b})
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("dependencyOrder of a cycle: %v, want a cycle error", err)
	}
}

func TestPinSiblings(t *testing.T) {
	const in = `module github.com/mcpdrift/mcpdrift/proxy

go 1.26.0

require (
	github.com/mcpdrift/mcpdrift/contract v0.0.0
	golang.org/x/sync v0.24.0
)

require github.com/mcpdrift/mcpdrift/semconv v0.0.0 // indirect

// The repository's other modules, from this checkout (see CONTRIBUTING.md).
replace (
	github.com/mcpdrift/mcpdrift/contract => ../contract
	github.com/mcpdrift/mcpdrift/semconv => ../semconv
)

replace example.com/other => example.com/fork v1.0.0
`
	f, err := modfile.Parse("go.mod", []byte(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &repoModule{Dir: "proxy", Path: RootModule + "/proxy", File: f}
	if err := pinSiblings(m, "v0.3.0"); err != nil {
		t.Fatal(err)
	}
	out, err := f.Format()
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{"github.com/mcpdrift/mcpdrift/contract v0.3.0\n", "github.com/mcpdrift/mcpdrift/semconv v0.3.0 // indirect", "golang.org/x/sync v0.24.0", "replace example.com/other => example.com/fork v1.0.0"} {
		if !strings.Contains(got, want) {
			t.Errorf("pinned go.mod has no %q:\n%s", want, got)
		}
	}
	for _, gone := range []string{"=> ../", "v0.0.0", "repository's other modules"} {
		if strings.Contains(got, gone) {
			t.Errorf("pinned go.mod still has %q:\n%s", gone, got)
		}
	}
}

// TestWriteModule: what the proxy holds is what the go command checks: a
// valid zip of the module without its nested modules, the go.mod, the
// info, and a sorted list of versions.
func TestWriteModule(t *testing.T) {
	dir, proxy := t.TempDir(), t.TempDir()
	for name, content := range map[string]string{
		"go.mod":        "module github.com/mcpdrift/mcpdrift/Demo\n\ngo 1.26.0\n",
		"demo.go":       "package demo\n",
		"sub/go.mod":    "module github.com/mcpdrift/mcpdrift/Demo/sub\n",
		"sub/nested.go": "package sub\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	path := RootModule + "/Demo"
	for _, v := range []string{"v0.10.0", "v0.2.0", "v0.10.0"} {
		if err := writeModule(proxy, path, v, dir, at); err != nil {
			t.Fatal(err)
		}
	}
	vdir := filepath.Join(proxy, "github.com", "mcpdrift", "mcpdrift", "!demo", "@v") // upper case escaped
	list, err := os.ReadFile(filepath.Join(vdir, "list"))
	if err != nil {
		t.Fatal(err)
	}
	if string(list) != "v0.2.0\nv0.10.0\n" {
		t.Errorf("list = %q, want v0.2.0 then v0.10.0, once each", list)
	}
	cf, err := modzip.CheckZip(module.Version{Path: path, Version: "v0.10.0"}, filepath.Join(vdir, "v0.10.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range cf.Valid {
		files = append(files, strings.TrimPrefix(f, path+"@v0.10.0/"))
	}
	slices.Sort(files)
	if !slices.Equal(files, []string{"demo.go", "go.mod"}) {
		t.Errorf("zip holds %v, want demo.go and go.mod (not the nested module)", files)
	}
	info, err := os.ReadFile(filepath.Join(vdir, "v0.10.0.info"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"Version":"v0.10.0","Time":"2026-12-05T12:00:00Z"}`; string(info) != want {
		t.Errorf("info = %s, want %s", info, want)
	}
}

func TestCutRefuses(t *testing.T) {
	proxy := t.TempDir()
	for _, v := range []string{"0.1.0", "v0.1", "v2.0.0", "v0.1.0+meta"} {
		if _, err := Cut(context.Background(), Options{Repo: t.TempDir(), Version: v, Proxy: proxy}); err == nil {
			t.Errorf("Cut accepted version %q", v)
		}
	}
	if _, err := Cut(context.Background(), Options{Repo: t.TempDir(), Version: "v0.1.0", Proxy: "relative"}); err == nil {
		t.Error("Cut accepted a relative proxy directory")
	}
	// An untracked file would end up in a module zip but not in the tag.
	repo := t.TempDir()
	git := gitIn(context.Background(), repo)
	if _, err := git("init", "-q"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "stray.go"), []byte("package stray\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Cut(context.Background(), Options{Repo: repo, Version: "v0.1.0", Proxy: proxy})
	if err == nil || !strings.Contains(err.Error(), "stray.go") {
		t.Errorf("Cut in a checkout with an untracked file: %v, want it refused, naming the file", err)
	}
}
