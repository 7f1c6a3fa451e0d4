// Package jsonwire is the repository's one scanner of JSON text: it reads
// the few members a JSON-RPC peer needs out of raw frames (method, id,
// result, params.name, result.isError, _meta) and edits one thing in them
// (params._meta), without decoding whole messages; it iterates over objects
// and arrays (Object, Array), reads the grammar's pieces (StringEnd, Number,
// Literal, Sep) and checks a document's limits in one pass (Limits.Scan).
// The interceptor and the proxy use it on every call, the probe on every
// response; canonical JSON (contract/canon), the witness search's schema
// reader and the probe's envelope build on it rather than on copies.
//
// It is hand-written because it runs on every message: encoding/json and
// jsontext both allocate per value and validate the whole text, while its
// callers only need the boundaries of a few top-level members (a list
// result's definitions are validated once, by contract.Limits.ParsePage). The
// input is untrusted and unvalidated: every function is bounds-checked,
// never panics and reports malformed text with ok=false. Whole-document
// validation stays where it matters (contract.Limits.ParsePage for
// listings; the SDK for everything else).
package jsonwire

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// MaxDepth bounds nesting while skipping values, so a hostile frame cannot
// make the walker spin on brackets forever (it is linear anyway) or hide
// members behind unbalanced ones.
const MaxDepth = 512

// SkipSpace returns the index of the first non-whitespace byte at or after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// SkipValue returns the index just past the JSON value starting at i
// (after optional whitespace), or ok=false if there is no well-bracketed
// value there.
func SkipValue(b []byte, i int) (end int, ok bool) {
	i = SkipSpace(b, i)
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		e, ok := endOfString(b, i+1)
		return e + 1, ok
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '{', '[':
				depth++
				if depth > MaxDepth {
					return i, false
				}
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			case '"':
				e, ok := endOfString(b, i+1)
				if !ok {
					return e, false
				}
				i = e
			}
		}
		return len(b), false
	default: // number or literal
		start := i
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r', ':', '"', '{', '[':
				return i, i > start
			}
			i++
		}
		return i, i > start
	}
}

// endOfString returns the index of the quote closing the string whose
// content starts at i. A quote ends the string exactly when an even number
// of backslashes precedes it (escapes pair up), valid text or not, so the
// search jumps from quote to quote (bytes.IndexByte) instead of walking
// escapes byte by byte.
func endOfString(b []byte, i int) (int, bool) {
	for i < len(b) {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b), false
		}
		q += i
		n := 0
		for n < q-i && b[q-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q, true
		}
		i = q + 1 // the quote was escaped
	}
	return len(b), false
}

// StringEnd returns the index just past the string whose opening quote is
// at i; ok is false (end at len(b)) when it does not end.
func StringEnd(b []byte, i int) (end int, ok bool) {
	e, ok := endOfString(b, i+1)
	if !ok {
		return len(b), false
	}
	return e + 1, true
}

