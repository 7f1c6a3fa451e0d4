package contract

import (
	"encoding/binary"
	"hash/fnv"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// This file is the JSON Schema model the structural diff walks: local $ref
// resolution (cycle-safe, siblings merged), semantic fingerprints for
// matching anyOf/oneOf/allOf branches and renamed tools, and JSON pointers.
// We hand-write it because no Go JSON Schema library exposes a comparison of
// two schemas; validators (santhosh-tekuri/jsonschema and others) compile a
// schema for validating instances and hide the structure we need to diff.

// schemaDoc is one schema document (a tool's inputSchema or outputSchema):
// the root that local $refs resolve against, and per-document caches.
type schemaDoc struct {
	root    *value
	anchors map[string]*value // $anchor, $dynamicAnchor and draft-07 "$id": "#name"
	merged  map[*value]*value // a $ref with sibling keywords, merged with its target
	fps     map[*value]fingerprint
	inFP    map[*value]bool
}

func newSchemaDoc(root *value) *schemaDoc {
	return &schemaDoc{root: root, merged: map[*value]*value{}, fps: map[*value]fingerprint{}, inFP: map[*value]bool{}}
}

// maxRefHops bounds a chain of $ref to $ref to ... (a loop is cut there).
const maxRefHops = 64

// deref follows a local $ref (also $recursiveRef and $dynamicRef, resolved
// statically). A $ref with sibling keywords is merged with its target, the
// siblings winning. A ref that cannot be resolved locally, or a loop of refs,
// leaves the node as it is, $ref included, to be compared as text.
func (d *schemaDoc) deref(v *value) *value {
	for hops := 0; hops < maxRefHops && v.isObject(); hops++ {
		target, ok := d.refTarget(v)
		if !ok {
			return v
		}
		if onlyRef(v) {
			v = target
			continue
		}
		if m, ok := d.merged[v]; ok {
			return m
		}
		d.merged[v] = v // a loop through this node ends here
		m := mergeObjects(d.deref(target), v)
		d.merged[v] = m
		return m
	}
	return v
}

// refKeywords are the keywords that point elsewhere in the document.
var refKeywords = [...]string{"$ref", "$recursiveRef", "$dynamicRef"}

// onlyRef reports whether v has nothing but its reference keyword(s).
func onlyRef(v *value) bool {
	for _, n := range v.names {
		if !slices.Contains(refKeywords[:], n) {
			return false
		}
	}
	return true
}

func (d *schemaDoc) refTarget(v *value) (*value, bool) {
	for _, kw := range refKeywords {
		ref, ok := v.str(kw)
		if !ok {
			continue
		}
		if kw == "$recursiveRef" {
			ref = "#"
		}
		t := d.resolve(ref)
		return t, t != nil
	}
	return nil, false
}

// resolve finds a local reference: "#", "#/json/pointer" (URI-escaped) or
// "#anchor"; a reference with a document part resolves only when it names
// the root's own $id.
func (d *schemaDoc) resolve(ref string) *value {
	doc, frag, _ := strings.Cut(ref, "#")
	if doc != "" {
		if id, ok := d.root.str("$id"); !ok || strings.TrimSuffix(id, "#") != doc {
			return nil
		}
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil
	}
	if frag == "" {
		return d.root
	}
	if !strings.HasPrefix(frag, "/") {
		return d.anchor(frag)
	}
	v := d.root
	for _, seg := range strings.Split(frag[1:], "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		switch {
		case v.isObject():
			v = v.get(seg)
		case v.isArray():
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(v.items) {
				return nil
			}
			v = v.items[i]
		default:
			return nil
		}
		if v == nil {
			return nil
		}
	}
	return v
}

func (d *schemaDoc) anchor(name string) *value {
	if d.anchors == nil {
		d.anchors = map[string]*value{}
		collectAnchors(d.root, d.anchors, 0)
	}
	return d.anchors[name]
}

func collectAnchors(v *value, into map[string]*value, depth int) {
	if depth > maxValueDepth {
		return
	}
	switch v.kind {
	case '{':
		for _, kw := range [...]string{"$anchor", "$dynamicAnchor"} {
			if a, ok := v.str(kw); ok {
				if _, dup := into[a]; !dup {
					into[a] = v
				}
			}
		}
		if id, ok := v.str("$id"); ok && strings.HasPrefix(id, "#") {
			if _, dup := into[id[1:]]; !dup {
				into[id[1:]] = v
			}
		}
		for _, m := range v.members {
			collectAnchors(m, into, depth+1)
		}
	case '[':
		for _, it := range v.items {
			collectAnchors(it, into, depth+1)
		}
	}
}

// mergeObjects returns base overlaid with the members of over, except its
// reference keywords.
func mergeObjects(base, over *value) *value {
	m := &value{kind: '{'}
	set := func(n string, v *value) {
		if i := slices.Index(m.names, n); i >= 0 {
			m.members[i] = v
			return
		}
		m.names = append(m.names, n)
		m.members = append(m.members, v)
	}
	if base.isObject() {
		for i, n := range base.names {
			set(n, base.members[i])
		}
	} else if base.isBool() && !base.boolean {
		set("not", &value{kind: '{'}) // false merged with siblings still rejects everything
	}
	for i, n := range over.names {
		if !slices.Contains(refKeywords[:], n) {
			set(n, over.members[i])
		}
	}
	if len(m.names) > objectIndexAt {
		m.index = make(map[string]int, len(m.names))
		for i, n := range m.names {
			m.index[n] = i
		}
	}
	return m
}

// isFalse reports a schema that rejects everything.
func isFalse(v *value) bool { return v.isBool() && !v.boolean }

