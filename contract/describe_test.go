package contract

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

var update = flag.Bool("update", false, "rewrite generated files (docs/rules.md)")

func TestRulesDoc(t *testing.T) {
	path := filepath.Join("..", "docs", "rules.md")
	want := RulesMarkdown()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatal("docs/rules.md disagrees with the rule table; run: go generate ./contract")
	}
	for _, r := range Rules() {
		if !strings.Contains(want, "| `"+string(r.ID)+"` |") {
			t.Errorf("rule %s missing from docs", r.ID)
		}
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
	for format, out := range map[string]string{"one-line": r.OneLine(), "text": r.Text(), "markdown": r.Markdown()} {
		assertNoInvisible(t, format, out)
		if !strings.Contains(out, `evil\u{202E}tool\u{1B}[31m`) {
			t.Errorf("%s: name not escaped visibly: %q", format, out)
		}
	}
	for _, c := range r.Changes {
		assertNoInvisible(t, "message", c.Message)
	}
	md := r.Markdown()
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "> ") && strings.ContainsAny(line[2:], "<>") {
			t.Errorf("running text passes HTML: %q", line)
		}
		if strings.HasPrefix(line, "| ") && unescapedPipes(line) != 7 {
			t.Errorf("table row has %d cell separators: %q", unescapedPipes(line), line)
		}
		if strings.HasPrefix(line, "| breaking") && !strings.Contains(line, "`\"<script>") {
			t.Errorf("HTML from the server must only appear inside a code span: %q", line)
		}
	}
}

func unescapedPipes(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		if line[i] == '|' && (i == 0 || line[i-1] != '\\') {
			n++
		}
	}
	return n
}

func TestTextReport(t *testing.T) {
	r := diffTools(t, `{"name":"search","inputSchema":{"type":"object","properties":{"mode":{"enum":["fast","slow"]}}}}`,
		`{"name":"search","inputSchema":{"type":"object","properties":{"mode":{"enum":["fast"]}}}}`, nil)
	text := r.Text()
	for _, want := range []string{
		"mcpdrift: breaking (1 breaking, 0 warning, 0 compatible, 0 info)",
		"BREAKING\n  tool search: mode value \"slow\" removed  [input.enum.value_removed]",
		"agents passing \"slow\" as mode will now get a validation error from search",
		"path:   /inputSchema/properties/mode/enum",
		"BEFORE: \"slow\"", "AFTER:  (absent)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if (&Report{}).Text() != "mcpdrift: no changes\n" || !strings.Contains((&Report{}).Markdown(), "No changes") {
		t.Error("empty report")
	}
}

func TestMarkdownLongValues(t *testing.T) {
	long := strings.Repeat("word ", 40)
	r := diffTools(t, `{"name":"t","description":"short"}`, `{"name":"t","description":"`+long+"```"+`"}`, nil)
	md := r.Markdown()
	if !strings.Contains(md, "<details>") || !strings.Contains(md, "````text\n") {
		t.Errorf("long value not in a details block with a longer fence:\n%s", md)
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
