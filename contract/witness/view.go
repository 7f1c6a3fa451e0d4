package witness

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract/internal/jsontype"
)

// A view is a conjunction of schema nodes that all apply to one value: a
// node, the targets of its $refs, its allOf branches and, for the common
// value of two versions, the nodes of both. The generator reads constraints
// from a view (required names are the union, bounds the tightest, types the
// intersection); the validator, not the view, decides what is valid.

type snode struct {
	d *doc
	n node
}

type view struct {
	nodes []snode
	// never is set when a false schema is part of the conjunction.
	never bool
	// resolved are the anyOf/oneOf lists whose branch the generator has
	// already chosen (the branch is among nodes).
	resolved []snode
	// only, when set, restricts the types (a generator's choice).
	only int
}

// Bounds of the expansion: a view holds at most maxViewNodes nodes, and
// follows at most maxRefHops references in a chain.
const (
	maxViewNodes = 32
	maxRefHops   = 32
)

// viewOf expands n: references followed, allOf folded in.
func viewOf(d *doc, n node) view {
	var v view
	v.add(d, n, 0)
	return v
}

// and returns the conjunction of two views.
func (v view) and(o view) view {
	out := view{nodes: slices.Clone(v.nodes), never: v.never || o.never, resolved: slices.Clone(v.resolved), only: v.only}
	if o.only != 0 {
		out.only = o.only
		if v.only != 0 {
			out.only = v.only & o.only
		}
	}
	for _, s := range o.nodes {
		if len(out.nodes) < maxViewNodes && !slices.Contains(out.nodes, s) {
			out.nodes = append(out.nodes, s)
		}
	}
	for _, r := range o.resolved {
		if !slices.Contains(out.resolved, r) {
			out.resolved = append(out.resolved, r)
		}
	}
	return out
}

func (v *view) add(d *doc, n node, hops int) {
	if !n.present || hops > maxRefHops || len(v.nodes) >= maxViewNodes {
		return
	}
	if d.isFalse(n) {
		v.never = true
		return
	}
	if !d.isObject(n) || slices.Contains(v.nodes, snode{d, n}) {
		return
	}
	v.nodes = append(v.nodes, snode{d, n})
	// Most schemas have neither references nor allOf: one look at the
	// member names tells.
	if !slices.ContainsFunc(d.objectMembers(n), func(m member) bool { return m.name == "allOf" || strings.HasPrefix(m.name, "$") }) {
		return
	}
	for _, kw := range refKeywords {
		if t, ok := d.refTarget(n, kw); ok {
			v.add(d, t, hops+1)
		}
	}
	for _, b := range d.items(d.get(n, "allOf")) {
		v.add(d, b, hops+1)
	}
}

var refKeywords = [...]string{"$ref", "$recursiveRef", "$dynamicRef"}

// refTarget resolves a reference keyword of n within the document: "#",
// "#/json/pointer", "#anchor"; a reference to another document resolves
// only when it names the root's own $id.
func (d *doc) refTarget(n node, kw string) (node, bool) {
	ref, ok := d.str(d.get(n, kw))
	if !ok {
		return node{}, false
	}
	if kw == "$recursiveRef" {
		ref = "#"
	}
	t := d.resolve(ref)
	return t, t.present
}

func (d *doc) resolve(ref string) node {
	if n, ok := d.resolved[ref]; ok {
		return n
	}
	n := d.lookup(ref)
	if d.resolved == nil {
		d.resolved = map[string]node{}
	}
	d.resolved[ref] = n
	return n
}

// lookup finds what a reference names in the document (resolve, uncached).
func (d *doc) lookup(ref string) node {
	docPart, frag, _ := strings.Cut(ref, "#")
	root := d.root()
	if docPart != "" {
		if id, ok := d.str(d.get(root, "$id")); !ok || strings.TrimSuffix(id, "#") != docPart {
			return node{}
		}
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return node{}
	}
	if frag == "" {
		return root
	}
	if !strings.HasPrefix(frag, "/") {
		return d.anchor(frag)
	}
	cur := root
	for _, seg := range strings.Split(frag[1:], "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		switch {
		case d.isObject(cur):
			cur = d.get(cur, seg)
		case d.isArray(cur):
			i, err := strconv.Atoi(seg)
			its := d.items(cur)
			if err != nil || i < 0 || i >= len(its) {
				return node{}
			}
			cur = its[i]
		default:
			return node{}
		}
		if !cur.present {
			return node{}
		}
	}
	return cur
}

