package witness_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/witness"
)

// TestSharedSchemas: in one report, tools whose schemas are the same text
// (read once, then recognized), or share only their first bytes, get the
// witnesses they get each in a report of their own.
func TestSharedSchemas(t *testing.T) {
	long := strings.Repeat("x", 80) // longer than the bytes a document is filed under
	oldSchema := `{"description":"` + long + `","type":"object","properties":{"n":{"type":"integer","maximum":10}},"required":["n"]}`
	newSchema := `{"description":"` + long + `","type":"object","properties":{"n":{"type":"integer","maximum":5}},"required":["n"]}`
	twin := `{"description":"` + long + `","type":"object","properties":{"n":{"type":"integer","maximum":10,"minimum":3}},"required":["n"]}`
	named := func(name, schema string) string {
		return `{"description":"d","inputSchema":` + schema + `,"name":"` + name + `"}`
	}
	pairs := [][3]string{{"a", oldSchema, newSchema}, {"b", oldSchema, newSchema}, {"c", twin, newSchema}, {"d", newSchema, oldSchema}, {"e", oldSchema, twin}}
	// Every rule breaking: the loosenings (d) are searched too.
	policy, err := contract.NewPolicy(contract.PolicyConfig{Severities: map[string]contract.Severity{"*": contract.Breaking}})
	if err != nil {
		t.Fatal(err)
	}
	var olds, news []string
	alone := map[string]string{}
	for _, p := range pairs {
		olds, news = append(olds, named(p[0], p[1])), append(news, named(p[0], p[2]))
		o, n := snap(t, named(p[0], p[1])), snap(t, named(p[0], p[2]))
		r := contract.Diff(o, n, policy)
		witness.Report(r, o, n)
		b, _ := json.Marshal(r.Changes)
		alone[p[0]] = string(b)
	}
	o, n := snap(t, olds...), snap(t, news...)
	r := contract.Diff(o, n, policy)
	witness.Report(r, o, n)
	byTool := map[string][]contract.Change{}
	for _, c := range r.Changes {
		byTool[c.Name] = append(byTool[c.Name], c)
	}
	for _, p := range pairs {
		b, _ := json.Marshal(byTool[p[0]])
		if string(b) != alone[p[0]] {
			t.Errorf("%s in one report:\n%s\nalone:\n%s", p[0], b, alone[p[0]])
		}
		if len(byTool[p[0]]) == 0 || !byTool[p[0]][0].Witness.Found() {
			t.Errorf("%s: no witness: %+v", p[0], byTool[p[0]])
		}
	}
}

// TestInvalidSchemaNamedAsWritten: a schema the validator refuses is
// reported at the location it has as written, though the generator
// compiles it pruned (a referenced definition written in place).
func TestInvalidSchemaNamedAsWritten(t *testing.T) {
	schema := func(typ string) string {
		return `{"type":"object","properties":{"o":{"$ref":"#/$defs/O"}},"$defs":{"O":{"type":"object","properties":{"p":{"type":"array","items":[{"type":"` + typ + `"}]}}}}}`
	}
	w := witnessOf(t, schema("number"), schema("integer"), "input.type.narrowed")
	if w.Found() || !strings.Contains(w.None, "/$defs/O/properties/p/items: got array") {
		t.Errorf("%+v", w)
	}
}

// tool builds a one-tool listing with the given inputSchema.
func tool(schema string) string { return `{"name":"t","inputSchema":` + schema + `}` }

// witnessOf diffs two input schemas and returns the witness of the first
// change with the given rule.
func witnessOf(t *testing.T, oldSchema, newSchema string, rule contract.RuleID) *contract.Witness {
	t.Helper()
	old, new := snap(t, tool(oldSchema)), snap(t, tool(newSchema))
	r := contract.Diff(old, new, nil)
	witness.Report(r, old, new)
	for _, c := range r.Changes {
		if c.Rule == rule {
			return c.Witness
		}
	}
	t.Fatalf("no %s change in %v", rule, r.Changes)
	return nil
}

