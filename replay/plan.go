// Package replay sends the calls an agent planned against an old contract
// to a live new server and grades how the server answers: the release-gate
// test that lists a tool, changes it, issues the old call, and proves that
// the server either keeps the old safe behaviour or does nothing and
// answers with an error an agent can repair.
//
// Plan turns a classified report (with witnesses) into calls; Run sends
// them over a probe.Session; Grade judges each answer. Calls have side
// effects: run replay against a test deployment.
package replay

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"github.com/mcpdrift/mcpdrift/contract/witness"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// Expect is what the new contract says should happen to an old call.
type Expect string

const (
	// ExpectReject: the new schema rejects the arguments, or the new
	// listing has no tool by that name. The server should refuse the call
	// with an error an agent can repair.
	ExpectReject Expect = "reject"
	// ExpectAccept: the new schema still accepts the old call.
	ExpectAccept Expect = "accept"
)

// Call is one old call to replay.
type Call struct {
	// Tool is the name the old contract called it by.
	Tool string `json:"tool"`
	// Arguments is the old call's arguments object.
	Arguments json.RawMessage `json:"arguments"`
	// Rules are the changes this call shows (rule IDs).
	Rules []contract.RuleID `json:"rules"`
	// Severity is the worst of those changes.
	Severity contract.Severity `json:"severity"`
	// Expect says whether the new contract rejects or accepts the call.
	Expect Expect `json:"expect"`
	// Why is the witness's verdict under the new contract, or why the call
	// is expected to pass.
	Why string `json:"why"`
	// Skip, when set, says why the call is not sent (a destructive tool).
	Skip string `json:"skip,omitempty"`
	// names are what a graceful error names: the changed parameters, the
	// tool of a removed tool.
	names []string
}

// PlanOptions bound and filter a plan.
type PlanOptions struct {
	// IncludeDestructive sends calls to tools annotated destructiveHint:
	// true too; by default they are planned but skipped.
	IncludeDestructive bool
	// MaxCalls bounds the calls (default 50); MaxPerTool the calls per
	// tool (default 5).
	MaxCalls, MaxPerTool int
	// Tools, when set, keeps only calls to these names.
	Tools []string
}

// Defaults of PlanOptions.
const (
	DefaultMaxCalls   = 50
	DefaultMaxPerTool = 5
)