// Number returns the index just past the number at i, read strictly as
// RFC 8259 writes one: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; ok is
// false, with end where the grammar broke, when there is none.
func Number(b []byte, i int) (end int, ok bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		d := i + 1
		if i = digits(b, d); i == d {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		if i = digits(b, d); i == d {
			return i, false
		}
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// Literal returns the index just past true, false or null at i, and which
// one it is; ok is false when none starts there.
func Literal(b []byte, i int) (end int, lit string, ok bool) {
	for _, w := range [...]string{"true", "false", "null"} {
		if len(b)-i >= len(w) && string(b[i:i+len(w)]) == w {
			return i + len(w), w, true
		}
	}
	return i, "", false
}

// Sep reads what follows an object's member or an array's element at i
// (after optional whitespace): a comma, with more to come, or the closing
// bracket. end is past what it read; ok is false for anything else, with
// end at the offending byte (len(b) at the end of the text).
func Sep(b []byte, i int, closing byte) (end int, more, ok bool) {
	i = SkipSpace(b, i)
	if i >= len(b) {
		return i, false, false
	}
	switch b[i] {
	case ',':
		return i + 1, true, true
	case closing:
		return i + 1, false, true
	}
	return i, false, false
}

// Member is one member of an object: Key is the raw key text between the
// quotes (escapes not decoded), Value the raw value, Start the offset of the
// key's opening quote, End the offset just past the value.
type Member struct {
	Key        []byte
	Value      []byte
	Start, End int
}

// Object iterates over the top-level members of a JSON object.
type Object struct {
	b       []byte
	pos     int
	bad     bool
	started bool // a member was read: the next needs a comma first
	end     int  // past the closing brace, once iteration ended cleanly
}

// NewObject starts iterating over the object b; ok is false if b (after
// whitespace) does not start with '{'.
func NewObject(b []byte) (Object, bool) {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return Object{bad: true}, false
	}
	return Object{b: b, pos: i + 1}, true
}

// Next returns the next member; ok is false at the end of the object or on
// malformed text (then Err reports true).
func (o *Object) Next() (m Member, ok bool) { return o.NextSkipping(nil) }

// NextSkipping is Next with skip, when not nil, finding the end of the
// member's value (as SkipValue does, given the raw key and the value's
// offset): a caller that recognizes a value it has read before skips it
// without scanning it again.
func (o *Object) NextSkipping(skip func(key, b []byte, i int) (end int, ok bool)) (m Member, ok bool) {
	if o.bad || o.b == nil {
		return m, false
	}
	i, more := next(o.b, o.pos, '}', o.started, &o.bad)
	if !more {
		if !o.bad {
			o.end = i + 1
		}
		o.b = nil
		return m, false
	}
	o.started = true
	if o.b[i] != '"' {
		o.bad = true
		return m, false
	}
	ke, kok := endOfString(o.b, i+1)
	if !kok {
		o.bad = true
		return m, false
	}
	j := SkipSpace(o.b, ke+1)
	if j >= len(o.b) || o.b[j] != ':' {
		o.bad = true
		return m, false
	}
	vs := SkipSpace(o.b, j+1)
	var ve int
	var vok bool
	if skip != nil {
		ve, vok = skip(o.b[i+1:ke], o.b, vs)
	} else {
		ve, vok = SkipValue(o.b, vs)
	}
	if !vok {
		o.bad = true
		return m, false
	}
	o.pos = ve
	return Member{Key: o.b[i+1 : ke], Value: o.b[vs:ve], Start: i, End: ve}, true
}

// Err reports whether iteration stopped on malformed text.
func (o *Object) Err() bool { return o.bad }

// End is the offset just past the object's closing brace once Next has
// reported its end without error (0 before that).
func (o *Object) End() int { return o.end }

// next skips the separator before a container's next item at pos and
// reports whether there is one: false at the closing bracket, or on
// malformed text (a missing or trailing comma, the end of the text), which
// also sets *bad.
func next(b []byte, pos int, closing byte, started bool, bad *bool) (int, bool) {
	i := SkipSpace(b, pos)
	if i >= len(b) {
		*bad = true
		return i, false
	}
	if b[i] == closing {
		return i, false
	}
	if started {
		if b[i] != ',' {
			*bad = true
			return i, false
		}
		if i = SkipSpace(b, i+1); i >= len(b) || b[i] == closing {
			*bad = true
			return i, false
		}
	}
	return i, true
}

// Array iterates over the elements of a JSON array.
type Array struct {
	b       []byte
	pos     int
	bad     bool
	started bool
	end     int // past the closing bracket, once iteration ended cleanly
}

// NewArray starts iterating over the array b; ok is false if b (after
// whitespace) does not start with '['.
func NewArray(b []byte) (Array, bool) {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return Array{bad: true}, false
	}
	return Array{b: b, pos: i + 1}, true
}

// Next returns the next element's raw text; ok is false at the end of the
// array or on malformed text (then Err reports true).
func (a *Array) Next() (elem []byte, ok bool) { return a.NextSkipping(nil) }

