package witness

import (
	"strings"
	"testing"
)

// TestPruneLeavesOutAdditionalProperties: additionalProperties is left out
// only on schemas the root reaches through properties alone, where it
// applies at one location, and recorded with that location; everywhere
// else (a reference could apply the schema elsewhere, patternProperties
// declares members, the keyword is given twice, the search asked to keep
// it) it stays.
func TestPruneLeavesOutAdditionalProperties(t *testing.T) {
	closed := `"properties":{"x":{"type":"string"}},"additionalProperties":false`
	for _, c := range []struct {
		name, schema string
		keep         string // a pointer whose additionalProperties stays
		out          []string
	}{
		{"root and nested", `{"type":"object","properties":{"a":{` + closed + `}},"additionalProperties":false}`, "", []string{"/properties/a", ""}},
		{"kept on request", `{"properties":{"a":{` + closed + `}}}`, "/properties/a", nil},
		{"an entry a reference applies elsewhere", `{"properties":{"a":{` + closed + `},"b":{"$ref":"#/properties/a"}}}`, "", nil},
		{"under a reference to the root", `{"properties":{"a":{` + closed + `},"b":{"$ref":"#"}}}`, "", nil},
		{"in a document with identifiers", `{"$id":"urn:x","properties":{"a":{` + closed + `}}}`, "", nil},
		{"with patternProperties", `{"properties":{"a":{` + closed + `,"patternProperties":{"^y":{}}}}}`, "", nil},
		{"given twice", `{"properties":{"a":{` + closed + `,"properties":{}}}}`, "", nil},
		{"under items", `{"items":{` + closed + `}}`, "", nil},
		{"in $defs", `{"$defs":{"d":{` + closed + `}},"$ref":"#/$defs/d"}`, "", nil},
		{"a reference into the entry only", `{"properties":{"a":{` + closed + `},"b":{"$ref":"#/properties/a/properties/x"}}}`, "", []string{"/properties/a"}},
	} {
		d := newDoc([]byte(c.schema))
		var open []openAP
		keep := map[string]bool{c.keep: c.keep != ""}
		out := string(d.prune(map[string]bool{"a": true, "b": true, "x": true}, keep, &open))
		var got []string
		for _, o := range open {
			got = append(got, o.ptr)
		}
		if strings.Join(got, " ") != strings.Join(c.out, " ") {
			t.Errorf("%s: left out %q, want %q", c.name, got, c.out)
		}
		if want := strings.Count(c.schema, "additionalProperties") - len(c.out); strings.Count(out, "additionalProperties") != want {
			t.Errorf("%s: %s keeps %d additionalProperties, want %d", c.name, out, strings.Count(out, "additionalProperties"), want)
		}
	}
}

// TestOpenAPMeets: a left-out additionalProperties matters to a value
// with a member at its location that the properties do not declare.
func TestOpenAPMeets(t *testing.T) {
	d := newDoc([]byte(`{"properties":{"a":{"properties":{"x":{}},"additionalProperties":false}}}`))
	var open []openAP
	d.prune(map[string]bool{"a": true, "x": true}, nil, &open)
	if len(open) != 1 || open[0].ptr != "/properties/a" {
		t.Fatalf("left out %+v", open)
	}
	for _, c := range []struct {
		value any
		meets bool
	}{
		{map[string]any{"a": map[string]any{"x": "1"}}, false},
		{map[string]any{"a": map[string]any{"x": "1", "y": "2"}}, true},
		{map[string]any{"a": "not an object", "y": "2"}, false},
		{map[string]any{"b": map[string]any{"y": "2"}}, false},
	} {
		if got := open[0].meets(c.value); got != c.meets {
			t.Errorf("%v: meets %v, want %v", c.value, got, c.meets)
		}
	}
}

// TestPruneInlinesSingleReferences: a schema that is only a reference to
// a $defs entry nothing else refers to is written as that entry, and the
// entry left out of $defs; shared, recursive or qualified references stay.
func TestPruneInlinesSingleReferences(t *testing.T) {
	leaf := `{"type":"object","properties":{"x":{"type":"string"}}}`
	for _, c := range []struct {
		name, schema, want string
	}{
		{"once", `{"properties":{"a":{"$ref":"#/$defs/A","description":"d"}},"$defs":{"A":` + leaf + `}}`,
			`{"properties":{"a":{"type":"object","properties":{"x":{"type":"string"}}}}}`},
		{"one of two entries", `{"$defs":{"A":` + leaf + `,"B":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/A"},"b":{"$ref":"#/$defs/B"},"c":{"$ref":"#/$defs/B"}}}`,
			`{"properties":{"a":{"type":"object","properties":{"x":{"type":"string"}}},"b":{"$ref":"#/$defs/B"},"c":{"$ref":"#/$defs/B"}},"$defs":{"B":{"type":"integer"}}}`},
		{"a keyword beside the reference", `{"properties":{"a":{"$ref":"#/$defs/A","minProperties":1}},"$defs":{"A":` + leaf + `}}`,
			`{"properties":{"a":{"$ref":"#/$defs/A","minProperties":1}},"$defs":{"A":{"type":"object","properties":{"x":{"type":"string"}}}}}`},
		{"recursive", `{"properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"properties":{"x":{"$ref":"#/$defs/A"}}}}}`,
			`{"properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"properties":{"x":{"$ref":"#/$defs/A"}}}}}`},
		{"into the entry", `{"properties":{"a":{"$ref":"#/$defs/A"},"b":{"$ref":"#/$defs/A/properties/x"}},"$defs":{"A":` + leaf + `}}`,
			`{"properties":{"a":{"$ref":"#/$defs/A"},"b":{"$ref":"#/$defs/A/properties/x"}},"$defs":{"A":{"type":"object","properties":{"x":{"type":"string"}}}}}`},
	} {
		var open []openAP
		got := string(newDoc([]byte(c.schema)).prune(map[string]bool{"a": true, "b": true, "c": true, "x": true}, nil, &open))
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
