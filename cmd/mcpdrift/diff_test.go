package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

const fixtures = "../../testdata/fixtures/server-everything/"

type jsonReport struct {
	Severity string         `json:"severity"`
	Summary  map[string]int `json:"summary"`
	Changes  []struct {
		Rule, Severity, Subject, Name, Path, Message string
		Before, After                                json.RawMessage
	} `json:"changes"`
}

func TestDiffFixturesJSON(t *testing.T) {
	code, out, errOut := cli(t, "", "diff", "--format", "json", fixtures+"2025.11.25", fixtures+"2026.1.26")
	if code != 1 {
		t.Fatalf("exit %d (want 1: breaking drift), stderr %s", code, errOut)
	}
	var r jsonReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Severity != "breaking" || r.Summary["breaking"] == 0 || len(r.Summary) != 4 {
		t.Errorf("severity %s summary %v", r.Severity, r.Summary)
	}
	renames := 0
	for _, c := range r.Changes {
		if c.Rule == "tool.renamed" {
			renames++
			if c.Name == "add" && (string(c.Before) != `"add"` || string(c.After) != `"get-sum"`) {
				t.Errorf("rename add: %s → %s", c.Before, c.After)
			}
		}
	}
	if renames != 10 {
		t.Errorf("%d renames", renames)
	}
}

func TestDiffFailOn(t *testing.T) {
	old, new := fixtures+"2025.9.25", fixtures+"2025.11.25" // worst: warning
	for _, c := range []struct {
		failOn string
		code   int
	}{{"breaking", 0}, {"warning", 1}, {"compatible", 1}, {"info", 1}, {"none", 0}} {
		code, out, errOut := cli(t, "", "diff", "--fail-on", c.failOn, old, new)
		if code != c.code {
			t.Errorf("--fail-on %s: exit %d, want %d (%s)", c.failOn, code, c.code, errOut)
		}
		if !strings.HasPrefix(out, "mcpdrift: warning (0 breaking, 1 warning, 1 compatible, 0 info)\nstartElicitation: description changed; added 1 tool (zip)\n") {
			t.Errorf("text output %q", out)
		}
	}
	// No drift at all: exit 0 at any threshold.
	if code, out, _ := cli(t, "", "diff", "--fail-on", "info", old, old); code != 0 || out != "mcpdrift: no changes\n" {
		t.Errorf("self diff: %d %q", code, out)
	}
}

func TestDiffUsageAndInputErrors(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.json", `{"tools":[{"name":"a","name":"b"}]}`)
	garbage := writeFile(t, dir, "garbage.json", `not json`)
	ok := fixtures + "2025.7.1/tools-list.json"
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"diff", ok}, exitUsage},
		{[]string{"diff", ok, ok, ok}, exitUsage},
		{[]string{"diff", "--format", "yaml", ok, ok}, exitUsage},
		{[]string{"diff", "--fail-on", "fatal", ok, ok}, exitUsage},
		{[]string{"diff", "--policy", "paranoid", ok, ok}, exitUsage},
		{[]string{"diff", "--bogus", ok, ok}, exitUsage},
		{[]string{"diff", bad, ok}, exitInput},
		{[]string{"diff", ok, garbage}, exitInput},
		{[]string{"diff", ok, filepath.Join(dir, "missing.json")}, exitInput},
		{[]string{"diff", "-", "-"}, exitUsage},
		{[]string{"diff", "--config", filepath.Join(dir, "missing.yaml"), ok, ok}, exitUsage},
	} {
		if code, _, errOut := cli(t, "", c.args...); code != c.code || errOut == "" {
			t.Errorf("%v: exit %d, want %d, stderr %q", c.args, code, c.code, errOut)
		}
	}
}

func TestDiffStdinAndMarkdown(t *testing.T) {
	old := `{"tools":[{"name":"search","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}]}`
	new := `{"tools":[{"name":"search","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"filters":{"type":"object"}},"required":["filters"]}}]}`
	dir := t.TempDir()
	code, out, _ := cli(t, new, "diff", "--format", "markdown", writeFile(t, dir, "old.json", old), "-")
	if code != 1 || !strings.Contains(out, "### MCP contract drift: breaking") || !strings.Contains(out, "> search: required param filters added") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestDiffPolicyConfig(t *testing.T) {
	dir := t.TempDir()
	old := writeFile(t, dir, "old.json", `{"tools":[{"name":"a","description":"token 1","inputSchema":{"type":"object","properties":{"x":{}},"additionalProperties":false}}]}`)
	new := writeFile(t, dir, "new.json", `{"tools":[{"name":"a","description":"token 2","inputSchema":{"type":"object","properties":{},"additionalProperties":false}}]}`)
	// default: breaking (property removed from a closed model)
	if code, _, _ := cli(t, "", "diff", old, new); code != 1 {
		t.Errorf("default policy: exit %d", code)
	}
	// lenient: that removal is a warning; the description change a warning
	if code, _, _ := cli(t, "", "diff", "--policy", "lenient", old, new); code != 0 {
		t.Errorf("lenient: exit %d", code)
	}
	yamlCfg := writeFile(t, dir, "policy.yaml", `
base: lenient
severities:
  input.property.removed_closed: info
ignore:
  - name: "a"
    path: /description
`)
	code, out, errOut := cli(t, "", "diff", "--config", yamlCfg, "--fail-on", "compatible", "--format", "json", old, new)
	var r jsonReport
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Severity != "info" || len(r.Changes) != 1 {
		t.Errorf("yaml config: exit %d %s %s", code, out, errOut)
	}
	// --policy replaces the file's base; JSON config works too.
	jsonCfg := writeFile(t, dir, "policy.json", `{"base":"lenient","severities":{"tool.description.*":"breaking"}}`)
	if code, _, _ := cli(t, "", "diff", "--config", jsonCfg, old, new); code != 1 {
		t.Errorf("json config: exit %d", code)
	}
	if code, out, _ := cli(t, "", "diff", "--config", jsonCfg, "--policy", "strict", "--format", "json", old, new); code != 1 || !strings.Contains(out, `"severity":"breaking"`) {
		t.Errorf("--policy over config: exit %d %s", code, out)
	}
	for name, content := range map[string]string{
		"typo.yaml":    "severities:\n  tool.remove: info\n",
		"unknown.yaml": "bsae: strict\n",
		"sev.yaml":     "severities:\n  tool.removed: fatal\n",
		"empty.yaml":   "ignore:\n  - {}\n",
	} {
		f := writeFile(t, dir, name, content)
		if code, _, errOut := cli(t, "", "diff", "--config", f, old, new); code != 2 || !strings.Contains(errOut, name) {
			t.Errorf("%s: exit %d, stderr %q", name, code, errOut)
		}
	}
}
