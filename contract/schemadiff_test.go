package contract

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/contract/internal/schemacases"
)

func TestSchemaRules(t *testing.T) {
	for _, c := range schemacases.Cases {
		for _, v := range schemacases.Variants {
			for _, dir := range []Direction{DirectionInput, DirectionOutput} {
				want := c.In
				if dir == DirectionOutput {
					want = c.Out
				}
				var wantAt []string
				for _, w := range want {
					rule, rel, _ := strings.Cut(w, "@")
					wantAt = append(wantAt, string(dir)+"."+rule+"@/"+string(dir)+"Schema"+v.Base+rel)
				}
				slices.Sort(wantAt)
				t.Run(c.Name+"/"+v.Name+"/"+string(dir), func(t *testing.T) {
					r := diffTools(t, schemacases.Tool(string(dir), v.Wrap(c.Old)), schemacases.Tool(string(dir), v.Wrap(c.New)), nil)
					got := rulesAt(r)
					if !slices.Equal(got, wantAt) {
						t.Errorf("got  %v\nwant %v", got, wantAt)
					}
					for _, ch := range r.Changes {
						rule, _ := LookupRule(ch.Rule)
						if ch.Severity != rule.Severity || ch.Message == "" || ch.Subject != KindTool || ch.Name != "t" {
							t.Errorf("change %+v: severity %v (rule %v), message %q", ch, ch.Severity, rule.Severity, ch.Message)
						}
					}
				})
			}
		}
	}
}

// TestSchemaRefInlined: the same change with the old schema behind a $ref
// and the new one inlined (and the other way round) gives the same result,
// and swapping a $ref for an equal inlined schema is no change at all.
func TestSchemaRefInlined(t *testing.T) {
	ref, nested := schemacases.Variants[2], schemacases.Variants[1]
	for _, c := range schemacases.Cases {
		for _, dir := range []Direction{DirectionInput, DirectionOutput} {
			plain := rulesAt(diffTools(t, schemacases.Tool(string(dir), nested.Wrap(c.Old)), schemacases.Tool(string(dir), nested.Wrap(c.New)), nil))
			mixed := rulesAt(diffTools(t, schemacases.Tool(string(dir), ref.Wrap(c.Old)), schemacases.Tool(string(dir), nested.Wrap(c.New)), nil))
			mixed2 := rulesAt(diffTools(t, schemacases.Tool(string(dir), nested.Wrap(c.Old)), schemacases.Tool(string(dir), ref.Wrap(c.New)), nil))
			if !slices.Equal(plain, mixed) || !slices.Equal(plain, mixed2) {
				t.Errorf("%s/%s: inlined %v, ref→inline %v, inline→ref %v", c.Name, dir, plain, mixed, mixed2)
			}
		}
		for _, s := range []string{c.Old, c.New} {
			r := diffTools(t, schemacases.Tool(string(DirectionInput), ref.Wrap(s)), schemacases.Tool(string(DirectionInput), nested.Wrap(s)), nil)
			if got := ruleIDs(r); !slices.Equal(got, []string{"tool.definition.reformatted"}) {
				t.Errorf("%s: $ref replaced by equal inline schema %s: %v", c.Name, s, got)
			}
		}
	}
}

// TestNoSemanticChange: reorders, re-spelled numbers and equivalent forms
// never produce a warning or breaking change; a digest change is recorded as
// info only, and no change at all when the digest is the same.
func TestNoSemanticChange(t *testing.T) {
	pairs := [][2]string{
		{`{"type":"object","properties":{"a":{},"b":{}},"required":["a","b"]}`, `{"type":"object","properties":{"a":{},"b":{}},"required":["b","a"]}`},
		{`{"enum":["x","y",1]}`, `{"enum":[1,"y","x"]}`},
		{`{"type":["string","null"]}`, `{"type":["null","string"]}`},
		{`{"type":"number","maximum":1}`, `{"type":"number","maximum":1.0}`},
		{`{"type":"number","maximum":100}`, `{"type":"number","maximum":1e2}`},
		{`{"type":"number","multipleOf":0.5}`, `{"type":"number","multipleOf":5e-1}`},
		{`{"type":"object","additionalProperties":{}}`, `{"type":"object","additionalProperties":true}`},
		{`{"type":"object","additionalProperties":true}`, `{"type":"object"}`},
		{`{"type":"array","items":{}}`, `{"type":"array"}`},
		{`{"type":"string","minLength":0}`, `{"type":"string"}`},
		{`{"type":"string","nullable":true}`, `{"type":["string","null"]}`},
		{`{"type":"number","maximum":10,"exclusiveMaximum":true}`, `{"type":"number","exclusiveMaximum":10}`},
		{`{"anyOf":[{"type":"string","maxLength":3},{"type":"integer","minimum":1}]}`, `{"anyOf":[{"type":"integer","minimum":1.0},{"type":"string","maxLength":3}]}`},
		{`{"anyOf":[{"type":"string"},{"type":"null"}]}`, `{"type":["string","null"]}`},
		{`{"oneOf":[{"const":"a"},{"const":"b"}]}`, `{"oneOf":[{"const":"b"},{"const":"a"}]}`},
		{`{"const":"a"}`, `{"enum":["a"]}`},
		{`{"properties":{"x":{"$ref":"#/$defs/X"}},"$defs":{"X":{"type":"string"}}}`, `{"properties":{"x":{"type":"string"}}}`},
		{`{"properties":{"x":{"$ref":"#/definitions/X","description":"d"}},"definitions":{"X":{"type":"string"}}}`, `{"properties":{"x":{"type":"string","description":"d"}}}`},
		{`{"properties":{"x":{"$ref":"#/$defs/X"}},"$defs":{"X":{"type":"string"},"Unused":{"type":"number"}}}`, `{"properties":{"x":{"$ref":"#/$defs/X"}},"$defs":{"X":{"type":"string"}}}`},
	}
	for _, p := range pairs {
		for _, dir := range []Direction{DirectionInput, DirectionOutput} {
			r := diffTools(t, schemacases.Tool(string(dir), p[0]), schemacases.Tool(string(dir), p[1]), nil)
			if r.Worst() > Info {
				t.Errorf("%s %s → %s: %v", dir, p[0], p[1], rulesAt(r))
			}
			if got := ruleIDs(r); len(got) > 0 && !slices.Equal(got, []string{"tool.definition.reformatted"}) {
				t.Errorf("%s %s → %s: want at most reformatted, got %v", dir, p[0], p[1], got)
			}
		}
	}
	// Same digest (JCS normalizes member order and number spelling): nothing.
	r := diffTools(t, `{"name":"t","inputSchema":{"type":"number","maximum":1.0}}`, `{"inputSchema":{"maximum":1,"type":"number"},"name":"t"}`, nil)
	if !r.Empty() {
		t.Errorf("equal digests: %v", rulesAt(r))
	}
}

