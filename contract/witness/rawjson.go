package witness

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// A schema is read straight from the raw JSON of the definition, lazily: an
// object's members are split on first use, and a member that is never looked
// at (an optional property no witness needs) is skipped over, not parsed.
// Parsing whole schemas would cost more than the diff that found the change.
// Skipping a nested value must not mean scanning it again at every level
// (deep schemas would cost depth × size): one pass over the text, when the
// document is first read, records where every object and array ends.

// doc is one schema document (a tool's inputSchema or outputSchema).
type doc struct {
	raw []byte
	// text is raw as a string, made once: member names are cut from it.
	text string
	top  node
	// opens are the offsets of every '{' and '[', ascending; closes[i] is
	// the offset of the bracket that closes opens[i].
	opens, closes []int32
	members       map[int][]member // by offset of the object in raw
	anchors       map[string]node  // $anchor, $dynamicAnchor, "$id": "#name"; built on first use
	refs          []string         // JSON pointers references point to (scanKeywords)
	refSites      []refSite        // the "$ref"s among them (scanKeywords)
	ids           bool             // an $id or an anchor is defined somewhere (scanKeywords)
	rootRef       bool             // a reference to the root, an anchor or elsewhere (scanKeywords)
	scanned       bool
	enums         map[int][]any   // decoded const/enum lists by node offset (nil: none)
	resolved      map[string]node // references resolved, by their text
}

type member struct {
	name  string
	value node
}

// node is one JSON value of a doc; the zero node is "absent".
type node struct {
	off, end int
	present  bool
}

// newDoc indexes a document; nil when its brackets do not balance (it is
// not JSON).
func newDoc(raw []byte) *doc {
	d := &doc{raw: raw, text: string(raw), members: map[int][]member{}}
	var stack []int
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			end, _ := jsonwire.StringEnd(raw, i)
			i = end - 1
		case '{', '[':
			stack = append(stack, len(d.opens))
			d.opens = append(d.opens, int32(i))
			d.closes = append(d.closes, -1)
		case '}', ']':
			if len(stack) == 0 {
				return nil
			}
			d.closes[stack[len(stack)-1]] = int32(i)
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return nil
	}
	i := jsonwire.SkipSpace(raw, 0)
	if end := d.skip(i); end > i {
		d.top = node{off: i, end: end, present: true}
	}
	return d
}

// skip returns the offset just past the value at i (i when there is none):
// a container's end from the index, anything else as jsonwire skips it.
func (d *doc) skip(i int) int {
	if i < len(d.raw) && (d.raw[i] == '{' || d.raw[i] == '[') {
		if k, ok := slices.BinarySearch(d.opens, int32(i)); ok && d.closes[k] >= 0 {
			return int(d.closes[k]) + 1
		}
		return i
	}
	if end, ok := jsonwire.SkipValue(d.raw, i); ok {
		return end
	}
	return i
}

// skipIn is skip for jsonwire's iterators over the part of the text that
// starts at off: their offsets are relative to it.
func (d *doc) skipIn(off int) func(b []byte, i int) (int, bool) {
	return func(_ []byte, i int) (int, bool) {
		end := d.skip(off + i)
		return end - off, end > off+i
	}
}

func (d *doc) root() node { return d.top }

// enclosing returns the innermost object or array around offset i.
func (d *doc) enclosing(i int) node {
	k, _ := slices.BinarySearch(d.opens, int32(i))
	for k--; k >= 0; k-- {
		if int(d.closes[k]) > i {
			return node{off: int(d.opens[k]), end: int(d.closes[k]) + 1, present: true}
		}
	}
	return node{}
}

func (d *doc) bytes(n node) []byte {
	if !n.present {
		return nil
	}
	return d.raw[n.off:n.end]
}

func (d *doc) first(n node) byte {
	if !n.present || n.off >= len(d.raw) {
		return 0
	}
	return d.raw[n.off]
}

func (d *doc) isObject(n node) bool { return d.first(n) == '{' }
func (d *doc) isArray(n node) bool  { return d.first(n) == '[' }
func (d *doc) isString(n node) bool { return d.first(n) == '"' }

// isFalse reports the boolean schema false.
func (d *doc) isFalse(n node) bool { return n.present && string(d.bytes(n)) == "false" }

// elements walks the values of an object (with the node of their quoted
// keys) or an array, calling fn for each; malformed text ends the walk.
func (d *doc) elements(n node, fn func(key, value node)) {
	text := d.raw[n.off:n.end]
	skip := d.skipIn(n.off)
	if d.isArray(n) {
		a, _ := jsonwire.NewArray(text)
		for {
			elem, ok := a.NextSkipping(skip)
			if !ok {
				return
			}
			end := n.off + a.Offset()
			fn(node{}, node{off: end - len(elem), end: end, present: true})
		}
	}
	o, _ := jsonwire.NewObject(text)
	for {
		m, ok := o.NextSkipping(func(_, b []byte, i int) (int, bool) { return skip(b, i) })
		if !ok {
			return
		}
		key := node{off: n.off + m.Start, end: n.off + m.Start + len(m.Key) + 2, present: true}
		fn(key, node{off: n.off + m.End - len(m.Value), end: n.off + m.End, present: true})
	}
}

// objectMembers splits an object once.
func (d *doc) objectMembers(n node) []member {
	if !d.isObject(n) {
		return nil
	}
	if ms, ok := d.members[n.off]; ok {
		return ms
	}
	ms := make([]member, 0, 4)
	d.elements(n, func(key, value node) {
		if name, ok := d.name(key); ok {
			ms = append(ms, member{name: name, value: value})
		}
	})
	d.members[n.off] = ms
	return ms
}

// name decodes a string (a member name, a string value); one without
// escapes is cut from the text.
func (d *doc) name(key node) (string, bool) {
	raw := d.bytes(key)
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return d.text[key.off+1 : key.end-1], true
	}
	return jsonwire.String(raw)
}

// get returns the first member called name.
func (d *doc) get(n node, name string) node {
	for _, m := range d.objectMembers(n) {
		if m.name == name {
			return m.value
		}
	}
	return node{}
}

func (d *doc) items(n node) []node {
	if !d.isArray(n) {
		return nil
	}
	var out []node
	d.elements(n, func(_, value node) { out = append(out, value) })
	return out
}

func (d *doc) str(n node) (string, bool) {
	if !d.isString(n) {
		return "", false
	}
	return d.name(n)
}

// num reads a number; ok is false for anything else.
func (d *doc) num(n node) (float64, bool) {
	c := d.first(n)
	if c != '-' && (c < '0' || c > '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(d.bytes(n)), 64)
	return f, err == nil
}

func (d *doc) boolean(n node) (value, ok bool) {
	switch string(d.bytes(n)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// strings reads an array of strings (required, enum names); other elements
// are skipped.
func (d *doc) strings(n node) []string {
	var out []string
	for _, it := range d.items(n) {
		if s, ok := d.str(it); ok {
			out = append(out, s)
		}
	}
	return out
}
