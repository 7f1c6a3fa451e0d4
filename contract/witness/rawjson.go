package witness

import (
	"strconv"

	"github.com/mcpdrift/mcpdrift/internal/jsonwire"
)

// A schema is read straight from the raw JSON of the definition, lazily: an
// object's members are split on first use, and a member that is never looked
// at (an optional property no witness needs) is skipped over, not parsed.
// Parsing whole schemas would cost more than the diff that found the change.

// doc is one schema document (a tool's inputSchema or outputSchema).
type doc struct {
	raw     []byte
	top     node
	members map[int][]member // by offset of the object in raw
	anchors map[string]node  // $anchor, $dynamicAnchor, "$id": "#name"; built on first use
	refs    []string         // JSON pointers references point to; built on first use
	refsSet bool
	enums   map[int][]any // decoded const/enum lists by node offset (nil: none)
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

func newDoc(raw []byte) *doc {
	d := &doc{raw: raw, members: map[int][]member{}}
	i := jsonwire.SkipSpace(raw, 0)
	if end, ok := jsonwire.SkipValue(raw, i); ok {
		d.top = node{off: i, end: end, present: true}
	}
	return d
}

func (d *doc) root() node { return d.top }

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

// objectMembers splits an object once; malformed text yields what was read.
func (d *doc) objectMembers(n node) []member {
	if !d.isObject(n) {
		return nil
	}
	if ms, ok := d.members[n.off]; ok {
		return ms
	}
	b := d.bytes(n)
	o, _ := jsonwire.NewObject(b)
	var ms []member
	for {
		m, ok := o.Next()
		if !ok {
			break
		}
		name, ok := m.Name()
		if !ok {
			continue
		}
		start := n.off + m.End - len(m.Value)
		ms = append(ms, member{name: name, value: node{off: start, end: start + len(m.Value), present: true}})
	}
	d.members[n.off] = ms
	return ms
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
	b := d.bytes(n)
	a, _ := jsonwire.NewArray(b)
	var out []node
	for {
		e, ok := a.Next()
		if !ok {
			return out
		}
		start := n.off + a.Offset() - len(e)
		out = append(out, node{off: start, end: start + len(e), present: true})
	}
}

func (d *doc) str(n node) (string, bool) {
	if !d.isString(n) {
		return "", false
	}
	return jsonwire.String(d.bytes(n))
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