// TestRecursiveRefs: recursive schemas terminate, and a change inside a
// recursive definition is found.
func TestRecursiveRefs(t *testing.T) {
	tree := func(leafType string) string {
		return `{"type":"object","properties":{"root":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"value":{"type":"` + leafType + `"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}},"self":{"$ref":"#"}}}}}`
	}
	r := diffTools(t, schemacases.Tool(string(DirectionInput), tree("number")), schemacases.Tool(string(DirectionInput), tree("integer")), nil)
	if got := rulesAt(r); !slices.Equal(got, []string{"input.type.narrowed@/inputSchema/properties/root/properties/value/type"}) {
		t.Errorf("recursive: %v", got)
	}
	// A ref loop with no content, and refs to themselves with siblings.
	loops := []string{
		`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`,
		`{"$defs":{"a":{"$ref":"#/$defs/a","type":"object","properties":{"x":{"$ref":"#/$defs/a"}}}},"properties":{"y":{"$ref":"#/$defs/a"}}}`,
		`{"anyOf":[{"$ref":"#"},{"type":"string"}]}`,
	}
	for _, l := range loops {
		for _, other := range loops {
			r := diffTools(t, schemacases.Tool(string(DirectionInput), l), schemacases.Tool(string(DirectionInput), other), nil)
			if l == other && !r.Empty() {
				t.Errorf("self-diff of %s: %v", l, rulesAt(r))
			}
		}
	}
}

// TestSchemaBudget: a walk cut short says so instead of running on.
func TestSchemaBudget(t *testing.T) {
	old, _ := parseValue([]byte(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"}}}`))
	new, _ := parseValue([]byte(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"c":{"type":"number"}}}`))
	c := &collector{}
	sink := &toolSink{c: c, subject: KindTool, name: "t"}
	newSchemaDiff(DirectionInput, old, new, &ptr{seg: "inputSchema"}, sink, 2).run(old, new)
	r := record(t, DefaultPolicy().Apply(c.changes))
	if _, ok := findChange(r, "input.schema.too_complex"); !ok {
		t.Errorf("no too_complex change: %v", rulesAt(r))
	}
	c = &collector{}
	sink.c = c
	newSchemaDiff(DirectionOutput, old, new, &ptr{seg: "outputSchema"}, sink, 2).run(old, new)
	record(t, DefaultPolicy().Apply(c.changes))
}

// TestSchemaMessages: the explanation names the tool and the parameter.
func TestSchemaMessages(t *testing.T) {
	r := diffTools(t,
		`{"name":"search_web","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}`,
		`{"name":"search_web","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"filters":{"type":"object","properties":{"since":{"type":"string"}},"required":["since"]}},"required":["filters"]}}`, nil)
	c, ok := findChange(r, "input.property.added_required")
	if !ok {
		t.Fatalf("%v", rulesAt(r))
	}
	if c.Message != "agents calling search_web without filters will now get a validation error" {
		t.Errorf("message %q", c.Message)
	}
	if c.Path != "/inputSchema/properties/filters" || string(c.After) == "" || c.Before != nil {
		t.Errorf("path %q before %s after %s", c.Path, c.Before, c.After)
	}
	if r.OneLine() != "search_web: required param filters added" {
		t.Errorf("one line %q", r.OneLine())
	}
}
