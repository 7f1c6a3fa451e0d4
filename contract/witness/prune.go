package witness

import (
	"bytes"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// The validator compiles a schema at a cost of several microseconds per
// schema node, many times what the diff spends per node, so a schema is
// compiled for the candidate values it must judge, not whole. properties
// (and dependentSchemas) entries for member names that no candidate has
// anywhere are dropped: such an entry applies only to a member of that
// name, so leaving it out changes the verdict on no candidate, and
// additionalProperties still sees the names of every member a candidate
// has. Annotations (description, default, examples, ...) are dropped too.
// An entry that a $ref points into, or that defines an $id or $anchor, is
// kept whole. Every other keyword, $defs included, is kept, so references
// resolve as in the original.

// dropped are annotation keywords that never change a verdict.
var dropped = []string{"description", "title", "examples", "$comment", "default", "deprecated", "readOnly", "writeOnly",
	"contentMediaType", "contentEncoding", "contentSchema"}

// Keywords by what they hold.
var (
	singleSchema = []string{"additionalProperties", "unevaluatedProperties", "propertyNames", "items", "additionalItems",
		"unevaluatedItems", "contains", "not", "if", "then", "else"}
	schemaLists = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	schemaMaps  = []string{"patternProperties", "$defs", "definitions"}
	byName      = []string{"properties", "dependentSchemas", "dependencies"}
)

type pruner struct {
	d     *doc
	names map[string]bool
	refs  []string // JSON pointers that references in the document point to
	ids   bool     // the document defines an $id or an anchor somewhere
	out   []byte
}

// prune writes the document with what no candidate needs left out.
func (d *doc) prune(names map[string]bool) []byte {
	p := &pruner{d: d, names: names, refs: d.refPointers(), ids: d.identifiers(), out: make([]byte, 0, 512)}
	p.schema(d.root(), "", 0)
	return p.out
}

// untracked stands for the pointer of a part no reference points into.
// Pointers are tracked only while a reference may point below them: most
// documents refer only into $defs.
const untracked = "#"

func (p *pruner) child(ptr, name string) string {
	if ptr == untracked {
		return untracked
	}
	at := ptr + "/" + escape(name)
	for _, r := range p.refs {
		if r == at || strings.HasPrefix(r, at+"/") {
			return at
		}
	}
	return untracked
}

func (p *pruner) schema(n node, ptr string, depth int) {
	d := p.d
	if !d.isObject(n) || depth > maxPruneDepth {
		p.out = append(p.out, d.bytes(n)...)
		return
	}
	p.out = append(p.out, '{')
	first := true
	for _, m := range d.objectMembers(n) {
		at := p.child(ptr, m.name)
		if slices.Contains(dropped, m.name) && at == untracked {
			continue
		}
		if !first {
			p.out = append(p.out, ',')
		}
		first = false
		p.out = append(jsonwire.AppendString(p.out, m.name), ':')
		switch {
		case slices.Contains(singleSchema, m.name) && !d.isArray(m.value):
			p.schema(m.value, at, depth+1)
		case slices.Contains(schemaLists, m.name) && d.isArray(m.value):
			p.out = append(p.out, '[')
			for i, it := range d.items(m.value) {
				if i > 0 {
					p.out = append(p.out, ',')
				}
				p.schema(it, p.child(at, strconv.Itoa(i)), depth+1)
			}
			p.out = append(p.out, ']')
		case slices.Contains(schemaMaps, m.name) && d.isObject(m.value):
			p.schemaMap(m.value, at, depth, false)
		case slices.Contains(byName, m.name) && d.isObject(m.value):
			p.schemaMap(m.value, at, depth, true)
		default:
			p.out = append(p.out, d.bytes(m.value)...)
		}
	}
	p.out = append(p.out, '}')
}

// maxPruneDepth bounds the walk; deeper parts are copied as they are.
const maxPruneDepth = 128

// schemaMap writes a map of subschemas; with filter, entries for names no
// candidate has are left out.
func (p *pruner) schemaMap(n node, ptr string, depth int, filter bool) {
	d := p.d
	p.out = append(p.out, '{')
	first := true
	for _, m := range d.objectMembers(n) {
		at := p.child(ptr, m.name)
		if filter && !p.names[m.name] && at == untracked && !(p.ids && hasIdentifiers(d.bytes(m.value))) {
			continue
		}
		if !first {
			p.out = append(p.out, ',')
		}
		first = false
		p.out = append(jsonwire.AppendString(p.out, m.name), ':')
		if d.isArray(m.value) { // draft-07 dependencies: a list of names
			p.out = append(p.out, d.bytes(m.value)...)
			continue
		}
		p.schema(m.value, at, depth+1)
	}
	p.out = append(p.out, '}')
}

// hasIdentifiers reports a subschema that defines a base URI or an anchor
// (a reference elsewhere may name it).
func hasIdentifiers(raw []byte) bool {
	return bytes.Contains(raw, []byte(`"$id"`)) || bytes.Contains(raw, []byte(`"$anchor"`)) ||
		bytes.Contains(raw, []byte(`"$dynamicAnchor"`))
}

// identifiers reports whether the document defines an $id or an anchor
// anywhere.
func (d *doc) identifiers() bool {
	d.scanKeywords()
	return d.ids
}

// refPointers returns the JSON pointers of every local reference.
func (d *doc) refPointers() []string {
	d.scanKeywords()
	return d.refs
}

// scanKeywords finds, once per document and in one pass over its text,
// the references and whether it defines identifiers: every keyword
// involved starts with '$', a rare byte ("$ref" inside a string only makes
// the pruning keep more).
func (d *doc) scanKeywords() {
	if d.scanned {
		return
	}
	d.scanned = true
	raw := d.raw
	for i := 0; ; i++ {
		j := bytes.IndexByte(raw[i:], '$')
		if j < 0 {
			return
		}
		i += j
		if i == 0 || raw[i-1] != '"' {
			continue
		}
		q := bytes.IndexByte(raw[i:], '"')
		if q < 0 {
			return
		}
		switch kw := string(raw[i : i+q]); kw {
		case "$id", "$anchor", "$dynamicAnchor":
			d.ids = true
		case "$ref", "$recursiveRef", "$dynamicRef":
			if frag, ok := refFragment(raw, i+q+1); ok {
				d.refs = append(d.refs, frag)
			}
		}
	}
}

// refFragment reads the reference whose value follows the key ending at
// i and returns its fragment when it is a JSON pointer.
func refFragment(raw []byte, i int) (string, bool) {
	k := jsonwire.SkipSpace(raw, i)
	if k >= len(raw) || raw[k] != ':' {
		return "", false
	}
	k = jsonwire.SkipSpace(raw, k+1)
	end, ok := jsonwire.SkipValue(raw, k)
	if !ok {
		return "", false
	}
	ref, ok := jsonwire.String(raw[k:end])
	if !ok {
		return "", false
	}
	_, frag, _ := strings.Cut(ref, "#")
	frag, err := url.PathUnescape(frag)
	return frag, err == nil && strings.HasPrefix(frag, "/")
}

func escape(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