// Plan lists the old calls to replay for every changed tool of r (a diff
// of old against new, with witnesses): each witness of a narrowing input
// change (an old call the new schema rejects) and of a removed or renamed
// tool (an old call to a name the new listing lacks); for a changed tool
// without such a witness, the smallest call the old schema accepts, which
// the new server should still accept. Added tools have no old call.
func Plan(r *contract.Report, old, new *contract.Snapshot, o PlanOptions) []Call {
	if o.MaxCalls <= 0 {
		o.MaxCalls = DefaultMaxCalls
	}
	if o.MaxPerTool <= 0 {
		o.MaxPerTool = DefaultMaxPerTool
	}
	oldDefs, newDefs := definitions(old), definitions(new)
	renamedFrom := map[string]string{}
	for _, c := range r.Changes {
		if c.Rule == contract.RuleToolRenamed {
			if to, ok := canon.UnquoteKey(c.After); ok {
				renamedFrom[to] = c.Name
			}
		}
	}
	// Changes by the name the call goes to, in report order (worst first):
	// a removed or renamed tool is called by its old name (the old call
	// verbatim); any other change by the tool's current name, which for a
	// renamed tool is the agent that refreshed its listing and kept its
	// old arguments.
	var order []string
	byTool := map[string][]contract.Change{}
	oldDefOf := map[string]json.RawMessage{}
	for _, c := range r.Changes {
		if c.Subject != contract.KindTool || c.Rule == contract.RuleToolAdded || c.Rule == contract.RuleToolAddedSuspicious || c.Severity < contract.Compatible {
			continue
		}
		def, ok := oldDefs[c.Name]
		if from, renamed := renamedFrom[c.Name]; renamed {
			def, ok = oldDefs[from], true
		}
		if !ok {
			continue
		}
		if len(o.Tools) > 0 && !slices.Contains(o.Tools, c.Name) {
			continue
		}
		if _, seen := byTool[c.Name]; !seen {
			order = append(order, c.Name)
			oldDefOf[c.Name] = def
		}
		byTool[c.Name] = append(byTool[c.Name], c)
	}
	g := witness.New()
	var calls []Call
	for _, name := range order {
		var toolCalls []Call
		add := func(call Call) {
			for i, have := range toolCalls {
				if string(have.Arguments) == string(call.Arguments) {
					toolCalls[i].Rules = append(toolCalls[i].Rules, call.Rules...)
					toolCalls[i].Severity = max(have.Severity, call.Severity)
					toolCalls[i].names = append(toolCalls[i].names, call.names...)
					return
				}
			}
			toolCalls = append(toolCalls, call)
		}
		var rules []contract.RuleID
		worst := contract.None
		for _, c := range byTool[name] {
			rules = append(rules, c.Rule)
			worst = max(worst, c.Severity)
			w := c.Witness
			if !w.Narrowing() || w.Arguments == nil {
				continue
			}
			add(Call{Tool: name, Arguments: w.Arguments, Rules: []contract.RuleID{c.Rule}, Severity: c.Severity, Expect: ExpectReject, Why: w.New, names: subjects(c, name)})
		}
		if len(toolCalls) == 0 {
			args, err := g.Call(oldDefOf[name])
			if err != nil {
				continue
			}
			call := Call{Tool: name, Arguments: args, Rules: uniq(rules), Severity: worst, Expect: ExpectAccept, Why: "the new schema still accepts the smallest old call"}
			if ok, reason, err := g.Accepts(newDefs[name], args); err == nil && !ok {
				call.Expect, call.Why = ExpectReject, reason
				call.names = quoted(reason)
			}
			add(call)
		}
		if len(toolCalls) > o.MaxPerTool {
			toolCalls = toolCalls[:o.MaxPerTool]
		}
		if !o.IncludeDestructive && (destructive(oldDefOf[name]) || destructive(newDefs[name])) {
			for i := range toolCalls {
				toolCalls[i].Skip = "annotated destructiveHint: true (send it with --include-destructive)"
			}
		}
		for i := range toolCalls {
			toolCalls[i].Rules = uniq(toolCalls[i].Rules)
		}
		calls = append(calls, toolCalls...)
	}
	if len(calls) > o.MaxCalls {
		calls = calls[:o.MaxCalls]
	}
	return calls
}

func definitions(s *contract.Snapshot) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	for _, d := range s.Tools {
		if _, dup := m[d.Key]; !dup {
			m[d.Key] = d.Raw
		}
	}
	return m
}

// destructive reports a definition annotated destructiveHint: true (and not
// readOnlyHint: true, under which the hint does not apply).
func destructive(def json.RawMessage) bool {
	a := jsonwire.Lookup(def, "annotations")
	return a != nil && jsonwire.IsTrue(jsonwire.Lookup(a, "destructiveHint")) && !jsonwire.IsTrue(jsonwire.Lookup(a, "readOnlyHint"))
}

// subjects are the names an error that explains a change would mention:
// the changed parameter (and the one newly required), names the
// validator's reason quotes, and for a removed or renamed tool its name.
func subjects(c contract.Change, tool string) []string {
	var out []string
	if c.Rule == contract.RuleToolRemoved || c.Rule == contract.RuleToolRenamed {
		out = append(out, tool)
	}
	segs := strings.Split(c.Path, "/")
	for i := 0; i+1 < len(segs); i++ {
		if segs[i] == "properties" {
			out = append(out, unescape(segs[i+1]))
		}
	}
	if s, ok := canon.UnquoteKey(c.After); ok && (strings.HasSuffix(string(c.Rule), "required.added") || strings.Contains(string(c.Rule), "dependent_required")) {
		out = append(out, s)
	}
	if c.Witness != nil {
		out = append(out, quoted(c.Witness.New)...)
	}
	return uniq(out)
}

// quoted extracts 'single-quoted' names from a validator message
// ("missing property 'project'", "additional properties 'legacy' not
// allowed").
func quoted(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '\'')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(s[i+1:], '\'')
		if j < 0 {
			return out
		}
		if name := s[i+1 : i+1+j]; name != "" && len(name) <= 64 && !strings.ContainsAny(name, " ,") {
			out = append(out, name)
		}
		s = s[i+j+2:]
	}
}

func unescape(seg string) string {
	return strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
}

func uniq[S ~string](ss []S) []S {
	var out []S
	for _, s := range ss {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