// NextSkipping is Next with skip, when not nil, finding the end of the
// element (as SkipValue does, given its offset): a caller that reads the
// element on the way, rather than after, scans it once.
func (a *Array) NextSkipping(skip func(b []byte, i int) (end int, ok bool)) (elem []byte, ok bool) {
	if a.bad || a.b == nil {
		return nil, false
	}
	i, more := next(a.b, a.pos, ']', a.started, &a.bad)
	if !more {
		if !a.bad {
			a.end = i + 1
		}
		a.b = nil
		return nil, false
	}
	a.started = true
	var e int
	if skip != nil {
		e, ok = skip(a.b, i)
	} else {
		e, ok = SkipValue(a.b, i)
	}
	if !ok {
		a.bad = true
		return nil, false
	}
	a.pos = e
	return a.b[i:e], true
}

// Offset is the position just past the last element Next returned.
func (a *Array) Offset() int { return a.pos }

// End is the offset just past the array's closing bracket once Next has
// reported its end without error (0 before that).
func (a *Array) End() int { return a.end }

// Err reports whether iteration stopped on malformed text.
func (a *Array) Err() bool { return a.bad }

// KeyIs reports whether a raw key equals name, decoding escapes only when
// the key has any.
func KeyIs(key []byte, name string) bool {
	if bytes.IndexByte(key, '\\') < 0 {
		return string(key) == name
	}
	s, ok := decodeString(key)
	return ok && s == name
}

// Lookup returns the raw value of the first member named name in the object
// b, or nil.
func Lookup(b []byte, name string) []byte {
	o, ok := NewObject(b)
	if !ok {
		return nil
	}
	for {
		m, ok := o.Next()
		if !ok {
			return nil
		}
		if KeyIs(m.Key, name) {
			return m.Value
		}
	}
}

// LookupTop returns the raw value of the first top-level member named name
// in the object b, or nil, however deeply the members before it nest: it
// counts brackets instead of skipping values, so a frame too deep (or cut
// too short) for Lookup still names its id. b may end anywhere after the
// member. A scalar or shallow value is returned whole; a container deeper
// than MaxDepth is not.
func LookupTop(b []byte, name string) []byte {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil
	}
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return nil
			}
		case '"':
			e, ok := endOfString(b, i+1)
			if !ok {
				return nil
			}
			// At the top level only a key is followed by a colon.
			if j := SkipSpace(b, e+1); depth == 1 && j < len(b) && b[j] == ':' && KeyIs(b[i+1:e], name) {
				vs := SkipSpace(b, j+1)
				ve, ok := SkipValue(b, vs)
				if !ok {
					return nil
				}
				return b[vs:ve]
			}
			i = e
		}
	}
	return nil
}

// Name decodes the member's key.
func (m Member) Name() (string, bool) { return decodeString(m.Key) }

// String decodes a raw JSON string value; ok is false if raw is not one.
func String(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	return decodeString(raw[1 : len(raw)-1])
}

func decodeString(content []byte) (string, bool) {
	if bytes.IndexByte(content, '\\') < 0 {
		return string(content), true
	}
	var s string
	quoted := make([]byte, 0, len(content)+2)
	quoted = append(append(append(quoted, '"'), content...), '"')
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", false
	}
	return s, true
}

// IsTrue reports whether raw is the literal true.
func IsTrue(raw []byte) bool { return string(raw) == "true" }

// IsNull reports whether raw is absent or the literal null.
func IsNull(raw []byte) bool { return len(raw) == 0 || string(raw) == "null" }

// Int reads a raw JSON integer (as JSON-RPC ids and error codes are written);
// ok is false for anything else, including integers written with a fraction
// or exponent that are not whole.
func Int(raw []byte) (int64, bool) {
	if n, ok := plainInt(raw); ok {
		return n, true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

// AppendString appends s as a JSON string. It escapes what RFC 8259
// requires (quote, backslash, control characters) and nothing else, so
// ASCII header values such as traceparent come out unchanged.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// plainInt parses an optionally negative run of at most 18 digits without
// allocating (the common case: ids the SDKs generate).
func plainInt(raw []byte) (int64, bool) {
	neg := len(raw) > 0 && raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	if len(raw) == 0 || len(raw) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
