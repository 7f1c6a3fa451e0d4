// Package release cuts a release of every module of the repository at one
// version: at the release commit each module requires its siblings at that
// version with no replace, every module is tagged, and the modules are
// written as a file-based Go module proxy (GOPROXY=file://…) that the
// offline release test, or a mirror, serves.
package release

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// RootModule is the repository's root module path; every other module's path
// is it plus the module's directory.
const RootModule = "github.com/mcpdrift/mcpdrift"

// notModules are module directories that are not part of the product: the
// pinned Go tools are never required, tagged or released.
var notModules = []string{"tools", "tools/jaeger", "tools/helmtemplate"}

// repoModule is one go.mod of the repository.
type repoModule struct {
	Dir      string // relative to the repository root, "." for the root
	Path     string
	File     *modfile.File
	Siblings []string // module paths of the repository's modules it requires
}

// Tag is the module's tag for version v: "v0.1.0" for the root,
// "contract/v0.1.0" for the module in contract/.
func (m *repoModule) Tag(v string) string {
	if m.Dir == "." {
		return v
	}
	return filepath.ToSlash(m.Dir) + "/" + v
}

// findModules reads every go.mod of the product under repo, in an order in
// which each module comes after the siblings it requires.
func findModules(repo string) ([]*repoModule, error) {
	var mods []*repoModule
	err := filepath.WalkDir(repo, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repo, path)
		if d.IsDir() && rel != "." && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") ||
			d.Name() == "testdata" || d.Name() == "node_modules" || slices.Contains(notModules, filepath.ToSlash(rel))) {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "go.mod" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := modfile.Parse(path, data, nil)
		if err != nil {
			return err
		}
		m := &repoModule{Dir: filepath.Dir(rel), File: f}
		if f.Module != nil {
			m.Path = f.Module.Mod.Path
		}
		if want := modulePath(m.Dir); m.Path != want {
			return fmt.Errorf("%s: module %q, want %q", rel, m.Path, want)
		}
		mods = append(mods, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	byPath := map[string]*repoModule{}
	for _, m := range mods {
		byPath[m.Path] = m
	}
	for _, m := range mods {
		for _, r := range m.File.Require {
			if isOurs(r.Mod.Path) {
				if byPath[r.Mod.Path] == nil {
					return nil, fmt.Errorf("%s/go.mod requires %s, which is no module of the repository", m.Dir, r.Mod.Path)
				}
				m.Siblings = append(m.Siblings, r.Mod.Path)
			}
		}
	}
	return dependencyOrder(mods, byPath)
}

// dependencyOrder sorts modules so that each follows every sibling it
// requires (a module's go.sum names its siblings' hashes, so they are
// released first); ties go by directory, for a stable order.
func dependencyOrder(mods []*repoModule, byPath map[string]*repoModule) ([]*repoModule, error) {
	slices.SortFunc(mods, func(a, b *repoModule) int { return strings.Compare(a.Dir, b.Dir) })
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	var order []*repoModule
	var visit func(m *repoModule, chain []string) error
	visit = func(m *repoModule, chain []string) error {
		switch state[m.Path] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("the modules require each other in a cycle: %s", strings.Join(append(chain, m.Path), " -> "))
		}
		state[m.Path] = visiting
		sibs := slices.Sorted(slices.Values(m.Siblings))
		for _, s := range sibs {
			if err := visit(byPath[s], append(chain, m.Path)); err != nil {
				return err
			}
		}
		state[m.Path] = done
		order = append(order, m)
		return nil
	}
	for _, m := range mods {
		if err := visit(m, nil); err != nil {
			return nil, err
		}
	}
	return order, nil
}

func isOurs(path string) bool {
	return path == RootModule || strings.HasPrefix(path, RootModule+"/")
}

func modulePath(dir string) string {
	if dir == "." {
		return RootModule
	}
	return RootModule + "/" + filepath.ToSlash(dir)
}
