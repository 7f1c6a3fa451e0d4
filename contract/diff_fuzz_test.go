package contract

import (
	"slices"
	"testing"

	"github.com/mcpdrift/mcpdrift/contract/internal/schemacases"
)

// reverseSets reverses required, enum and type arrays at every schema
// position (not inside values such as defaults): a reorder that must never
// be a semantic change.
func reverseSets(v *value) {
	if !v.isObject() {
		return
	}
	for i, kw := range v.names {
		m := v.members[i]
		switch {
		case slices.Contains(setKeywords, kw) && m.isArray():
			slices.Reverse(m.items)
		case slices.Contains(schemaMapKeywords, kw) && m.isObject(), kw == "$defs" || kw == "definitions":
			for _, s := range m.members {
				reverseSets(s)
			}
		case (slices.Contains(schemaListKeywords, kw) || kw == "items") && m.isArray():
			for _, s := range m.items {
				reverseSets(s)
			}
		case slices.Contains(singleSchemaKeywords, kw):
			reverseSets(m)
		}
	}
}

func diffSchemaValues(dir Direction, old, new *value) []Change {
	c := &collector{}
	sink := &toolSink{c: c, subject: KindTool, name: "t", scanOpts: ScanOptions{ToolNames: []string{"other_tool"}}}
	budget := 8*(schemaSize(old)+schemaSize(new)) + 1024
	newSchemaDiff(dir, old, new, &ptr{seg: string(dir) + "Schema"}, sink, budget).run(old, new)
	return c.changes
}

// FuzzDiffSchemas: diffing arbitrary schema pairs never panics or loops
// (recursive $refs included), diffing a schema with itself (parsed twice)
// yields no change, and reversing its set-like arrays yields none either.
func FuzzDiffSchemas(f *testing.F) {
	for _, c := range schemacases.Cases {
		for _, v := range schemacases.Variants {
			f.Add(v.Wrap(c.Old), v.Wrap(c.New))
		}
	}
	f.Add(`{"$ref":"#"}`, `{"properties":{"a":{"$ref":"#"}}}`)
	f.Add(`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, `{"anyOf":[{"$ref":"#"},{"$ref":"#/anyOf/0"}]}`)
	f.Add(`{"$defs":{"n":{"type":"object","properties":{"l":{"$ref":"#/$defs/n"},"r":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, `{"$ref":"#/$defs/n","$defs":{"n":{"$ref":"#/$defs/n","description":"x"}}}`)
	f.Add(`{"$id":"urn:x","$ref":"urn:x#/properties/a","properties":{"a":{"$anchor":"A","$ref":"#A"}}}`, `{"items":[{"$dynamicRef":"#A"}],"$recursiveRef":"#"}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 1<<14 || len(b) > 1<<14 {
			return
		}
		va, err1 := parseValue([]byte(a))
		vb, err2 := parseValue([]byte(b))
		if err1 != nil || err2 != nil || DefaultLimits().scanOK([]byte(a)) != nil || DefaultLimits().scanOK([]byte(b)) != nil {
			return
		}
		for _, dir := range []Direction{DirectionInput, DirectionOutput} {
			for _, c := range diffSchemaValues(dir, va, vb) {
				if _, ok := LookupRule(c.Rule); !ok || c.Message == "" {
					t.Fatalf("change %+v", c)
				}
			}
			again, _ := parseValue([]byte(a))
			if self := diffSchemaValues(dir, va, again); len(self) > 0 {
				t.Fatalf("self-diff of %s (%s): %+v", a, dir, self)
			}
			reverseSets(again)
			for _, c := range diffSchemaValues(dir, va, again) {
				if c.Severity > Info {
					t.Fatalf("reordered sets of %s (%s): %+v", a, dir, c)
				}
			}
		}
	})
}

// scanOK applies the document limits (depth, size) the diff's callers apply.
func (l Limits) scanOK(raw []byte) error {
	_, err := l.Canon().Scan(raw)
	return err
}