// Keyword classes, for fingerprints and for the diff's unknown-keyword pass.
var (
	singleSchemaKeywords = []string{"items", "additionalProperties", "additionalItems", "unevaluatedItems", "unevaluatedProperties", "propertyNames", "contains", "not", "if", "then", "else", "contentSchema"}
	schemaMapKeywords    = []string{"properties", "patternProperties", "dependentSchemas"}
	schemaListKeywords   = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	setKeywords          = []string{"required", "enum", "type"}
	// annotationKeywords describe without constraining; they are ignored
	// by fingerprints and reported as info (description and default have
	// their own rules).
	annotationKeywords = []string{"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment", "contentMediaType", "contentEncoding", "$schema", "$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$vocabulary"}
)

// fingerprint is a semantic hash of a schema: equal for schemas that differ
// only in annotations, member order, the order of set-like arrays, number
// spelling, or a $ref versus the same schema inlined.
type fingerprint [16]byte

func (d *schemaDoc) fingerprint(v *value) fingerprint {
	v = d.deref(v)
	if v == nil || v.isBool() || (v.isObject() && len(v.names) == 0) {
		if isFalse(v) {
			return fingerprint{1}
		}
		return fingerprint{} // true, {} and absent are the same schema
	}
	if fp, ok := d.fps[v]; ok {
		return fp
	}
	if d.inFP[v] {
		return fingerprint{2} // a recursive reference back into this schema
	}
	d.inFP[v] = true
	defer delete(d.inFP, v)
	h := fnv.New128a()
	var buf []byte
	write := func(s string) {
		buf = binary.AppendUvarint(buf[:0], uint64(len(s)))
		h.Write(buf)
		h.Write([]byte(s))
	}
	writeFP := func(fp fingerprint) { h.Write(fp[:]) }
	if !v.isObject() {
		write(valueKey(v)) // not a schema: hash it as a value
		return d.storeFP(v, h)
	}
	order := slices.Clone(v.names)
	slices.Sort(order)
	for _, kw := range order {
		m := v.get(kw)
		switch {
		case slices.Contains(annotationKeywords, kw), kw == "$defs", kw == "definitions":
			continue
		case slices.Contains(singleSchemaKeywords, kw) && !m.isArray():
			write(kw)
			writeFP(d.fingerprint(m))
		case slices.Contains(schemaMapKeywords, kw) && m.isObject():
			write(kw)
			names := slices.Clone(m.names)
			slices.Sort(names)
			for _, n := range names {
				write(n)
				writeFP(d.fingerprint(m.get(n)))
			}
		case (slices.Contains(schemaListKeywords, kw) || kw == "items") && m.isArray():
			write(kw)
			fps := make([]fingerprint, len(m.items))
			for i, it := range m.items {
				fps[i] = d.fingerprint(it)
			}
			if kw != "prefixItems" && kw != "items" { // composition branches are unordered
				slices.SortFunc(fps, func(a, b fingerprint) int { return strings.Compare(string(a[:]), string(b[:])) })
			}
			for _, fp := range fps {
				writeFP(fp)
			}
		case slices.Contains(setKeywords, kw):
			write(kw)
			for _, k := range setOf(m) {
				write(k)
			}
		default:
			write(kw)
			write(valueKey(m))
		}
	}
	return d.storeFP(v, h)
}

func (d *schemaDoc) storeFP(v *value, h interface{ Sum([]byte) []byte }) fingerprint {
	var fp fingerprint
	copy(fp[:], h.Sum(nil))
	fp[0] |= 0x80 // never equal to the reserved true/false/cycle values
	d.fps[v] = fp
	return fp
}

// setOf returns the sorted distinct keys of a set-like keyword value (a
// single value counts as a one-element set: "type": "string").
func setOf(v *value) []string {
	var keys []string
	if v.isArray() {
		for _, it := range v.items {
			keys = append(keys, valueKey(it))
		}
	} else if v != nil {
		keys = append(keys, valueKey(v))
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// ptr is a JSON pointer built as a linked list, so the walk allocates one
// small node per step and renders strings only for reported changes.
type ptr struct {
	parent *ptr
	seg    string
}

func (p *ptr) child(seg string) *ptr { return &ptr{parent: p, seg: seg} }

func (p *ptr) index(i int) *ptr { return p.child(strconv.Itoa(i)) }

func (p *ptr) segments() []string {
	var segs []string
	for q := p; q != nil; q = q.parent {
		segs = append(segs, q.seg)
	}
	slices.Reverse(segs)
	return segs
}

// String renders the JSON pointer ("" for the root, "/a/b~1c").
func (p *ptr) String() string {
	var b strings.Builder
	for _, s := range p.segments() {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// paramName names the parameter or field a schema pointer is about, the way
// a caller writes it: "filters.since", "tags[]", "pair[0]", "labels.*".
// The first segment (inputSchema, outputSchema) is skipped.
func paramName(p *ptr) string {
	segs := p.segments()
	if len(segs) > 0 {
		segs = segs[1:]
	}
	var b strings.Builder
	dot := func(s string) {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	for i := 0; i < len(segs); i++ {
		next := ""
		if i+1 < len(segs) {
			next = segs[i+1]
		}
		switch segs[i] {
		case "properties", "dependentSchemas", "dependentRequired":
			if next != "" {
				dot(next)
				i++
			}
		case "patternProperties":
			if next != "" {
				dot("<" + next + ">")
				i++
			}
		case "items", "prefixItems":
			if _, err := strconv.Atoi(next); err == nil {
				b.WriteString("[" + next + "]")
				i++
			} else {
				b.WriteString("[]")
			}
		case "additionalItems", "unevaluatedItems":
			b.WriteString("[]")
		case "additionalProperties", "unevaluatedProperties":
			dot("*")
		case "anyOf", "oneOf", "allOf":
			i++ // a branch of the same parameter
		}
	}
	return b.String()
}
