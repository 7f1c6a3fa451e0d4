package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/dev/testkit/vectors"
)

// cli runs the command in-process and returns exit code, stdout and stderr.
func cli(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHashVectorsThroughCLI(t *testing.T) {
	v := vectors.Load(t)
	dir := t.TempDir()
	for i, d := range v.Definitions {
		f := writeFile(t, dir, "def.json", d.Input)
		code, out, errOut := cli(t, "", "hash", "--definition", "--format", "json", f)
		var got struct{ Digest, Canonical string }
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Digest != d.Hash || got.Canonical != d.Canonical {
			t.Errorf("definition %d (%s): exit %d, %s %s", i, d.About, code, out, errOut)
		}
	}
	for i, s := range v.Sets {
		var files []string
		for j, p := range s.Pages {
			files = append(files, writeFile(t, dir, "page"+string(rune('a'+j))+".json", p))
		}
		code, out, errOut := cli(t, "", append([]string{"hash", "--format", "json"}, files...)...)
		var got map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
			t.Fatalf("set %d: exit %d %s", i, code, errOut)
		}
		set, _ := got["tools_set"].(string)
		if set == "" {
			set, _ = got["prompts_set"].(string)
		}
		if set != s.SetHash {
			t.Errorf("set %d (%s): %s, want %s", i, s.About, out, s.SetHash)
		}
		// Text format: the recipe's lines, then the set line.
		_, text, _ := cli(t, "", append([]string{"hash"}, files...)...)
		want := strings.Join(append(replaceColon(s.Lines), "set\t"+s.SetHash), "\n") + "\n"
		if text != want {
			t.Errorf("set %d text:\n%s\nwant\n%s", i, text, want)
		}
	}
	for i, in := range v.Instructions {
		init := map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}}
		if in.Instructions != nil {
			init["instructions"] = *in.Instructions
		}
		b, _ := json.Marshal(init)
		code, out, _ := cli(t, string(b), "hash", "--format", "json", "-")
		var got struct{ Instructions *string }
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
			t.Fatalf("instructions %d: exit %d", i, code)
		}
		if (in.Hash == nil) != (got.Instructions == nil) || in.Hash != nil && *in.Hash != *got.Instructions {
			t.Errorf("instructions %d (%s): %s", i, in.About, out)
		}
	}
	for i, bad := range v.Invalid {
		var args []string
		if bad.Input != "" {
			args = []string{"hash", writeFile(t, dir, "bad.json", "["+bad.Input+"]")}
		} else {
			args = []string{"hash"}
			for j, p := range bad.Pages {
				args = append(args, writeFile(t, dir, "bad"+string(rune('a'+j))+".json", p))
			}
		}
		code, out, errOut := cli(t, "", args...)
		if code != exitInput || out != "" || !strings.Contains(errOut, bad.Reason) || !strings.Contains(errOut, "tool[0]") {
			t.Errorf("invalid %d (%s): exit %d, stdout %q, stderr %q", i, bad.About, code, out, errOut)
		}
	}
}

func replaceColon(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		j := strings.LastIndex(l, ":")
		out[i] = l[:j] + "\t" + l[j+1:]
	}
	return out
}

func TestHashUsage(t *testing.T) {
	for _, args := range [][]string{{"hash"}, {"hash", "--format", "xml", "x"}, {"hash", "--nope", "x"}, {"hash", "--kind", "widget", "x"}} {
		if code, _, errOut := cli(t, "", args...); code != exitUsage || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	if code, _, errOut := cli(t, "", "hash", "/does/not/exist"); code != exitInput || errOut == "" {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut)
	}
	code, out, _ := cli(t, "", "hash", "--help")
	if code != 0 || !strings.Contains(out, "Tool definition hash") || !strings.Contains(out, "Exit status") {
		t.Errorf("--help: %d %s", code, out)
	}
}

func TestHashSanitizesNames(t *testing.T) {
	code, out, _ := cli(t, `[{"name":"evil\u001b[2J\u202e\nset\tdeadbeef"}]`, "hash", "-")
	if code != 0 || strings.Count(out, "\n") != 2 || strings.ContainsAny(out, "\x1b\u202e") {
		t.Errorf("control characters reached the terminal: %q", out)
	}
}

// Names that differ only in an unpaired surrogate are two names in every
// output: text lines, JSON members, snapshots and diffs.
func TestSurrogateNamesStayApart(t *testing.T) {
	const listing = `{"tools":[{"name":"a\udfff","description":"Look up a record"},{"name":"a\ud800","description":"Look up a record"}]}`
	code, out, errOut := cli(t, listing, "hash", "-")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], `a\u{D800}`+"\t") || !strings.HasPrefix(lines[1], `a\u{DFFF}`+"\t") || lines[0][10:] == lines[1][10:] {
		t.Fatalf("hash text: exit %d %q %s", code, out, errOut)
	}
	// The set digest is the recipe's (checked with its Python reference): the
	// lines write each name's unpaired surrogate as U+FFFD.
	if lines[2] != "set\t4041c40e76bd86362e81be3abef798d9a8576402a71265453c083b3497dfba85" {
		t.Errorf("set line %q", lines[2])
	}
	code, out, errOut = cli(t, listing, "hash", "--format", "json", "-")
	if code != 0 || !strings.Contains(out, `"a\ud800": "`) || !strings.Contains(out, `"a\udfff": "`) || strings.Contains(out, "[") {
		t.Errorf("hash json: exit %d %s %s", code, out, errOut)
	}

	dir := t.TempDir()
	old := writeFile(t, dir, "old.json", `{"tools":[{"name":"a\ud800","description":"Look up a record"}]}`)
	renamed := writeFile(t, dir, "new.json", `{"tools":[{"name":"a\udfff","description":"Look up a record"}]}`)
	code, out, errOut = cli(t, "", "diff", "--format", "json", old, renamed)
	var r jsonReport
	if err := json.Unmarshal([]byte(out), &r); code != 1 || err != nil || r.Severity != "breaking" || len(r.Changes) != 1 || r.Changes[0].Rule != "tool.renamed" {
		t.Fatalf("diff: exit %d %s %s", code, out, errOut)
	}
	if c := r.Changes[0]; string(c.Before) != `"a\ud800"` || string(c.After) != `"a\udfff"` || !strings.Contains(out, `"name":"a\ud800"`) {
		t.Errorf("rename %s → %s in %s", c.Before, c.After, out)
	}
	if _, out, _ = cli(t, "", "diff", old, renamed); !strings.Contains(out, `renamed 1 tool (a\u{D800}→a\u{DFFF})`) {
		t.Errorf("diff text: %s", out)
	}
}
