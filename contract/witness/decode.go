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
	case c == '-' || c >= '0' && c <= '9':
		end, ok := jsonwire.Number(p.b, p.i)
		if !ok {
			return nil, false
		}
		n := json.Number(p.text[p.i:end])
		p.i = end
		return n, true
	}
	end, lit, ok := jsonwire.Literal(p.b, p.i)
	p.i = end
	switch lit {
	case "true":
		return true, ok
	case "false":
		return false, ok
	}
	return nil, ok
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
	p.i, more, ok = jsonwire.Sep(p.b, p.i, closing)
	return more, ok
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
