package witness

import (
	"bytes"
	"encoding/json"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// decodeJSON reads a JSON document into what jsonschema.UnmarshalJSON
// makes of it (map[string]any, []any, string, json.Number, bool, nil),
// for the compiler. Plain text — strings of printable ASCII without
// escapes, which is what schemas, and the pruned ones above all, are made
// of — is read here, in one pass and with one copy of the text for all its
// strings; anything else (an escape, another byte in a string, malformed
// text, deep nesting) is left to jsonschema.UnmarshalJSON, so the value,
// or the error, is always the library's.
func decodeJSON(b []byte) (any, error) {
	p := plainJSON{b: b, text: string(b)}
	if v, ok := p.value(0); ok {
		if p.space(); p.i == len(b) {
			return v, nil
		}
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// plainJSON reads plain JSON text; ok false means "not plain": the caller
// falls back to the library.
type plainJSON struct {
	b    []byte
	text string // b, copied once: strings are cut from it
	i    int
}

// maxPlainDepth is the nesting plainJSON reads; deeper text falls back.
const maxPlainDepth = 256

func (p *plainJSON) space() { p.i = jsonwire.SkipSpace(p.b, p.i) }

func (p *plainJSON) value(depth int) (any, bool) {
	if p.space(); p.i >= len(p.b) || depth > maxPlainDepth {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, false
}

func (p *plainJSON) object(depth int) (any, bool) {
	out := map[string]any{}
	p.i++ // '{'
	if p.space(); p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return out, true
	}
	for {
		if p.space(); p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, false
		}
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		if p.space(); p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, false
		}
		p.i++
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		out[k] = v // a repeated name: the last one wins, as in encoding/json
		if more, ok := p.next('}'); !more {
			return out, ok
		}
	}
}

func (p *plainJSON) array(depth int) (any, bool) {
	out := []any{}
	p.i++ // '['
	if p.space(); p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return out, true
	}
	for {
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if more, ok := p.next(']'); !more {
			return out, ok
		}
	}
}

// next reads what follows a member or an element: a comma (more), the
// closing bracket (ok), or anything else (neither).
func (p *plainJSON) next(closing byte) (more, ok bool) {
	if p.space(); p.i >= len(p.b) {
		return false, false
	}
	switch p.b[p.i] {
	case ',':
		p.i++
		return true, true
	case closing:
		p.i++
		return false, true
	}
	return false, false
}

// str reads a string of printable ASCII without escapes.
func (p *plainJSON) str() (string, bool) {
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			return p.text[start:j], true
		case c < 0x20 || c > 0x7e || c == '\\':
			return "", false
		}
	}
	return "", false
}

func (p *plainJSON) literal(word string) bool {
	if !bytes.HasPrefix(p.b[p.i:], []byte(word)) {
		return false
	}
	p.i += len(word)
	return true
}

// number reads a number as JSON writes it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *plainJSON) number() (any, bool) {
	b, start := p.b, p.i
	i := start
	if b[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return nil, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return nil, false
		}
	}
	p.i = i
	return json.Number(p.text[start:i]), true
}
