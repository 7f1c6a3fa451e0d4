package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpdrift/mcpdrift/contract/witness"
)

// validateSARIF validates a log against the published SARIF 2.1.0 schema
// (testdata/sarif-schema-2.1.0.json, from oasis-tcs/sarif-spec).
func validateSARIF(t *testing.T, out string) map[string]any {
	t.Helper()
	schema, err := os.ReadFile("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	sch, err := witness.Compile(schema, "urn:sarif-2.1.0", witness.CompileOptions{AssertFormat: true})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(out)))
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if err := sch.Validate(doc); err != nil {
		t.Fatalf("not valid SARIF 2.1.0: %v", err)
	}
	return doc.(map[string]any)
}

// TestDiffSARIF: one result per change, valid SARIF 2.1.0, located on the
// line of the definition (a removed tool in OLD, the rest in NEW), with the
// witness in the message and the properties.
func TestDiffSARIF(t *testing.T) {
	old, new := fixtures+"2025.11.25", fixtures+"2026.1.26"
	code, out, errOut := cli(t, "", "diff", "--format", "sarif", old, new)
	if code != 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	log := validateSARIF(t, out)
	_, jsonOut, _ := cli(t, "", "diff", "--format", "json", old, new)
	var r jsonReport
	if err := json.Unmarshal([]byte(jsonOut), &r); err != nil {
		t.Fatal(err)
	}
	var sarif struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct{ ID string }
				}
			}
			Results []struct {
				RuleID, Level string
				Message       struct{ Text string }
				Locations     []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
				Properties struct {
					Name    string
					Witness *struct{ Arguments json.RawMessage }
				}
			}
		}
	}
	b, _ := json.Marshal(log)
	if err := json.Unmarshal(b, &sarif); err != nil {
		t.Fatal(err)
	}
	run := sarif.Runs[0]
	if len(run.Results) != len(r.Changes) {
		t.Fatalf("%d results for %d changes", len(run.Results), len(r.Changes))
	}
	lines := func(file string) []string {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(string(text), "\n")
	}
	for _, res := range run.Results {
		if res.Properties.Name == "" {
			continue
		}
		loc := res.Locations[0].PhysicalLocation
		wantDir := new
		if res.RuleID == "tool.removed" || res.RuleID == "tool.renamed" {
			wantDir = old
		}
		if filepath.Dir(filepath.FromSlash(loc.ArtifactLocation.URI)) != filepath.Clean(wantDir) {
			t.Errorf("%s %s in %s", res.RuleID, res.Properties.Name, loc.ArtifactLocation.URI)
			continue
		}
		if l := lines(filepath.FromSlash(loc.ArtifactLocation.URI)); loc.Region.StartLine < 1 || !strings.Contains(l[loc.Region.StartLine-1], `"`+res.Properties.Name+`"`) {
			t.Errorf("%s %s: line %d of %s does not name it", res.RuleID, res.Properties.Name, loc.Region.StartLine, loc.ArtifactLocation.URI)
		}
		if res.RuleID == "input.enum.added" {
			if res.Level != "error" || res.Properties.Witness == nil || string(res.Properties.Witness.Arguments) != `{"location":"example"}` ||
				!strings.Contains(res.Message.Text, `Witness: arguments {"location":"example"}`) {
				t.Errorf("enum change: %+v", res)
			}
		}
	}
}

