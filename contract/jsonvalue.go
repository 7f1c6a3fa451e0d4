package contract

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpdrift/mcpdrift/contract/canon"
)

// value is a parsed JSON value for the structural diff. We build our own tree
// rather than decode into `any`: objects need pointer identity (the cycle-safe
// $ref walk memoizes pairs of nodes), members keep their order, and numbers
// keep their spelling for display while comparing as numbers.
type value struct {
	kind    byte // 'n' null, 'b' bool, '0' number, '"' string, '[' array, '{' object
	boolean bool
	text    string  // string value, or a number as written
	num     float64 // numbers: the IEEE 754 value (ok=false when out of range)
	numOK   bool
	items   []*value
	names   []string // object member names in document order
	members []*value // object member values, parallel to names
	index   map[string]int
}

// objectIndexAt is the member count above which objects get a name index.
const objectIndexAt = 8

// maxValueDepth bounds nesting in parseValue, so that a snapshot built by
// hand (not read under Limits) cannot exhaust the stack of the recursive
// walks; documents read under Limits are far shallower (128 by default).
const maxValueDepth = 1024

func (v *value) isObject() bool { return v != nil && v.kind == '{' }
func (v *value) isArray() bool  { return v != nil && v.kind == '[' }
func (v *value) isString() bool { return v != nil && v.kind == '"' }
func (v *value) isNumber() bool { return v != nil && v.kind == '0' }
func (v *value) isBool() bool   { return v != nil && v.kind == 'b' }

// get returns the member called name of an object, or nil.
func (v *value) get(name string) *value {
	if v == nil || v.kind != '{' {
		return nil
	}
	if v.index != nil {
		if i, ok := v.index[name]; ok {
			return v.members[i]
		}
		return nil
	}
	for i, n := range v.names {
		if n == name {
			return v.members[i]
		}
	}
	return nil
}

// without returns a shallow copy of an object without the member called name.
func (v *value) without(name string) *value {
	out := &value{kind: '{'}
	for i, n := range v.names {
		if n != name {
			out.names = append(out.names, n)
			out.members = append(out.members, v.members[i])
		}
	}
	return out
}

// str returns the string value of an object member, or "" and false.
func (v *value) str(name string) (string, bool) {
	m := v.get(name)
	if !m.isString() {
		return "", false
	}
	return m.text, true
}

// parseValue parses one JSON document. Repeated member names keep the last
// value (definitions in a snapshot were already refused for repeats when
// hashed); invalid UTF-8 is replaced, since only the digest must be exact.
func parseValue(raw []byte) (*value, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	v, err := readValue(dec, 0)
	if err != nil {
		return nil, canon.TranslateJSONError(err)
	}
	return v, nil
}

func readValue(dec *jsontext.Decoder, depth int) (*value, error) {
	if depth > maxValueDepth {
		return nil, canon.ErrTooDeep
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch k := tok.Kind(); k {
	case 'n':
		return &value{kind: 'n'}, nil
	case 't', 'f':
		return &value{kind: 'b', boolean: k == 't'}, nil
	case '"':
		return &value{kind: '"', text: tok.String()}, nil
	case '0':
		text := tok.String()
		f, err := strconv.ParseFloat(text, 64)
		return &value{kind: '0', text: text, num: f, numOK: err == nil && !math.IsInf(f, 0)}, nil
	case '[':
		v := &value{kind: '['}
		for dec.PeekKind() != ']' {
			item, err := readValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			v.items = append(v.items, item)
		}
		_, err := dec.ReadToken()
		return v, err
	case '{':
		v := &value{kind: '{'}
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			n := name.String()
			m, err := readValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			if i := slices.Index(v.names, n); i >= 0 {
				v.members[i] = m
				continue
			}
			v.names = append(v.names, n)
			v.members = append(v.members, m)
		}
		if len(v.names) > objectIndexAt {
			v.index = make(map[string]int, len(v.names))
			for i, n := range v.names {
				v.index[n] = i
			}
		}
		_, err := dec.ReadToken()
		return v, err
	}
	return nil, canon.ErrSyntax
}

// unionSorted returns the distinct strings of several lists, sorted.
func unionSorted(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// mapKeys returns the keys of a map.
func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// without returns the elements of a that are not in b, in order.
func without[T comparable](a, b []T) []T {
	var out []T
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// equalValues compares two JSON values semantically: numbers by value
// (1, 1.0 and 1e0 are equal), objects regardless of member order, arrays in
// order.
func equalValues(a, b *value) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case 'n':
		return true
	case 'b':
		return a.boolean == b.boolean
	case '"':
		return a.text == b.text
	case '0':
		return numbersEqual(a, b)
	case '[':
		return slices.EqualFunc(a.items, b.items, equalValues)
	}
	if len(a.names) != len(b.names) {
		return false
	}
	for i, n := range a.names {
		if !equalValues(a.members[i], b.get(n)) {
			return false
		}
	}
	return true
}

func numbersEqual(a, b *value) bool {
	if a.numOK && b.numOK {
		return a.num == b.num
	}
	return a.text == b.text
}

// valueKey is a canonical text for a value, equal for semantically equal
// values; it keys sets (enum values, required names).
func valueKey(v *value) string {
	if v == nil {
		return "null"
	}
	var b bytes.Buffer
	writeValue(&b, v, true)
	return b.String()
}

// rawJSON writes a value back as compact JSON (members in document order,
// numbers as written), or nil for an absent value.
func rawJSON(v *value) json.RawMessage {
	if v == nil {
		return nil
	}
	var b bytes.Buffer
	writeValue(&b, v, false)
	return b.Bytes()
}

// writeValue writes compact JSON; canonical sorts members and writes numbers
// by value, so that equal values write equal text.
func writeValue(b *bytes.Buffer, v *value, canonical bool) {
	switch v.kind {
	case 'n':
		b.WriteString("null")
	case 'b':
		b.WriteString(strconv.FormatBool(v.boolean))
	case '"':
		writeJSONString(b, v.text)
	case '0':
		if canonical && v.numOK {
			b.WriteString(strconv.FormatFloat(v.num, 'g', -1, 64))
		} else {
			b.WriteString(v.text)
		}
	case '[':
		b.WriteByte('[')
		for i, it := range v.items {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, it, canonical)
		}
		b.WriteByte(']')
	case '{':
		order := make([]int, len(v.names))
		for i := range order {
			order[i] = i
		}
		if canonical {
			slices.SortFunc(order, func(x, y int) int { return strings.Compare(v.names[x], v.names[y]) })
		}
		b.WriteByte('{')
		for j, i := range order {
			if j > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, v.names[i])
			b.WriteByte(':')
			writeValue(b, v.members[i], canonical)
		}
		b.WriteByte('}')
	}
}

// writeJSONString writes s as a JSON string. Parsed values are UTF-8 (invalid
// UTF-8 was replaced when parsing); a key may hold unpaired surrogates, which
// are written back as the escapes they were read from.
func writeJSONString(b *bytes.Buffer, s string) {
	out, err := jsontext.AppendQuote(nil, s)
	if err != nil {
		out = canon.AppendJSONKey(nil, s)
	}
	b.Write(out)
}

// jsonString is the JSON text of a Go string, for Before/After.
func jsonString(s string) json.RawMessage {
	var b bytes.Buffer
	writeJSONString(&b, s)
	return b.Bytes()
}