// TestTelling: the witness shows the change, not some other difference:
// the removed enum member, a value between the old and the new limit, the
// object without the new required member, a string matching the old
// pattern only, a format's example.
func TestTelling(t *testing.T) {
	for _, c := range []struct {
		name, old, new string
		rule           contract.RuleID
		args, reason   string
	}{
		{"enum member removed", `{"type":"object","properties":{"mode":{"enum":["fast","slow","exact"]}},"required":["mode"]}`,
			`{"type":"object","properties":{"mode":{"enum":["fast","slow"]}},"required":["mode"]}`,
			"input.enum.value_removed", `{"mode":"exact"}`, "/mode: value must be one of"},
		{"maximum tightened", `{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":100}},"required":["n"]}`,
			`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":50}},"required":["n"]}`,
			"input.limit.tightened", `{"n":51}`, "/n: maximum"},
		{"required added, other members kept", `{"type":"object","properties":{"q":{"type":"string"},"project":{"type":"string"}},"required":["q"]}`,
			`{"type":"object","properties":{"q":{"type":"string"},"project":{"type":"string"}},"required":["q","project"]}`,
			"input.required.added", `{"q":"example"}`, "missing property 'project'"},
		{"property removed from a closed model", `{"type":"object","properties":{"q":{"type":"string"},"legacy":{"type":"boolean"}},"additionalProperties":false}`,
			`{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}`,
			"input.property.removed_closed", `{"legacy":false}`, "additional properties 'legacy' not allowed"},
		{"pattern narrowed", `{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z0-9-]+$"}},"required":["id"]}`,
			`{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]+$"}},"required":["id"]}`,
			"input.pattern.changed", `{"id":"0"}`, "does not match pattern"},
		{"format added", `{"type":"object","properties":{"when":{"type":"string"}},"required":["when"]}`,
			`{"type":"object","properties":{"when":{"type":"string","format":"date-time"}},"required":["when"]}`,
			"input.format.added", `{"when":"example"}`, "is not valid date-time"},
		{"type changed", `{"type":"object","properties":{"limit":{"type":"string"}},"required":["limit"]}`,
			`{"type":"object","properties":{"limit":{"type":"integer"}},"required":["limit"]}`,
			"input.type.changed", `{"limit":"example"}`, "/limit: got string, want integer"},
		{"nested through $ref", `{"type":"object","properties":{"f":{"$ref":"#/$defs/F"}},"required":["f"],"$defs":{"F":{"type":"object","properties":{"since":{"type":"string","format":"date"}},"required":["since"]}}}`,
			`{"type":"object","properties":{"f":{"$ref":"#/$defs/F"}},"required":["f"],"$defs":{"F":{"type":"object","properties":{"since":{"type":"string","format":"date"},"until":{"type":"string"}},"required":["since","until"]}}}`,
			"input.property.added_required", `{"f":{"since":"2025-01-01"}}`, "/f: missing property 'until'"},
	} {
		w := witnessOf(t, c.old, c.new, c.rule)
		if string(w.Arguments) != c.args || w.Old != contract.WitnessValid || !strings.Contains(w.New, c.reason) {
			t.Errorf("%s: got %s old %q new %q; want %s and a reason with %q", c.name, w.Arguments, w.Old, w.New, c.args, c.reason)
		}
	}
}

// TestOneToolManyChanges: several changes to one tool share the compiled
// schemas, and each still gets a witness aimed at its own parameter (a
// witness for the first change must not stand in for the others).
func TestOneToolManyChanges(t *testing.T) {
	old := `{"type":"object","properties":{"mode":{"enum":["fast","slow","exact"]},"score":{"type":"number"},"limit":{"type":"integer","maximum":100}},"required":["mode"]}`
	new := `{"type":"object","properties":{"mode":{"enum":["fast","slow"]},"score":{"type":"integer"},"limit":{"type":"integer","maximum":10},"cursor":{"type":"string"}},"required":["mode","cursor"]}`
	o, n := snap(t, tool(old)), snap(t, tool(new))
	r := contract.Diff(o, n, nil)
	witness.Report(r, o, n)
	want := map[contract.RuleID]string{
		"input.enum.value_removed":      "/mode: value must be one of",
		"input.type.narrowed":           "/score: got number, want integer",
		"input.limit.tightened":         "/limit: maximum",
		"input.property.added_required": "missing property 'cursor'",
	}
	for _, c := range r.Changes {
		if w, ok := want[c.Rule]; ok && !strings.Contains(c.Witness.New, w) {
			t.Errorf("%s: %s rejected with %q, want a reason with %q", c.Rule, c.Witness.Arguments, c.Witness.New, w)
		}
		delete(want, c.Rule)
	}
	if len(want) > 0 {
		t.Errorf("changes not found: %v", want)
	}
}