// TestDiffGitHubAnnotations: breaking, warning and compatible changes are
// annotations on the definition's line; info is left out; server text
// cannot start a line of its own.
func TestDiffGitHubAnnotations(t *testing.T) {
	dir := t.TempDir()
	// The tool's name tries to end the annotation and start a command.
	name := `se%0A::error::arch`
	old := writeFile(t, dir, "old.json", `{"tools":[{"name":"`+name+`","description":"Search.","inputSchema":{"type":"object","properties":{"mode":{"enum":["fast","slow"]}}}}]}`)
	new := writeFile(t, dir, "new.json", "{\"tools\":[\n{\"name\":\""+name+"\",\"title\":\"S\",\"description\":\"Search!\",\n\"inputSchema\":{\"type\":\"object\",\"properties\":{\"mode\":{\"enum\":[\"fast\"]}}}}]}")
	code, out, errOut := cli(t, "", "diff", "--format", "github", old, new)
	if code != 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var errs, warns int
	for _, l := range lines[:len(lines)-1] {
		switch {
		case strings.HasPrefix(l, "::error "):
			errs++
		case strings.HasPrefix(l, "::warning "):
			warns++
		default:
			t.Errorf("unexpected line %q", l)
		}
		if !strings.Contains(l, "file="+filepath.ToSlash(new)+",line=2::") {
			t.Errorf("not on line 2 of NEW: %q", l)
		}
	}
	if errs != 1 || warns != 1 || strings.Contains(out, "title.changed") {
		t.Errorf("want one error (enum) and one warning (description), no info:\n%s", out)
	}
	if !regexp.MustCompile(`Witness: arguments \{"mode":"slow"\}`).MatchString(out) || !strings.Contains(out, `tool se%250A::error::arch:`) {
		t.Errorf("witness or escaping missing:\n%s", out)
	}
	if !strings.HasPrefix(lines[len(lines)-1], "mcpdrift: breaking (1 breaking, 1 warning, 0 compatible, 1 info)") {
		t.Errorf("summary %q", lines[len(lines)-1])
	}
}

// TestDiffWitnessFlag: JSON carries witnesses; --witness=false drops them.
func TestDiffWitnessFlag(t *testing.T) {
	old, new := fixtures+"2025.11.25", fixtures+"2026.1.26"
	for _, c := range []struct {
		flag string
		want bool
	}{{"--witness=true", true}, {"--witness=false", false}} {
		_, out, _ := cli(t, "", "diff", "--format", "json", c.flag, old, new)
		var r struct {
			Changes []struct {
				Rule    string
				Witness *struct {
					Arguments json.RawMessage
					Old, New  string
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		for _, ch := range r.Changes {
			if ch.Rule != "input.enum.added" {
				continue
			}
			if got := ch.Witness != nil; got != c.want {
				t.Errorf("%s: witness %v", c.flag, got)
			}
			if c.want && (ch.Witness.Old != "valid" || !strings.HasPrefix(ch.Witness.New, "/location: value must be one of")) {
				t.Errorf("%+v", ch.Witness)
			}
		}
	}
	if code, _, errOut := cli(t, "", "diff", "--format", "xml", old, new); code != 2 || !strings.Contains(errOut, "sarif") {
		t.Errorf("bad format: exit %d %s", code, errOut)
	}
}

// TestDiffOutputs: --output writes other renderings of the same report.
func TestDiffOutputs(t *testing.T) {
	dir := t.TempDir()
	md, sarif := filepath.Join(dir, "drift.md"), filepath.Join(dir, "drift.sarif")
	code, out, errOut := cli(t, "", "diff", "--format", "json", "--output", "markdown="+md, "--output", "sarif="+sarif, fixtures+"2025.11.25", fixtures+"2026.1.26")
	if code != 1 || !strings.HasPrefix(out, `{"severity":"breaking"`) {
		t.Fatalf("exit %d %s %s", code, out[:min(len(out), 80)], errOut)
	}
	b, err := os.ReadFile(md)
	if err != nil || !strings.Contains(string(b), "#### Witnesses") {
		t.Errorf("markdown: %v %.200s", err, b)
	}
	b, err = os.ReadFile(sarif)
	if err != nil {
		t.Fatal(err)
	}
	validateSARIF(t, string(b))
	for _, bad := range []string{"xml=out.xml", "markdown=", "drift.md"} {
		if code, _, errOut := cli(t, "", "diff", "--output", bad, fixtures+"2025.11.25", fixtures+"2026.1.26"); code != 2 || !strings.Contains(errOut, "FORMAT=FILE") {
			t.Errorf("--output %s: exit %d %s", bad, code, errOut)
		}
	}
}
