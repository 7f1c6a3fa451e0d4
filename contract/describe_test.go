package contract

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

// Every rule of the table is complete: docs text, message and brief
// templates, a severity (docs/rules.md is checked in package render).
func TestRulesComplete(t *testing.T) {
	for _, r := range Rules() {
		if r.When == "" || r.message == "" || r.brief == "" || r.Severity == None {
			t.Errorf("rule %s is incomplete: %+v", r.ID, r)
		}
	}
}

// hostile is a report whose server text carries terminal escapes, bidi
// overrides, zero-width characters and Markdown/HTML.
func hostile(t *testing.T) *Report {
	name := "evil\u202etool\x1b[31m"
	old := snapshotOf(t, snapSpec{tools: []string{`{"name":` + string(jsonString(name)) + `,"description":"safe"}`}})
	new := snapshotOf(t, snapSpec{tools: []string{`{"name":` + string(jsonString(name)) + `,"description":"<script>x</script> | pipe ` + "`code`" + ` \u200b [link](http://x) \n\u0007"}`}})
	return record(t, Diff(old, new, nil))
}

func assertNoInvisible(t *testing.T, format, s string) {
	t.Helper()
	for _, r := range s {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
			t.Errorf("%s output contains %U: %q", format, r, s)
			return
		}
	}
}

func TestDescriptionsAreSanitized(t *testing.T) {
	r := hostile(t)
	if r.Empty() {
		t.Fatal("no change")
	}
	out := r.OneLine()
	assertNoInvisible(t, "one-line", out)
	if !strings.Contains(out, `evil\u{202E}tool\u{1B}[31m`) {
		t.Errorf("one-line: name not escaped visibly: %q", out)
	}
	for _, c := range r.Changes {
		assertNoInvisible(t, "message", c.Message)
		assertNoInvisible(t, "brief", c.Brief())
	}
}

func TestReportJSON(t *testing.T) {
	r := diffTools(t, `{"name":"t","inputSchema":{"type":"object","properties":{"a":{"type":"integer"}}}}`,
		`{"name":"t","title":"T","inputSchema":{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}}`, nil)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Severity string         `json:"severity"`
		Summary  map[string]int `json:"summary"`
		Changes  []map[string]json.RawMessage
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Severity != "breaking" || out.Summary["breaking"] != 1 || out.Summary["compatible"] != 1 || out.Summary["info"] != 1 || out.Summary["warning"] != 0 || len(out.Summary) != 4 {
		t.Errorf("%s", b)
	}
	for _, c := range out.Changes {
		if len(c) != 8 {
			t.Errorf("change members: %v", c)
		}
		for _, k := range []string{"rule", "severity", "subject", "name", "path", "before", "after", "message"} {
			if _, ok := c[k]; !ok {
				t.Errorf("missing %s in %s", k, b)
			}
		}
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || len(back.Changes) != 3 || back.Worst() != Breaking {
		t.Errorf("round trip: %v %+v", err, back)
	}
	// Decoded changes have no brief: the one line falls back to messages.
	if !strings.Contains(back.OneLine(), "will now get a validation error") {
		t.Errorf("one line of decoded report: %q", back.OneLine())
	}
	empty, _ := json.Marshal(&Report{})
	if string(empty) != `{"severity":"none","summary":{"breaking":0,"warning":0,"compatible":0,"info":0},"changes":[]}` {
		t.Errorf("empty: %s", empty)
	}
}