// anchor finds a plain-name anchor, scanning the document once.
func (d *doc) anchor(name string) node {
	if d.anchors == nil {
		d.anchors = map[string]node{}
		d.collectAnchors(d.root(), 0)
	}
	return d.anchors[name]
}

func (d *doc) collectAnchors(n node, depth int) {
	if depth > maxDepth {
		return
	}
	switch {
	case d.isObject(n):
		for _, kw := range [...]string{"$anchor", "$dynamicAnchor", "$id"} {
			if a, ok := d.str(d.get(n, kw)); ok {
				a = strings.TrimPrefix(a, "#")
				if _, dup := d.anchors[a]; !dup && (kw != "$id" || !strings.ContainsAny(a, "/:")) {
					d.anchors[a] = n
				}
			}
		}
		for _, m := range d.objectMembers(n) {
			d.collectAnchors(m.value, depth+1)
		}
	case d.isArray(n):
		for _, it := range d.items(n) {
			d.collectAnchors(it, depth+1)
		}
	}
}

// get returns the first value of kw in the view.
func (v view) get(kw string) snode {
	for _, s := range v.nodes {
		if m := s.d.get(s.n, kw); m.present {
			return snode{s.d, m}
		}
	}
	return snode{}
}

// all returns every value of kw in the view.
func (v view) all(kw string) []snode {
	var out []snode
	for _, s := range v.nodes {
		if m := s.d.get(s.n, kw); m.present {
			out = append(out, snode{s.d, m})
		}
	}
	return out
}

func (v view) has(kw string) bool { return v.get(kw).n.present }

// types is the intersection of the view's type keywords (with OpenAPI's
// nullable), jsontype.All when none says.
func (v view) types() int {
	mask := jsontype.All
	if v.only != 0 {
		mask = v.only
	}
	for _, s := range v.nodes {
		t := s.d.get(s.n, "type")
		if !t.present {
			continue
		}
		names := []node{t}
		if s.d.isArray(t) {
			names = s.d.items(t)
		}
		m := 0
		for _, n := range names {
			if name, ok := s.d.str(n); ok {
				m |= jsontype.Bits[name]
			}
		}
		if nb, ok := s.d.boolean(s.d.get(s.n, "nullable")); ok && nb {
			m |= jsontype.Null
		}
		if m != 0 {
			mask &= m
		}
	}
	return mask
}

// num reads a numeric keyword's tightest value: the largest (lower) or the
// smallest (upper) over the view.
func (v view) num(kw string, lower bool) (float64, bool) {
	var best float64
	found := false
	for _, s := range v.all(kw) {
		f, ok := s.d.num(s.n)
		if !ok {
			continue
		}
		if !found || lower && f > best || !lower && f < best {
			best, found = f, true
		}
	}
	return best, found
}

// bound is an effective numeric bound.
type bound struct {
	v    float64
	excl bool
	set  bool
}

// numberBound is the tightest lower (or upper) bound from minimum and
// exclusiveMinimum (draft 2020 numbers or draft-04 booleans).
func (v view) numberBound(lower bool) bound {
	incKW, exclKW := "maximum", "exclusiveMaximum"
	if lower {
		incKW, exclKW = "minimum", "exclusiveMinimum"
	}
	var b bound
	tighten := func(c bound) {
		switch {
		case !b.set:
			b = c
		case c.v == b.v:
			b.excl = b.excl || c.excl
		case lower == (c.v > b.v):
			b = c
		}
	}
	for _, s := range v.nodes {
		inc, incOK := s.d.num(s.d.get(s.n, incKW))
		excl := s.d.get(s.n, exclKW)
		if incOK {
			flag, _ := s.d.boolean(excl)
			tighten(bound{v: inc, excl: flag, set: true})
		}
		if e, ok := s.d.num(excl); ok {
			tighten(bound{v: e, excl: true, set: true})
		}
	}
	return b
}

// count reads a non-negative count keyword (minLength, maxItems, ...).
func (v view) count(kw string, lower bool) (int, bool) {
	f, ok := v.num(kw, lower)
	if !ok || f < 0 {
		return 0, false
	}
	if f > 1<<30 {
		f = 1 << 30
	}
	return int(f), true
}

