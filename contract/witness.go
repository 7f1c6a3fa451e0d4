package contract

import "encoding/json"

// Witness proves a schema change by example: a concrete argument object (for
// an inputSchema change) or structuredContent result (for an outputSchema
// change) that one version of the schema accepts and the other rejects, as a
// JSON Schema validator judged it. For a narrowing the old schema accepts it
// and the new one rejects it (the old call that now fails); for a loosening
// it is the reverse. For a removed or renamed tool it is an old call the old
// schema accepts, sent to a name the new listing no longer has.
//
// Package contract/witness builds them; a change carries its witness in
// Change.Witness once built. When none could be found, None says why and
// the other fields are empty.
type Witness struct {
	// Arguments is the tools/call arguments object (inputSchema changes,
	// removed and renamed tools).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Result is the structuredContent object (outputSchema changes).
	Result json.RawMessage `json:"result,omitempty"`
	// Old and New are "valid", or the validator's reason for rejecting the
	// value under that version ("/mode: value must be one of 'fast'").
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
	// None, when set, says why no witness exists or was found.
	None string `json:"none,omitempty"`
}

// WitnessValid is the verdict of a version that accepts the witness.
const WitnessValid = "valid"

// Found reports whether w holds a witness (not a "none" explanation).
func (w *Witness) Found() bool {
	return w != nil && w.None == "" && (w.Arguments != nil || w.Result != nil)
}

// Value returns the witness value: the arguments or the result.
func (w *Witness) Value() json.RawMessage {
	if w == nil {
		return nil
	}
	if w.Arguments != nil {
		return w.Arguments
	}
	return w.Result
}

// ValueKind names what Value is: "arguments" or "result".
func (w *Witness) ValueKind() string {
	if w != nil && w.Arguments == nil && w.Result != nil {
		return "result"
	}
	return "arguments"
}

// Narrowing reports whether the old version accepts the witness and the new
// one rejects it: the old call (or result) that the change breaks.
func (w *Witness) Narrowing() bool {
	return w.Found() && w.Old == WitnessValid && w.New != WitnessValid
}
