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
//
// On a schema the root reaches through properties alone, some keywords
// are left out too while no candidate needs them (leftout.go).

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
	// open, when not nil, collects the keywords left out where they apply
	// at one location; keep are those that stay (by leftOut.key).
	open *[]leftOut
	keep map[kept]bool
	// inline are the references written as their target (by the offset
	// of the object holding them), inlined the $defs entries that were.
	inline  map[int]refSite
	inlined map[string]bool
}

// refSite is a "$ref" with a JSON pointer: the pointer and the offset of
// the key; for one to inline, its target.
type refSite struct {
	ptr    string
	key    int
	target node
}

// prune writes the document with what no candidate needs left out. With
// open not nil, keywords of schemas that apply at one known location are
// left out too (but those in keep) and collected in *open (leftout.go),
// and single references to $defs entries are written in place.
func (d *doc) prune(names map[string]bool, keep map[kept]bool, open *[]leftOut) []byte {
	p := &pruner{d: d, names: names, refs: d.refPointers(), ids: d.identifiers(), out: make([]byte, 0, 512), open: open, keep: keep}
	var at *place
	if open != nil && !p.ids && !d.rootRef {
		at = &place{}
		p.planInline()
	}
	p.schema(d.root(), "", 0, at)
	return p.out
}

// planInline finds the references to write as their target: a schema
// that is only {"$ref": "#/$defs/X"} (annotations aside), where nothing
// else refers to X, to within it or above it, and X does not contain the
// reference, validates as X itself. X is then written in its place and
// left out of $defs: one schema less for the validator to compile.
func (p *pruner) planInline() {
	d := p.d
	for _, s := range d.refSites {
		top, name, ok := strings.Cut(strings.TrimPrefix(s.ptr, "/"), "/")
		if !ok || top != "$defs" && top != "definitions" || name == "" || strings.Contains(name, "/") {
			continue
		}
		related := 0
		for _, r := range d.refs {
			if r == s.ptr || strings.HasPrefix(r, s.ptr+"/") || strings.HasPrefix(s.ptr, r+"/") {
				related++
			}
		}
		n, t := d.enclosing(s.key), d.resolve("#"+s.ptr)
		if related != 1 || !d.isObject(n) || !d.isObject(t) || n.off >= t.off && n.off < t.end {
			continue
		}
		refs := 0
		for _, m := range d.objectMembers(n) {
			switch {
			case m.name == "$ref":
				refs++
			case !slices.Contains(dropped, m.name):
				refs = 2 // a keyword beside the reference
			}
		}
		if refs == 1 {
			if p.inline == nil {
				p.inline, p.inlined = map[int]refSite{}, map[string]bool{}
			}
			s.target = t
			p.inline[n.off] = s
		}
	}
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

// schema writes the schema n at ptr (untracked when no reference points
// below) and, when the root reaches it through properties alone, pl.
func (p *pruner) schema(n node, ptr string, depth int, pl *place) {
	d := p.d
	if !d.isObject(n) || depth > maxPruneDepth {
		p.out = append(p.out, d.bytes(n)...)
		return
	}
	if s, ok := p.inline[n.off]; ok && ptr == untracked {
		p.inlined[s.ptr] = true
		p.schema(s.target, untracked, depth+1, pl)
		return
	}
	p.out = append(p.out, '{')
	first := true
	var defs []member // the root's $defs, written last (once the inlined entries are known)
	for _, m := range d.objectMembers(n) {
		at := p.child(ptr, m.name)
		if slices.Contains(dropped, m.name) && at == untracked {
			continue
		}
		if p.leavesOut(n, m, pl, at) {
			continue
		}
		if depth == 0 && p.inline != nil && (m.name == "$defs" || m.name == "definitions") {
			defs = append(defs, m)
			continue
		}
		p.member(m, at, depth, pl, &first)
	}
	for _, m := range defs {
		at := p.child(ptr, m.name)
		if p.allInlined(m.value, at) {
			continue
		}
		p.member(m, at, depth, pl, &first)
	}
	p.out = append(p.out, '}')
}

// allInlined reports whether every entry of the $defs n at ptr was
// written in place of its reference.
func (p *pruner) allInlined(n node, ptr string) bool {
	for _, m := range p.d.objectMembers(n) {
		if !p.inlined[p.child(ptr, m.name)] {
			return false
		}
	}
	return true
}

// member writes one member m (at pointer at) of a schema at pl.
func (p *pruner) member(m member, at string, depth int, pl *place, first *bool) {
	d := p.d
	if !*first {
		p.out = append(p.out, ',')
	}
	*first = false
	p.out = append(jsonwire.AppendString(p.out, m.name), ':')
	switch {
	case slices.Contains(singleSchema, m.name) && !d.isArray(m.value):
		p.schema(m.value, at, depth+1, nil)
	case slices.Contains(schemaLists, m.name) && d.isArray(m.value):
		p.out = append(p.out, '[')
		for i, it := range d.items(m.value) {
			if i > 0 {
				p.out = append(p.out, ',')
			}
			p.schema(it, p.child(at, strconv.Itoa(i)), depth+1, nil)
		}
		p.out = append(p.out, ']')
	case slices.Contains(schemaMaps, m.name) && d.isObject(m.value):
		p.schemaMap(m.value, at, depth, false, nil)
	case m.name == "properties" && d.isObject(m.value):
		p.schemaMap(m.value, at, depth, true, pl)
	case slices.Contains(byName, m.name) && d.isObject(m.value):
		p.schemaMap(m.value, at, depth, true, nil)
	default:
		p.out = append(p.out, d.bytes(m.value)...)
	}
}

// maxPruneDepth bounds the walk; deeper parts are copied as they are.
const maxPruneDepth = 128

// schemaMap writes a map of subschemas; with filter, entries for names no
// candidate has are left out. pl, when not nil, is the place of the schema
// whose properties the map is.
func (p *pruner) schemaMap(n node, ptr string, depth int, filter bool, pl *place) {
	d := p.d
	p.out = append(p.out, '{')
	first := true
	for _, m := range d.objectMembers(n) {
		at := p.child(ptr, m.name)
		if filter && !p.names[m.name] && at == untracked && !(p.ids && hasIdentifiers(d.bytes(m.value))) || p.inlined[at] {
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
		p.schema(m.value, at, depth+1, p.entry(pl, m.name))
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
			switch frag, isRef := refFragment(raw, i+q+1); {
			case strings.HasPrefix(frag, "/"):
				d.refs = append(d.refs, frag)
				if kw == "$ref" {
					d.refSites = append(d.refSites, refSite{ptr: frag, key: i - 1})
				}
			case isRef:
				// The root, an anchor, or what cannot be read: the
				// pruning assumes the reference may reach anything.
				d.rootRef = true
			}
		}
	}
}

// refFragment reads the reference whose value follows the key ending at
// i: isRef when the key is a member name, frag the fragment of its value
// ("" when it cannot be read).
func refFragment(raw []byte, i int) (frag string, isRef bool) {
	k := jsonwire.SkipSpace(raw, i)
	if k >= len(raw) || raw[k] != ':' {
		return "", false // "$ref" as a value, not a member name
	}
	k = jsonwire.SkipSpace(raw, k+1)
	end, ok := jsonwire.SkipValue(raw, k)
	if !ok {
		return "", true
	}
	ref, ok := jsonwire.String(raw[k:end])
	if !ok {
		return "", true
	}
	_, frag, _ = strings.Cut(ref, "#")
	if frag, err := url.PathUnescape(frag); err == nil {
		return frag, true
	}
	return "", true
}

func escape(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
