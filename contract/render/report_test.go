package render

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/internal/golden"
)

func TestRulesDoc(t *testing.T) {
	want := RulesMarkdown()
	golden.Check(t, filepath.Join("..", "..", "docs", "rules.md"), []byte(want), "go generate ./contract/render")
	for _, r := range contract.Rules() {
		if !strings.Contains(want, "| `"+string(r.ID)+"` |") {
			t.Errorf("rule %s missing from docs", r.ID)
		}
	}
}

// diffTools diffs two one-tool listings.
func diffTools(t *testing.T, old, new string) *contract.Report {
	t.Helper()
	read := func(tool string) *contract.Document {
		d, err := contract.ReadDocument(contract.ReadOptions{}, []byte(`{"tools":[`+tool+`]}`))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	return contract.DiffDocuments(read(old), read(new), nil)
}

// The formats escape what a hostile server writes: terminal escapes, bidi
// overrides, zero-width characters, Markdown and HTML.
func TestFormatsAreSanitized(t *testing.T) {
	r := diffTools(t, `{"name":"evil\u202etool\u001b[31m","description":"safe"}`,
		`{"name":"evil\u202etool\u001b[31m","description":"<script>x</script> | pipe `+"`code`"+` \u200b [link](http://x) \n\u0007"}`)
	if r.Empty() {
		t.Fatal("no change")
	}
	for format, out := range map[string]string{"text": Text(r), "markdown": Markdown(r)} {
		for _, c := range out {
			if c != '\n' && (unicode.IsControl(c) || unicode.Is(unicode.Cf, c)) {
				t.Errorf("%s output contains %U: %q", format, c, out)
				break
			}
		}
		if !strings.Contains(out, `evil\u{202E}tool\u{1B}[31m`) {
			t.Errorf("%s: name not escaped visibly: %q", format, out)
		}
	}
	for _, line := range strings.Split(Markdown(r), "\n") {
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

func TestText(t *testing.T) {
	r := diffTools(t, `{"name":"search","inputSchema":{"type":"object","properties":{"mode":{"enum":["fast","slow"]}}}}`,
		`{"name":"search","inputSchema":{"type":"object","properties":{"mode":{"enum":["fast"]}}}}`)
	text := Text(r)
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
	if Text(&contract.Report{}) != "mcpdrift: no changes\n" || !strings.Contains(Markdown(&contract.Report{}), "No changes") {
		t.Error("empty report")
	}
}

func TestMarkdownLongValues(t *testing.T) {
	long := strings.Repeat("word ", 40)
	md := Markdown(diffTools(t, `{"name":"t","description":"short"}`, `{"name":"t","description":"`+long+"```"+`"}`))
	if !strings.Contains(md, "<details>") || !strings.Contains(md, "````text\n") {
		t.Errorf("long value not in a details block with a longer fence:\n%s", md)
	}
}
