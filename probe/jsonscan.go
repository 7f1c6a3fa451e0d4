package probe

import (
	"errors"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// maxMessageDepth is the deepest nesting the probe reads in a message (the
// envelope walker's bound); Options.Validate keeps Limits.MaxDepth below it,
// so every depth over the limit is too_large wherever it is found.
const maxMessageDepth = jsonwire.MaxDepth

// errNotObject is returned by topMembers for input that is not a JSON object.
var errNotObject = errors.New("not a JSON object")

// topMembers returns the raw values of the top-level members of a JSON
// object, without parsing the values: a list result is megabytes of
// definitions that contract.ParsePage validates and canonicalizes anyway,
// so decoding the envelope must not pay for a second full parse. jsonwire
// checks the structure it walks (strings, brackets, separators); this adds
// the refusal of a repeated top-level name and of data after the object.
func topMembers(raw []byte) (map[string][]byte, error) {
	o, ok := jsonwire.NewObject(raw)
	if !ok {
		return nil, errNotObject
	}
	out := map[string][]byte{}
	for {
		m, ok := o.Next()
		if !ok {
			break
		}
		name, ok := m.Name()
		if !ok {
			return nil, errors.New("invalid member name")
		}
		if _, dup := out[name]; dup {
			return nil, errors.New("repeated member name " + contract.TruncateBytes(name, 40))
		}
		out[name] = m.Value
	}
	if o.Err() {
		if _, deep := (jsonwire.Limits{MaxDepth: maxMessageDepth}).Scan(raw); deep != nil {
			// The walker's own bound: report it as the limit it is
			// (canon.ErrTooDeep), like the shallower depths
			// contract.Limits refuses.
			return nil, deep
		}
		return nil, errors.New("malformed JSON object")
	}
	if jsonwire.SkipSpace(raw, o.End()) != len(raw) {
		return nil, errors.New("data after the JSON object")
	}
	return out, nil
}