// strs is the union of a string-array keyword over the view (required).
func (v view) strs(kw string) []string {
	var out []string
	for _, s := range v.all(kw) {
		for _, name := range s.d.strings(s.n) {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// patterns are the view's string patterns, compiled; one that does not
// compile makes ok false.
func (v view) patterns() (res []*regexp.Regexp, src []string, ok bool) {
	for _, s := range v.all("pattern") {
		p, isStr := s.d.str(s.n)
		if !isStr {
			continue
		}
		re, err := compilePattern(p)
		if err != nil {
			return nil, nil, false
		}
		res, src = append(res, re), append(src, p)
	}
	return res, src, true
}

// propertyNames lists the names declared under properties, in order.
func (v view) propertyNames() []string {
	var out []string
	for _, s := range v.all("properties") {
		for _, m := range s.d.objectMembers(s.n) {
			if !slices.Contains(out, m.name) {
				out = append(out, m.name)
			}
		}
	}
	return out
}

// member is the view of an object member called name: per node, its
// properties entry, else the patternProperties it matches, else
// additionalProperties.
func (v view) member(name string) view {
	var out view
	out.never = v.never
	for _, s := range v.nodes {
		if p := s.d.get(s.d.get(s.n, "properties"), name); p.present {
			out.add(s.d, p, 0)
			continue
		}
		matched := false
		for _, m := range s.d.objectMembers(s.d.get(s.n, "patternProperties")) {
			if re, err := compilePattern(m.name); err == nil && re.MatchString(name) {
				out.add(s.d, m.value, 0)
				matched = true
			}
		}
		if !matched {
			out.add(s.d, s.d.get(s.n, "additionalProperties"), 0)
		}
	}
	return out
}

// allows reports whether the view lets an object have a member called name
// at all (declared, matched by a pattern, or not closed).
func (v view) allows(name string) bool {
	return !v.member(name).never
}

// item is the view of array element i.
func (v view) item(i int) view {
	var out view
	out.never = v.never
	for _, s := range v.nodes {
		d := s.d
		prefix, rest := d.get(s.n, "prefixItems"), d.get(s.n, "items")
		if !d.isArray(prefix) && d.isArray(rest) { // draft-07 tuple
			prefix, rest = rest, d.get(s.n, "additionalItems")
		}
		if its := d.items(prefix); i < len(its) {
			out.add(d, its[i], 0)
			continue
		}
		out.add(d, rest, 0)
	}
	return out
}

// prefixLen is the longest tuple prefix in the view.
func (v view) prefixLen() int {
	n := 0
	for _, s := range v.nodes {
		prefix := s.d.get(s.n, "prefixItems")
		if !s.d.isArray(prefix) {
			prefix = s.d.get(s.n, "items")
		}
		n = max(n, len(s.d.items(prefix)))
	}
	return n
}

// sub is the view of one subschema.
func sub(s snode) view { return viewOf(s.d, s.n) }

// dependents returns, for the view, the names each present member requires
// (dependentRequired and draft-07 array dependencies).
func (v view) dependents(name string) []string {
	var out []string
	for _, kw := range [...]string{"dependentRequired", "dependencies"} {
		for _, s := range v.all(kw) {
			for _, n := range s.d.strings(s.d.get(s.n, name)) {
				if !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// dependentKeys are the member names whose presence requires other
// members (dependentRequired, draft-07 array dependencies).
func (v view) dependentKeys() []string { return v.keysOf("dependentRequired", true) }

// dependentSchemaKeys are the member names that bring in a dependentSchemas
// entry (or a draft-07 schema dependency).
func (v view) dependentSchemaKeys() []string { return v.keysOf("dependentSchemas", false) }

// keysOf lists the keys of kw and of draft-07 dependencies whose entries
// are name lists (lists) or schemas (!lists).
func (v view) keysOf(kw string, lists bool) []string {
	var out []string
	for _, k := range [...]string{kw, "dependencies"} {
		for _, s := range v.all(k) {
			for _, m := range s.d.objectMembers(s.n) {
				if s.d.isArray(m.value) == lists && !slices.Contains(out, m.name) {
					out = append(out, m.name)
				}
			}
		}
	}
	return out
}
