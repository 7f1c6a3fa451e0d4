// Package staleness is mcpdrift's one judgement of whether a tool call was
// planned against a definition the server no longer serves. The proxy gate,
// the interceptor's guard and the mcpimpact processor all call it, so a call
// is stale (or not) in the same way wherever it is seen
// (docs/mcpimpact.md, "What stale means").
//
// A call is stale when the definition it was planned against is not the one
// the server serves when the call arrives. Evidence, strongest first:
//
//  1. its arguments: valid against a superseded definition of the tool and
//     invalid against the current one (Judge.Judge): stale, whatever the
//     session's latest listing says, because hosts re-list within seconds of
//     a change while the model's plan still follows the old definition;
//  2. the digest the session was served, against the server's definition at
//     the call's time (Judge.Judge for a judge that knows the server's
//     definition now, JudgeDigest for one that knows its history);
//  3. otherwise unknown, never stale.
//
// A digest the judge's source of truth has not seen yet is ahead: the
// client listed after the server changed and before the judge noticed.
package staleness

// State is the judgement of one call.
type State string

const (
	// Current: the call was planned against the definition the server
	// serves when the call arrives.
	Current State = "current"
	// Stale: it was planned against a definition the server no longer
	// serves.
	Stale State = "stale"
	// Ahead: it carries a digest the judge has not seen the server serve
	// yet (a prompt look at the server settles it).
	Ahead State = "ahead"
	// Unknown: the evidence does not decide. Never counted as stale.
	Unknown State = "unknown"
)

// Basis is the evidence a verdict rests on.
type Basis string

const (
	// BasisArguments: the call's arguments fit one definition and not the
	// other.
	BasisArguments Basis = "arguments"
	// BasisDigest: the digest the session was served, against the server's.
	BasisDigest Basis = "digest"
	// BasisWindow: no judgement, a precaution: the opt-in window refuses
	// the first call after the session was served a change that arguments
	// cannot reveal (see Window).
	BasisWindow Basis = "window"
	// BasisNone: nothing decided (State Unknown).
	BasisNone Basis = "none"
)

// Verdict is the judgement of one call and what it rests on.
type Verdict struct {
	State State
	Basis Basis
	// Planned is the digest the call is judged to have been planned
	// against: for argument evidence the superseded definition its
	// arguments fit, else the digest the session was served.
	Planned string
	// Current is the digest of the server's definition when the call
	// arrived, as the judge knows it ("" when the tool was not offered or
	// the judge does not know).
	Current string
	// Witness says which part of the arguments no longer fits, for
	// argument evidence of a stale call; nil otherwise.
	Witness *Witness
}

// Witness is where a stale call's arguments stopped fitting: names and
// locations, never argument values (they may hold secrets).
type Witness struct {
	// Rule is the contract rule id (docs/rules.md) of the change between
	// the planned definition and the current one that the arguments fail
	// ("input.property.added_required"); "" when no classified change
	// matches the failure.
	Rule string `json:"rule,omitempty"`
	// Path is the JSON pointer into the arguments where the current
	// definition rejects them ("" is the arguments object itself).
	Path string `json:"path"`
	// Keyword is the JSON Schema keyword that rejects them ("required",
	// "type", "additionalProperties", ...).
	Keyword string `json:"keyword"`
	// Argument names the argument that no longer fits: the member now
	// required, the member now refused, or the member at Path; "" when the
	// failure is not about one member.
	Argument string `json:"argument,omitempty"`
}

// String is the witness in one line: "/project: required (input.property.added_required)".
func (w *Witness) String() string {
	if w == nil {
		return ""
	}
	s := w.Path + ": " + w.Keyword
	if w.Argument != "" && w.Argument != lastSegment(w.Path) {
		s = w.Path + "/" + escapePointer(w.Argument) + ": " + w.Keyword
	}
	if w.Rule != "" {
		s += " (" + w.Rule + ")"
	}
	return s
}

// unknown is the verdict when nothing decides.
func unknown(planned, current string) Verdict {
	return Verdict{State: Unknown, Basis: BasisNone, Planned: planned, Current: current}
}
