package witness

import (
	"encoding/json"
	"slices"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// Values the generator builds are what encoding/json decodes into
// (map[string]any, []any, string, json.Number, bool, nil): the validator
// takes them as they are, and appendJSON writes them deterministically.

// appendJSON writes a value as compact JSON, members sorted by name.
func appendJSON(buf []byte, x any) []byte {
	switch v := x.(type) {
	case nil:
		return append(buf, "null"...)
	case bool:
		if v {
			return append(buf, "true"...)
		}
		return append(buf, "false"...)
	case json.Number:
		return append(buf, v...)
	case string:
		return jsonwire.AppendString(buf, v)
	case []any:
		buf = append(buf, '[')
		for i, m := range v {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendJSON(buf, m)
		}
		return append(buf, ']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf = append(buf, '{')
		for i, k := range keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(jsonwire.AppendString(buf, k), ':')
			buf = appendJSON(buf, v[k])
		}
		return append(buf, '}')
	}
	return append(buf, "null"...)
}

// decodeNode reads a JSON value of a document into a generator value.
func (d *doc) decodeNode(n node, depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	raw := d.bytes(n)
	switch d.first(n) {
	case '"':
		return jsonwire.String(raw)
	case '{':
		out := map[string]any{}
		for _, m := range d.objectMembers(n) {
			x, ok := d.decodeNode(m.value, depth+1)
			if !ok {
				return nil, false
			}
			out[m.name] = x
		}
		return out, true
	case '[':
		out := []any{}
		for _, it := range d.items(n) {
			x, ok := d.decodeNode(it, depth+1)
			if !ok {
				return nil, false
			}
			out = append(out, x)
		}
		return out, true
	case 't', 'f':
		b, ok := d.boolean(n)
		return b, ok
	case 'n':
		return nil, string(raw) == "null"
	}
	if _, ok := d.num(n); ok {
		return json.Number(raw), true
	}
	return nil, false
}
