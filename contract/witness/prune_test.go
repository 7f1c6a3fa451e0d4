package witness

import (
	"strings"
	"testing"
)

// TestPruneLeavesOutKeywords: additionalProperties, "type": "object" and
// required are left out only on schemas the root reaches through
// properties alone, where they apply at one location, and recorded with
// that location; everywhere else (a reference could apply the schema
// elsewhere, patternProperties declares members, the keyword is given
// twice, the search asked to keep it) they stay.
func TestPruneLeavesOutKeywords(t *testing.T) {
	closed := `"properties":{"x":{"type":"string"}},"additionalProperties":false`
	for _, c := range []struct {
		name, schema string
		keep         string // pointer#keyword that stays
		out          []string
	}{
		{"root and nested", `{"properties":{"a":{` + closed + `}},"additionalProperties":false}`, "", []string{"/properties/a#additionalProperties", "#additionalProperties"}},
		{"kept on request", `{"properties":{"a":{` + closed + `}}}`, "/properties/a#additionalProperties", nil},
		{"an entry a reference applies elsewhere", `{"properties":{"a":{` + closed + `},"b":{"$ref":"#/properties/a"}}}`, "", nil},
		{"under a reference to the root", `{"properties":{"a":{` + closed + `},"b":{"$ref":"#"}}}`, "", nil},
		{"in a document with identifiers", `{"$id":"urn:x","properties":{"a":{` + closed + `}}}`, "", nil},
		{"with patternProperties", `{"properties":{"a":{` + closed + `,"patternProperties":{"^y":{}}}}}`, "", nil},
		{"given twice", `{"properties":{"a":{` + closed + `,"properties":{}}}}`, "", nil},
		{"under items", `{"items":{` + closed + `}}`, "", nil},
		{"in $defs", `{"$defs":{"d":{` + closed + `}},"$ref":"#/$defs/d"}`, "", nil},
		{"a reference into the entry only", `{"properties":{"a":{` + closed + `},"b":{"$ref":"#/properties/a/properties/x"}}}`, "", []string{"/properties/a#additionalProperties"}},
		{"type object and required", `{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}}`, "", []string{"#type", "#required"}},
		{"other types stay", `{"type":["object","null"],"properties":{"a":{"type":"object","required":["x",1]}}}`, "", []string{"/properties/a#type"}},
	} {
		d := newDoc([]byte(c.schema))
		var open []leftOut
		keep := map[kept]bool{}
		if ptr, kw, ok := strings.Cut(c.keep, "#"); ok {
			keep[kept{ptr, kw}] = true
		}
		out := string(d.prune(map[string]bool{"a": true, "b": true, "x": true}, keep, &open))
		var got []string
		for _, o := range open {
			got = append(got, o.ptr+"#"+o.kw)
			if strings.Contains(out, `"`+o.kw+`":`) && o.kw != "type" {
				t.Errorf("%s: %s left out but in %s", c.name, o.ptr+"#"+o.kw, out)
			}
		}
		if strings.Join(got, " ") != strings.Join(c.out, " ") {
			t.Errorf("%s: left out %q, want %q", c.name, got, c.out)
		}
	}
}

// TestLeftOutMeets: a keyword left out matters to a value it would judge
// at its location: an undeclared member (additionalProperties), a value
// that is not an object ("type"), a missing name (required).
func TestLeftOutMeets(t *testing.T) {
	d := newDoc([]byte(`{"properties":{"a":{"type":"object","properties":{"x":{}},"required":["x"],"additionalProperties":false}}}`))
	var open []leftOut
	d.prune(map[string]bool{"a": true, "x": true}, nil, &open)
	meets := func(x any) (out []string) {
		for _, o := range open {
			if o.meets(x) {
				out = append(out, o.kw)
			}
		}
		return out
	}
	obj := func(m map[string]any) map[string]any { return m }
	for _, c := range []struct {
		value any
		meets string
	}{
		{obj(map[string]any{"a": obj(map[string]any{"x": "1"})}), ""},
		{obj(map[string]any{"a": obj(map[string]any{"x": "1", "y": "2"})}), "additionalProperties"},
		{obj(map[string]any{"a": obj(map[string]any{})}), "required"},
		{obj(map[string]any{"a": "not an object", "y": "2"}), "type"},
		{obj(map[string]any{"a": nil}), "type"},
		{obj(map[string]any{"b": obj(map[string]any{"y": "2"})}), ""},
	} {
		if got := strings.Join(meets(c.value), " "); got != c.meets {
			t.Errorf("%v: meets %q, want %q", c.value, got, c.meets)
		}
	}
}

// TestPruneInlinesSingleReferences: a schema that is only a reference to
// a $defs entry nothing else refers to is written as that entry, and the
// entry left out of $defs; shared, recursive or qualified references stay.
func TestPruneInlinesSingleReferences(t *testing.T) {
	leaf := `{"minProperties":1,"properties":{"x":{"type":"string"}}}`
	for _, c := range []struct {
		name, schema, want string
	}{
		{"once", `{"properties":{"a":{"$ref":"#/$defs/A","description":"d"}},"$defs":{"A":` + leaf + `}}`,
			`{"properties":{"a":{"minProperties":1,"properties":{"x":{"type":"string"}}}}}`},
		{"one of two entries", `{"$defs":{"A":` + leaf + `,"B":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/A"},"b":{"$ref":"#/$defs/B"},"c":{"$ref":"#/$defs/B"}}}`,
			`{"properties":{"a":{"minProperties":1,"properties":{"x":{"type":"string"}}},"b":{"$ref":"#/$defs/B"},"c":{"$ref":"#/$defs/B"}},"$defs":{"B":{"type":"integer"}}}`},
		{"a keyword beside the reference", `{"properties":{"a":{"$ref":"#/$defs/A","minProperties":1}},"$defs":{"A":` + leaf + `}}`,
			`{"properties":{"a":{"$ref":"#/$defs/A","minProperties":1}},"$defs":{"A":{"minProperties":1,"properties":{"x":{"type":"string"}}}}}`},
		{"recursive", `{"properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"properties":{"x":{"$ref":"#/$defs/A"}}}}}`,
			`{"properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"properties":{"x":{"$ref":"#/$defs/A"}}}}}`},
		{"into the entry", `{"properties":{"a":{"$ref":"#/$defs/A"},"b":{"$ref":"#/$defs/A/properties/x"}},"$defs":{"A":` + leaf + `}}`,
			`{"properties":{"a":{"$ref":"#/$defs/A"},"b":{"$ref":"#/$defs/A/properties/x"}},"$defs":{"A":{"minProperties":1,"properties":{"x":{"type":"string"}}}}}`},
	} {
		var open []leftOut
		got := string(newDoc([]byte(c.schema)).prune(map[string]bool{"a": true, "b": true, "c": true, "x": true}, nil, &open))
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
