package witness_test

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/internal/schemacases"
	"github.com/mcpdrift/mcpdrift/contract/witness"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

func snap(t testing.TB, tools ...string) *contract.Snapshot {
	t.Helper()
	doc, err := contract.ReadDocument(contract.ReadOptions{}, []byte(`{"tools":[`+strings.Join(tools, ",")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	return doc.Snapshot
}

// noWitnessPossible are the breaking schema rules for which no witness can
// exist, and why (docs/diff.md says the same).
var noWitnessPossible = map[string]string{
	"description.suspicious": "the change is to text a model reads; every value validates as before",
}

// casesWithoutWitness are rule cases whose schemas cannot be validated as
// written, and why.
var casesWithoutWitness = map[string]string{
	"draft-07 tuple items narrowed": "an array under items is draft-07 syntax, and the schema names no draft: as JSON Schema 2020-12 (what the guard and the validator assume) it is invalid",
}

type tally struct{ changes, found int }

// TestRuleCoverage runs every per-rule case of the diff tests, in all four
// positions and both directions, and requires a witness for every change
// a schema rule classifies breaking. Each witness is validated again
// against the whole schemas, not the pruned ones the generator compiles,
// so the pruning is checked too. The coverage over the rule table is
// logged.
func TestRuleCoverage(t *testing.T) {
	byRule := coverage(t, nil)
	// Every breaking schema rule of the table yields a witness somewhere.
	var lines []string
	for _, rule := range contract.Rules() {
		if rule.Direction == "" {
			continue
		}
		tl := byRule[rule.ID]
		suffix := strings.TrimPrefix(string(rule.ID), string(rule.Direction)+".")
		if tl == nil {
			lines = append(lines, fmt.Sprintf("%-45s %-10s no case", rule.ID, rule.Severity))
			continue
		}
		lines = append(lines, fmt.Sprintf("%-45s %-10s %d/%d", rule.ID, rule.Severity, tl.found, tl.changes))
		if rule.Severity == contract.Breaking && tl.found == 0 && noWitnessPossible[suffix] == "" {
			t.Errorf("breaking rule %s never yields a witness", rule.ID)
		}
	}
	sort.Strings(lines)
	t.Logf("witness coverage (rule, default severity, witnesses/changes):\n%s", strings.Join(lines, "\n"))
}

// noEffect are the schema rules whose changes validate every value as
// before, so no witness exists under any policy.
var noEffect = []string{"description.changed", "description.suspicious", "annotation.changed", "default.changed", "keyword.changed", "ref.changed"}

// TestEveryRuleUnderAStrictPolicy classifies every rule breaking, so that
// the loosening rules (compatible by default on inputs) are searched too:
// each schema rule that changes what validates yields a true witness.
func TestEveryRuleUnderAStrictPolicy(t *testing.T) {
	p, err := contract.NewPolicy(contract.PolicyConfig{Severities: map[string]contract.Severity{"*": contract.Breaking}})
	if err != nil {
		t.Fatal(err)
	}
	byRule := coverage(t, p)
	for _, rule := range contract.Rules() {
		suffix := strings.TrimPrefix(string(rule.ID), string(rule.Direction)+".")
		if rule.Direction == "" || slices.Contains(noEffect, suffix) || suffix == "schema.too_complex" {
			continue
		}
		if tl := byRule[rule.ID]; tl == nil || tl.found == 0 {
			t.Errorf("%s never yields a witness", rule.ID)
		}
	}
}

// coverage diffs every case under policy p (nil: default), checks every
// witness against the full schemas and tallies witnesses per rule.
func coverage(t *testing.T, p *contract.Policy) map[contract.RuleID]*tally {
	byRule := map[contract.RuleID]*tally{}
	for _, c := range schemacases.Cases {
		for _, v := range schemacases.Variants {
			for _, dir := range []string{"input", "output"} {
				oldTool, newTool := schemacases.Tool(dir, v.Wrap(c.Old)), schemacases.Tool(dir, v.Wrap(c.New))
				old, new := snap(t, oldTool), snap(t, newTool)
				r := contract.Diff(old, new, p)
				witness.Report(r, old, new)
				for _, ch := range r.Changes {
					if !witness.Applies(ch) {
						if ch.Witness != nil {
							t.Errorf("%s/%s: %s (%s) got a witness it does not apply to", c.Name, v.Name, ch.Rule, ch.Severity)
						}
						continue
					}
					suffix := strings.TrimPrefix(strings.TrimPrefix(string(ch.Rule), "input."), "output.")
					tl := byRule[ch.Rule]
					if tl == nil {
						tl = &tally{}
						byRule[ch.Rule] = tl
					}
					tl.changes++
					w := ch.Witness
					if w == nil {
						t.Fatalf("%s/%s/%s: %s has no witness field", c.Name, v.Name, dir, ch.Rule)
					}
					if !w.Found() {
						_, impossible := noWitnessPossible[suffix]
						_, excused := casesWithoutWitness[c.Name]
						if p == nil && ch.Severity == contract.Breaking && !impossible && !excused {
							t.Errorf("%s/%s: breaking %s at %s has no witness: %s", c.Name, v.Name, ch.Rule, ch.Path, w.None)
						}
						if w.None == "" {
							t.Errorf("%s/%s: %s: no witness and no reason", c.Name, v.Name, ch.Rule)
						}
						continue
					}
					tl.found++
					checkTrue(t, fmt.Sprintf("%s/%s %s", c.Name, v.Name, ch.Rule), dir, oldTool, newTool, w)
				}
			}
		}
	}
	return byRule
}

// checkTrue validates a witness against the full old and new schemas.
func checkTrue(t *testing.T, what, dir, oldTool, newTool string, w *contract.Witness) {
	t.Helper()
	member := dir + "Schema"
	value := w.Arguments
	if dir == "output" {
		value = w.Result
	}
	if value == nil {
		t.Errorf("%s: a %s witness without its value: %+v", what, dir, w)
		return
	}
	verdict := func(tool string) string {
		sch, err := witness.Compile(jsonwire.Lookup([]byte(tool), member), "urn:test", witness.CompileOptions{AssertFormat: true})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := sch.Validate(inst); err != nil {
			return "invalid"
		}
		return contract.WitnessValid
	}
	gotOld, gotNew := verdict(oldTool), verdict(newTool)
	wantOld, wantNew := valid(w.Old), valid(w.New)
	if gotOld != wantOld || gotNew != wantNew || gotOld == gotNew {
		t.Errorf("%s: witness %s claims old %q new %q; the full schemas say old %s, new %s", what, value, w.Old, w.New, gotOld, gotNew)
	}
}

func valid(verdict string) string {
	if verdict == contract.WitnessValid {
		return verdict
	}
	return "invalid"
}

// TestWitnessesOnlyForSchemaAndToolChanges: prompts, resources, server
// changes and info/compatible tool changes carry none.
func TestWitnessesOnlyForSchemaAndToolChanges(t *testing.T) {
	for _, c := range []contract.Change{
		{Rule: "prompt.removed", Severity: contract.Breaking, Subject: contract.KindPrompt},
		{Rule: "tool.added", Severity: contract.Compatible, Subject: contract.KindTool},
		{Rule: "input.property.added", Severity: contract.Compatible, Subject: contract.KindTool},
		{Rule: "capability.removed", Severity: contract.Breaking, Subject: contract.KindServer},
	} {
		if witness.Applies(c) {
			t.Errorf("%s applies", c.Rule)
		}
	}
	for _, c := range []contract.Change{
		{Rule: "tool.removed", Severity: contract.Breaking, Subject: contract.KindTool},
		{Rule: "input.limit.added", Severity: contract.Warning, Subject: contract.KindTool},
		{Rule: "output.type.widened", Severity: contract.Breaking, Subject: contract.KindTool},
	} {
		if !witness.Applies(c) {
			t.Errorf("%s does not apply", c.Rule)
		}
	}
}
