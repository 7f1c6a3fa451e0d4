package staleness

import (
	"encoding/json"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// maxArgumentDepth bounds the nesting of arguments the judge reads; deeper
// ones are not read, and then their arguments do not decide.
const maxArgumentDepth = 64

// decode reads one JSON value the way the validator takes it (objects as
// map[string]any, numbers as json.Number, so no precision is lost), with
// the repository's bounded scanner: encoding/json's Decoder costs a buffer
// and reflection per call, and this runs on the call path. ok is false for
// anything that is not a single JSON value. A member repeated in an object
// keeps its last value, as encoding/json does.
func decode(b []byte, depth int) (any, bool) {
	b = trim(b)
	if len(b) == 0 || depth > maxArgumentDepth {
		return nil, false
	}
	switch b[0] {
	case '{':
		o, _ := jsonwire.NewObject(b)
		m := map[string]any{}
		for mem, more := o.Next(); more; mem, more = o.Next() {
			k, ok := decodeString(b[mem.Start : mem.Start+len(mem.Key)+2])
			if !ok {
				return nil, false
			}
			v, ok := decode(mem.Value, depth+1)
			if !ok {
				return nil, false
			}
			m[k] = v
		}
		return m, !o.Err() && o.End() == len(b)
	case '[':
		a, _ := jsonwire.NewArray(b)
		l := []any{}
		for e, more := a.Next(); more; e, more = a.Next() {
			v, ok := decode(e, depth+1)
			if !ok {
				return nil, false
			}
			l = append(l, v)
		}
		end := jsonwire.SkipSpace(b, a.Offset())
		return l, !a.Err() && end == len(b)-1 && b[end] == ']'
	case '"':
		return decodeString(b)
	}
	switch string(b) {
	case "true":
		return true, true
	case "false":
		return false, true
	case "null":
		return nil, true
	}
	if !json.Valid(b) { // what is left valid is a number
		return nil, false
	}
	return json.Number(b), true
}

// decodeString reads a JSON string token: plain ASCII directly, anything
// with escapes or other bytes as encoding/json does (invalid UTF-8 becomes
// U+FFFD, raw control characters are refused).
func decodeString(b []byte) (string, bool) {
	if end, ok := jsonwire.SkipValue(b, 0); !ok || end != len(b) {
		return "", false
	}
	inner := b[1 : len(b)-1]
	plain := true
	for _, c := range inner {
		if c < 0x20 {
			return "", false
		}
		if c == '\\' || c >= 0x80 {
			plain = false
		}
	}
	if plain {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(b, &s) != nil {
		return "", false
	}
	return s, true
}

// trim drops JSON whitespace at both ends.
func trim(b []byte) []byte {
	b = b[jsonwire.SkipSpace(b, 0):]
	for len(b) > 0 {
		switch b[len(b)-1] {
		case ' ', '\t', '\n', '\r':
			b = b[:len(b)-1]
			continue
		}
		break
	}
	return b
}