// TestChange: one change, from the two raw definitions (what a proxy that
// approves one tool at a time has).
func TestChange(t *testing.T) {
	old := []byte(tool(`{"type":"object","properties":{"n":{"type":"integer","maximum":10}},"required":["n"]}`))
	new := []byte(tool(`{"type":"object","properties":{"n":{"type":"integer","maximum":5}},"required":["n"]}`))
	c := contract.Change{Rule: "input.limit.tightened", Severity: contract.Breaking, Subject: contract.KindTool, Name: "t", Path: "/inputSchema/properties/n/maximum"}
	w := witness.New().Change(c, old, new)
	if string(w.Arguments) != `{"n":6}` || !w.Narrowing() || w.New != "/n: maximum: got 6, want 5" {
		t.Errorf("%+v", w)
	}
	if w := witness.New().Change(contract.Change{Rule: "prompt.removed", Subject: contract.KindPrompt}, old, new); w != nil {
		t.Errorf("a prompt change got %+v", w)
	}
}

// TestNeverASecret: schemas that describe credentials get witnesses that
// do not look like one, or none.
func TestNeverASecret(t *testing.T) {
	for _, c := range []struct {
		old, new string
		rule     contract.RuleID
	}{
		// The old pattern describes an API key: the only strings it accepts look like one.
		{`{"type":"object","properties":{"k":{"type":"string","pattern":"^sk-[A-Za-z0-9]{48}$"}},"required":["k"]}`,
			`{"type":"object","properties":{"k":{"type":"string","pattern":"^sk-[A-Za-z0-9]{48}$","maxLength":10}},"required":["k"]}`, "input.limit.added"},
		// The removed enum member is a token.
		{`{"type":"object","properties":{"k":{"enum":["ghp_abcdefghijklmnopqrstuvwxyz0123456789","none"]}}}`,
			`{"type":"object","properties":{"k":{"enum":["none"]}}}`, "input.enum.value_removed"},
		// A new pattern for a token: the witness is a plain word.
		{`{"type":"object","properties":{"k":{"type":"string"}},"required":["k"]}`,
			`{"type":"object","properties":{"k":{"type":"string","pattern":"^xoxb-[0-9]{12}-[A-Za-z0-9]{24}$"}},"required":["k"]}`, "input.pattern.added"},
	} {
		w := witnessOf(t, c.old, c.new, c.rule)
		if w.Found() && looksSecret(string(w.Arguments)) {
			t.Errorf("%s: witness %s looks like a secret", c.rule, w.Arguments)
		}
		if !w.Found() && w.None == "" {
			t.Errorf("%s: no witness and no reason", c.rule)
		}
	}
}

