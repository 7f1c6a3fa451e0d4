package staleness

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/mcpdrift/mcpdrift/contract"
)

// Evidence is what a judge that knows the server's present definition (the
// proxy gate, the interceptor's guard) has about one call.
type Evidence struct {
	// Planned is the digest of the tool's definition the session was last
	// served ("" when it had none).
	Planned string
	// Current is the server's definition of the tool when the call arrives;
	// nil when the judge does not know it. A tool the server no longer
	// offers is a Definition with no digest.
	Current *Definition
	// Superseded are earlier definitions of the tool, newest first: those
	// the session was served, and those the server served within the
	// change's window. A tool that never changed has none, and then
	// nothing is validated.
	Superseded []Definition
	// Arguments are the call's arguments member as sent; nil when they are
	// not known (a call sent without the member passes "{}"). They are read
	// only for a tool with superseded definitions.
	Arguments json.RawMessage
}

// Judge judges calls against definitions it compiles once (Schemas). Safe
// for concurrent use.
type Judge struct {
	schemas *Schemas

	mu    sync.Mutex
	rules map[[2]string][]contract.Change // (superseded, current) -> input changes; bounded
}

// NewJudge returns a judge compiling schemas into s (nil: a cache of its
// own with the default bound).
func NewJudge(s *Schemas) *Judge {
	if s == nil {
		s = NewSchemas(0, nil)
	}
	return &Judge{schemas: s, rules: map[[2]string][]contract.Change{}}
}

// Schemas is the judge's schema cache.
func (j *Judge) Schemas() *Schemas { return j.schemas }

// Judge gives the verdict on one call, evidence strongest first:
//
//  1. arguments: invalid against the current definition and valid against a
//     superseded one: stale (Planned is that one, Witness says what no
//     longer fits). Valid against the current one, or against none, they
//     do not decide (and the superseded ones are not validated: a call that
//     fits costs one validation).
//  2. digest: Planned equal to the current digest: current; equal to a
//     superseded one: stale; another: ahead.
//  3. otherwise (no current definition known, no planned digest): unknown.
//
// Only a tool with superseded definitions costs a validation; for the rest
// this is a few comparisons.
func (j *Judge) Judge(e Evidence) Verdict {
	if e.Current == nil {
		return unknown(e.Planned, "")
	}
	cur := *e.Current
	if e.Arguments != nil && len(e.Superseded) > 0 && cur.Digest != "" {
		if v, ok := j.byArguments(cur, e.Superseded, ReadArguments(e.Arguments)); ok {
			return v
		}
	}
	switch {
	case e.Planned == "":
		return unknown("", cur.Digest)
	case e.Planned == cur.Digest:
		return digestVerdict(Current, e.Planned, cur.Digest)
	}
	for _, s := range e.Superseded {
		if s.Digest == e.Planned {
			return digestVerdict(Stale, e.Planned, cur.Digest)
		}
	}
	return Verdict{State: Ahead, Basis: BasisDigest, Planned: e.Planned, Current: cur.Digest}
}

// byArguments is the argument evidence; ok is false when it does not decide.
func (j *Judge) byArguments(cur Definition, superseded []Definition, args Arguments) (Verdict, bool) {
	sch, err := j.schemas.Get(cur)
	if err != nil {
		return Verdict{}, false
	}
	fits, violation := Validate(sch, args)
	if fits {
		return Verdict{}, false
	}
	for _, s := range superseded {
		if s.Digest == cur.Digest || s.Digest == "" {
			continue
		}
		old, err := j.schemas.Get(s)
		if err != nil {
			continue
		}
		if fitsOld, _ := Validate(old, args); fitsOld {
			return Verdict{State: Stale, Basis: BasisArguments, Planned: s.Digest, Current: cur.Digest,
				Witness: j.witness(s, cur, violation)}, true
		}
	}
	return Verdict{}, false // fits none: a mistake, not a stale plan
}

