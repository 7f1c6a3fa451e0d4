package sbom

import (
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"
)

// An SBOM of the shape cyclonedx-gomod v1.10.0 wrote for make dist's
// otelcol-mcpdrift (trimmed): the root module, replaced by ../.., and a
// published module.
const collectorSBOM = `{
  "bomFormat": "CycloneDX",
  "specVersion": "1.6",
  "version": 1,
  "metadata": {"component": {"bom-ref": "pkg:golang/example.com/otelcol@v0.2.0?type=module", "name": "example.com/otelcol", "version": "v0.2.0"}},
  "components": [
    {"bom-ref": "pkg:golang/../..@(devel)?type=module", "type": "library", "name": "../..", "version": "(devel)",
     "purl": "pkg:golang/../..@(devel)?goarch=arm64&goos=linux&type=module"},
    {"bom-ref": "pkg:golang/../../contract@(devel)?type=module", "type": "library", "name": "../../contract", "version": "(devel)",
     "purl": "pkg:golang/../../contract@(devel)?goarch=arm64&goos=linux&type=module"},
    {"bom-ref": "pkg:golang/golang.org/x/sys@v0.40.0?type=module", "type": "library", "name": "golang.org/x/sys", "version": "v0.40.0",
     "purl": "pkg:golang/golang.org/x/sys@v0.40.0?goarch=arm64&goos=linux&type=module"}
  ],
  "dependencies": [
    {"ref": "pkg:golang/example.com/otelcol@v0.2.0?type=module",
     "dependsOn": ["pkg:golang/../..@(devel)?type=module", "pkg:golang/../../contract@(devel)?type=module", "pkg:golang/golang.org/x/sys@v0.40.0?type=module"]},
    {"ref": "pkg:golang/../..@(devel)?type=module"}
  ],
  "compositions": [{"aggregate": "unknown", "dependencies": ["pkg:golang/../..@(devel)?type=module"]}]
}`

func info(replaced ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{Deps: []*debug.Module{
		{Path: "golang.org/x/sys", Version: "v0.40.0"},
		// Replaced by a published module: not ours to rename.
		{Path: "example.com/fork", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/other", Version: "v1.0.1"}},
	}}
	for i := 0; i < len(replaced); i += 2 {
		bi.Deps = append(bi.Deps, &debug.Module{Path: replaced[i], Version: "v0.0.0", Replace: &debug.Module{Path: replaced[i+1], Version: "(devel)"}})
	}
	return bi
}

func TestFix(t *testing.T) {
	out, err := Fix([]byte(collectorSBOM), info("example.com/root", "../..", "example.com/root/contract", "../../contract"), "v0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "(devel)") || strings.Contains(string(out), "../") {
		t.Errorf("a directory or (devel) is left:\n%s", out)
	}
	var doc struct {
		Components []struct {
			Ref     string `json:"bom-ref"`
			Name    string
			Version string
			PURL    string
		}
		Dependencies []struct {
			Ref       string
			DependsOn []string
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg:golang/example.com/root@v0.2.0?type=module example.com/root v0.2.0 pkg:golang/example.com/root@v0.2.0?goarch=arm64&goos=linux&type=module",
		"pkg:golang/example.com/root/contract@v0.2.0?type=module example.com/root/contract v0.2.0 pkg:golang/example.com/root/contract@v0.2.0?goarch=arm64&goos=linux&type=module",
		"pkg:golang/golang.org/x/sys@v0.40.0?type=module golang.org/x/sys v0.40.0 pkg:golang/golang.org/x/sys@v0.40.0?goarch=arm64&goos=linux&type=module",
	}
	for i, c := range doc.Components {
		if got := strings.Join([]string{c.Ref, c.Name, c.Version, c.PURL}, " "); got != want[i] {
			t.Errorf("component %d:\n got %s\nwant %s", i, got, want[i])
		}
	}
	if d := doc.Dependencies; d[0].DependsOn[0] != "pkg:golang/example.com/root@v0.2.0?type=module" || d[1].Ref != d[0].DependsOn[0] {
		t.Errorf("the dependency graph still names the directories: %+v", d)
	}
	// The rewrite is deterministic (make dist's builds are compared byte for byte).
	again, err := Fix([]byte(collectorSBOM), info("example.com/root", "../..", "example.com/root/contract", "../../contract"), "v0.2.0")
	if err != nil || string(again) != string(out) {
		t.Errorf("a second rewrite differs (%v)", err)
	}
}

func TestFixRefuses(t *testing.T) {
	// ../../contract replaces nothing the binary records.
	if _, err := Fix([]byte(collectorSBOM), info("example.com/root", "../.."), "v0.2.0"); err == nil || !strings.Contains(err.Error(), `"../../contract"`) {
		t.Errorf("an unknown directory: %v", err)
	}
	if _, err := Fix([]byte(`{"bomFormat": "SPDX"}`), info(), "v0.2.0"); err == nil {
		t.Error("not CycloneDX: no error")
	}
	if _, err := Fix([]byte(`{`), info(), "v0.2.0"); err == nil {
		t.Error("not JSON: no error")
	}
}

func TestFixUnchanged(t *testing.T) {
	// A binary built at a release tag has no directory replacements: the
	// SBOM is left byte for byte.
	in := `{"bomFormat": "CycloneDX", "components": [{"name": "golang.org/x/sys", "version": "v0.40.0"}]}`
	out, err := Fix([]byte(in), info(), "v0.2.0")
	if err != nil || string(out) != in {
		t.Errorf("got %s, %v; want it unchanged", out, err)
	}
}
