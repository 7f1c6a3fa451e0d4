package contract

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// rulesSeen records every rule a test diff produced; TestMain checks, when
// the whole suite runs, that every rule in the table was exercised.
var rulesSeen sync.Map

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && !testing.Short() {
		var missing []string
		for _, r := range Rules() {
			if _, ok := rulesSeen.Load(r.ID); !ok {
				missing = append(missing, string(r.ID))
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "rules never produced by a test: %s\n", strings.Join(missing, ", "))
			code = 1
		}
	}
	os.Exit(code)
}

// record notes the rules of a report and checks each is in the table.
func record(t testing.TB, r *Report) *Report {
	t.Helper()
	for _, c := range r.Changes {
		if _, ok := LookupRule(c.Rule); !ok {
			t.Errorf("change with unknown rule %q", c.Rule)
		}
		rulesSeen.Store(c.Rule, true)
	}
	return r
}

// snap builds a sealed snapshot from raw JSON pieces: tools, and optional
// initialize result, prompts, resources and templates list results.
type snapSpec struct {
	tools                        []string
	prompts, resources, template []string
	init                         string
}

func snapshotOf(t testing.TB, s snapSpec) *Snapshot {
	t.Helper()
	var inputs [][]byte
	page := func(member string, defs []string) {
		inputs = append(inputs, []byte(`{"`+member+`":[`+strings.Join(defs, ",")+`]}`))
	}
	page("tools", s.tools)
	if s.prompts != nil {
		page("prompts", s.prompts)
	}
	if s.resources != nil {
		page("resources", s.resources)
	}
	if s.template != nil {
		page("resourceTemplates", s.template)
	}
	if s.init != "" {
		inputs = append(inputs, []byte(s.init))
	}
	doc, err := ReadDocument(ReadOptions{}, inputs...)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return doc.Snapshot
}

// diffTools diffs two single-tool listings.
func diffTools(t testing.TB, old, new string, p *Policy) *Report {
	t.Helper()
	return record(t, Diff(snapshotOf(t, snapSpec{tools: []string{old}}), snapshotOf(t, snapSpec{tools: []string{new}}), p))
}

// rulesAt lists "rule@path" for each change, sorted.
func rulesAt(r *Report) []string {
	var out []string
	for _, c := range r.Changes {
		out = append(out, string(c.Rule)+"@"+c.Path)
	}
	slices.Sort(out)
	return out
}

func ruleIDs(r *Report) []string {
	var out []string
	for _, c := range r.Changes {
		out = append(out, string(c.Rule))
	}
	slices.Sort(out)
	return out
}

func findChange(r *Report, rule RuleID) (Change, bool) {
	for _, c := range r.Changes {
		if c.Rule == rule {
			return c, true
		}
	}
	return Change{}, false
}

// An id the rule table lacks is a programming error: emitting it fails the
// test that does, rather than passing as a warning.
func TestUnknownRuleFailsTests(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a change with an unknown rule id was accepted")
		}
	}()
	(&collector{}).add(RuleID("tool.no_such_rule"), KindTool, "t", "", nil, nil, nil)
}