func looksSecret(s string) bool {
	for _, p := range []string{"sk-", "ghp_", "xoxb-"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// TestHostileSchemas: recursive references, huge counts and enums, long
// patterns and deep nesting end with a witness or "no witness", never a
// hang or a panic; each is a breaking change the generator works on.
func TestHostileSchemas(t *testing.T) {
	// 60 levels of objects nest 120 JSON levels, under the contract's limit.
	deep := strings.Repeat(`{"type":"object","required":["a"],"properties":{"a":`, 60) + `{"type":"number"}` + strings.Repeat(`}}`, 60)
	deepNew := strings.Repeat(`{"type":"object","required":["a"],"properties":{"a":`, 60) + `{"type":"integer"}` + strings.Repeat(`}}`, 60)
	bigEnum := make([]string, 100000)
	for i := range bigEnum {
		bigEnum[i] = fmt.Sprintf(`"v%d"`, i)
	}
	for _, c := range []struct{ name, old, new string }{
		{"a required member that requires itself", `{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","required":["child"],"properties":{"child":{"$ref":"#/$defs/n"},"v":{"type":"number"}}}}}`,
			`{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","required":["child"],"properties":{"child":{"$ref":"#/$defs/n"},"v":{"type":"integer"}}}}}`},
		{"a loop of references", `{"type":"object","properties":{"x":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`,
			`{"type":"object","properties":{"x":{"$ref":"#/$defs/a"}},"required":["x"],"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`},
		{"a billion items", `{"type":"object","properties":{"x":{"type":"array","minItems":1000000000}},"required":["x"]}`,
			`{"type":"object","properties":{"x":{"type":"array","minItems":1000000000,"maxItems":1000000001}},"required":["x"]}`},
		{"a billion characters", `{"type":"object","properties":{"x":{"type":"string","minLength":1000000000}},"required":["x"]}`,
			`{"type":"object","properties":{"x":{"type":"string","minLength":1000000001}},"required":["x"]}`},
		{"a huge enum", `{"type":"object","properties":{"x":{"enum":[` + strings.Join(bigEnum, ",") + `]}},"required":["x"]}`,
			`{"type":"object","properties":{"x":{"enum":[` + strings.Join(bigEnum[1:], ",") + `]}},"required":["x"]}`},
		{"a long pattern", `{"type":"object","properties":{"x":{"type":"string","pattern":"` + strings.Repeat("(a|b)", 2000) + `"}},"required":["x"]}`,
			`{"type":"object","properties":{"x":{"type":"string","pattern":"` + strings.Repeat("(a|b)", 2000) + `","maxLength":5}},"required":["x"]}`},
		{"a pattern repeated a million times", `{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`,
			`{"type":"object","properties":{"x":{"type":"string","pattern":"^a{1000}b{1000}$"}},"required":["x"]}`},
		{"60 levels", deep, deepNew},
		{"anyOf of itself", `{"anyOf":[{"$ref":"#"},{"type":"object","properties":{"v":{"type":"number"}}}]}`,
			`{"anyOf":[{"$ref":"#"},{"type":"object","properties":{"v":{"type":"integer"}}}]}`},
	} {
		old, new := snap(t, tool(c.old)), snap(t, tool(c.new))
		r := contract.Diff(old, new, nil)
		witness.Report(r, old, new)
		for _, ch := range r.Changes {
			if ch.Witness != nil && !ch.Witness.Found() && ch.Witness.None == "" {
				t.Errorf("%s: %s: empty witness", c.name, ch.Rule)
			}
			if ch.Witness.Found() && len(ch.Witness.Arguments) > 64<<10 {
				t.Errorf("%s: a %d-byte witness", c.name, len(ch.Witness.Arguments))
			}
		}
	}
}

// TestBoundedPerReport: a report with more changes than the bound gets
// witnesses for the first ones and says so for the rest.
func TestBoundedPerReport(t *testing.T) {
	var tools []string
	for i := range 1001 {
		tools = append(tools, fmt.Sprintf(`{"name":"tool_%04d","inputSchema":{"type":"object"}}`, i))
	}
	old, new := snap(t, tools...), snap(t, `{"name":"other","inputSchema":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}}`)
	r := contract.Diff(old, new, nil)
	witness.Report(r, old, new)
	found, capped := 0, 0
	for _, c := range r.Changes {
		switch {
		case c.Witness.Found():
			found++
		case c.Witness != nil && strings.Contains(c.Witness.None, "more than 1000"):
			capped++
		}
	}
	if found != 1000 || capped != 1 {
		t.Errorf("%d witnesses, %d capped", found, capped)
	}
}

// TestCompileRefusesExternalReferences: a schema cannot make the validator
// read a file or fetch a URL.
func TestCompileRefusesExternalReferences(t *testing.T) {
	for _, ref := range []string{"https://example.com/schema.json", "file:///etc/passwd", "urn:other#/x"} {
		if _, err := witness.Compile([]byte(`{"$ref":"`+ref+`"}`), "urn:test", witness.CompileOptions{}); err == nil {
			t.Errorf("%s was followed", ref)
		}
	}
}
