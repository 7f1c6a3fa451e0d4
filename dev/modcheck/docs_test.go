package modcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docModules reads the module list a page shows: section is the text that
// starts it, until stops it; item matches one module in it, its first group
// the directory ("" or "the root" for the root module).
func docModules(t *testing.T, page, section, until string, item *regexp.Regexp) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	i := strings.Index(text, section)
	if i < 0 {
		t.Fatalf("%s has no %q", page, section)
	}
	text = text[i+len(section):]
	if j := strings.Index(text, until); j >= 0 {
		text = text[:j]
	}
	var dirs []string
	for _, m := range item.FindAllStringSubmatch(text, -1) {
		dir := strings.Trim(m[1], "`/")
		if dir == "" || dir == "the root" {
			dir = "."
		}
		if !slices.Contains(notProduct, dir) && !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
	}
	slices.Sort(dirs)
	return dirs
}

// TestDocsListTheModules: CONTRIBUTING.md, docs/design.md and README.md's
// layout paragraph list the modules go.work and the Makefile's MODULES
// build, no more and no fewer.
func TestDocsListTheModules(t *testing.T) {
	want := workModules(t, goTool(t))
	if mk := makeModules(t); !slices.Equal(mk, want) {
		t.Fatalf("go.work uses %v, the Makefile's MODULES are %v (TestModulesListedEverywhere)", want, mk)
	}
	for _, c := range []struct {
		page, section, until string
		item                 *regexp.Regexp
	}{
		// "contract/go.mod   the pure core…", one module per line of the block.
		{"CONTRIBUTING.md", "## Modules", "\n```\n\n", regexp.MustCompile(`(?m)^(\S*?)/?go\.mod,?\s`)},
		// "| `…/contract` | … |", one row per module, two in one cell.
		{"docs/design.md", "| module | holds | requires |", "\n\n", regexp.MustCompile("`(?:github\\.com/mcpdrift/mcpdrift|…)/?([^`]*)`")},
		// "The Go modules, each with its own `go.mod`: the root, `contract/`, …".
		{"README.md", "The Go modules, each with its own `go.mod`:", ". ", regexp.MustCompile("(the root|`[^`]+/`)")},
	} {
		if got := docModules(t, c.page, c.section, c.until, c.item); !slices.Equal(got, want) {
			t.Errorf("%s lists the modules %v; go.work and the Makefile have %v", c.page, got, want)
		}
	}
}