// witness names what no longer fits, and the change that made it so.
func (j *Judge) witness(planned, cur Definition, v Violation) *Witness {
	w := &Witness{Path: v.Path, Keyword: v.Keyword, Argument: lastSegment(v.Path)}
	if len(v.Members) > 0 {
		w.Argument = v.Members[0]
	}
	w.Argument = contract.TruncateBytes(contract.SafeText(w.Argument), 128)
	w.Path = contract.TruncateBytes(contract.SafeText(w.Path), 256)
	w.Rule = string(matchRule(j.changes(planned, cur), v))
	return w
}

// maxRulePairs bounds the classified differences a judge keeps.
const maxRulePairs = 256

// changes is the classified difference of two definitions' input schemas,
// computed once per pair (only stale calls ask).
func (j *Judge) changes(planned, cur Definition) []contract.Change {
	key := [2]string{planned.Digest, cur.Digest}
	j.mu.Lock()
	c, ok := j.rules[key]
	j.mu.Unlock()
	if ok {
		return c
	}
	c = inputChanges(planned, cur)
	j.mu.Lock()
	if len(j.rules) >= maxRulePairs {
		clear(j.rules)
	}
	j.rules[key] = c
	j.mu.Unlock()
	return c
}

func inputChanges(planned, cur Definition) []contract.Change {
	name := toolName(cur.Raw)
	one := func(d Definition) *contract.Snapshot {
		raw := d.Raw
		if d.InputSchema != nil || raw == nil {
			// Only the inputSchema is kept: the input rules need no more.
			raw, _ = json.Marshal(struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema,omitempty"`
			}{name, d.inputSchema()})
		}
		return &contract.Snapshot{Tools: contract.Listing{{Key: name, Digest: d.Digest, Raw: raw}}}
	}
	var out []contract.Change
	for _, c := range contract.Diff(one(planned), one(cur), nil).Changes {
		if strings.HasPrefix(string(c.Rule), "input.") {
			out = append(out, contract.Change{Rule: c.Rule, Path: c.Path})
		}
	}
	return out
}

func toolName(raw json.RawMessage) string {
	var d struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(raw, &d)
	return d.Name
}

// matchRule finds the change behind a violation: the one at the failing
// keyword (as the validator resolved it, or as the instance location
// spells it through properties and items), or at a member it names; else,
// the one whose path is closest to it; else the worst input change.
func matchRule(changes []contract.Change, v Violation) contract.RuleID {
	if len(changes) == 0 {
		return ""
	}
	kw := v.Keyword
	spelled := "/inputSchema" + schemaPath(v.inst)
	var exact []string
	if v.schemaAt != "" {
		exact = append(exact, "/inputSchema"+v.schemaAt)
	}
	exact = append(exact, spelled+"/"+kw)
	for _, m := range v.Members {
		exact = append(exact, spelled+"/properties/"+escapePointer(m))
	}
	for _, p := range exact {
		for _, c := range changes {
			if c.Path == p {
				return c.Rule
			}
		}
	}
	best, bestLen := contract.RuleID(""), -1
	for _, c := range changes {
		for _, p := range exact {
			if n := commonPrefix(c.Path, p); n > bestLen {
				best, bestLen = c.Rule, n
			}
		}
	}
	if best != "" {
		return best
	}
	return changes[0].Rule
}

// schemaPath spells an instance location as the schema path that usually
// holds it: properties for members, items for array elements.
func schemaPath(inst []string) string {
	var b strings.Builder
	for _, t := range inst {
		if isIndex(t) {
			b.WriteString("/items")
			continue
		}
		b.WriteString("/properties/")
		b.WriteString(escapePointer(t))
	}
	return b.String()
}

func isIndex(t string) bool {
	if t == "" {
		return false
	}
	for _, r := range t {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// commonPrefix is the length of the shared leading pointer tokens.
func commonPrefix(a, b string) int {
	at, bt := strings.Split(a, "/"), strings.Split(b, "/")
	n := 0
	for n < len(at) && n < len(bt) && at[n] == bt[n] {
		n++
	}
	return n
}
