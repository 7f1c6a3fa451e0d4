package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const root = "../.."

// TestAttributesDocUpToDate fails when docs/attributes.md disagrees with
// the constants, events.md or the metadata it is generated from.
func TestAttributesDocUpToDate(t *testing.T) {
	want, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, outputFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatal("docs/attributes.md is out of date; run: go generate ./semconv")
	}
	for _, key := range []string{"`mcpdrift.tool.stale`", "`mcpdrift.drift.rule`", "`otelcol_processor_mcpimpact_stale_calls`", "(events.md#mcpdriftdrift)"} {
		if !strings.Contains(want, key) {
			t.Errorf("reference lacks %s", key)
		}
	}
}

func TestConstantWithoutDocIsAnError(t *testing.T) {
	src := `package semconv

// Keys.
const (
	Documented = "a.b" // has one
	// AlsoDocumented has a doc comment.
	AlsoDocumented = "a.c"
	Bare = "a.d"
)
`
	_, err := readSemconv("x.go", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "Bare has no doc comment") || strings.Contains(err.Error(), "Documented has") {
		t.Fatalf("got %v", err)
	}
	if _, err := readSemconv("x.go", []byte("package semconv\n\n// Keys.\nconst N = 1 // not a string\n")); err == nil || !strings.Contains(err.Error(), "not a string literal") {
		t.Fatalf("got %v", err)
	}
	if _, err := readSemconv("x.go", []byte("package semconv\n\nconst (\n\tA = \"a\" // doc\n)\n")); err == nil || !strings.Contains(err.Error(), "const block has no doc comment") {
		t.Fatalf("got %v", err)
	}
}

func TestEventWithoutSectionIsAnError(t *testing.T) {
	groups, err := readSemconv("x.go", []byte("package semconv\n\n// Event names.\nconst (\n\tEventA = \"x.a\" // documented\n\tEventB = \"x.b\" // not in events.md\n)\n"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := eventAnchors([]byte("# Events\n\n## `x.a` (receiver)\n\ntext\n"))
	if anchors["x.a"] != "xa-receiver" {
		t.Errorf("anchors: %v", anchors)
	}
	_, err = render(groups, anchors, nil)
	if err == nil || !strings.Contains(err.Error(), "x.b") || strings.Contains(err.Error(), "x.a ") {
		t.Fatalf("got %v", err)
	}
}

func TestCellsAndNames(t *testing.T) {
	if got := cell("a | b <c> `<d>`"); got != `a \| b &lt;c&gt; `+"`<d>`" {
		t.Errorf("cell: %s", got)
	}
	known := map[string]bool{"mcp.method.name": true}
	if got := linkNames("value of mcp.method.name, (mcp.method.name) mcp.method.names", known); got != "value of `mcp.method.name`, (`mcp.method.name`) mcp.method.names" {
		t.Errorf("linkNames: %s", got)
	}
	if h, rest := firstSentence("Keys of x. More text."); h != "Keys of x" || rest != "More text." {
		t.Errorf("firstSentence: %q %q", h, rest)
	}
}

func TestMetadataNamesUndefinedAttribute(t *testing.T) {
	_, err := readMetadata("m.yaml", []byte("type: x\nmetrics:\n  m:\n    gauge: {value_type: int}\n    attributes: [nope]\n"))
	if err == nil || !strings.Contains(err.Error(), "undefined attribute nope") {
		t.Fatalf("got %v", err)
	}
}
