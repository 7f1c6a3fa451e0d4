package witness

import (
	"iter"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/contract/internal/jsontype"
)

// variants proposes values that the view a should accept and the view b
// may reject, each aimed at one constraint b has and a lacks or relaxes:
// an enum member b dropped, a type b no longer takes, a number between the
// two limits, a string matching a's pattern but not b's, an object without
// a member b now requires or with one b no longer allows, and so on. They
// are proposals, most telling first, produced lazily: the search validates
// each as it comes and stops at the first true witness. minimal(a) comes
// last.
func (g *gen) variants(a, b view, depth int) iter.Seq[any] {
	return func(yield func(any) bool) {
		vs := &variants{g: g, yield: yield, seen: map[string]bool{}}
		vs.collect(a, b, depth)
		if !vs.stopped {
			if x, ok := g.minimal(a, depth); ok {
				vs.add(x)
			}
		}
	}
}

type variants struct {
	g       *gen
	yield   func(any) bool
	seen    map[string]bool
	n       int
	stopped bool
}

// maxVariants bounds the proposals for one value.
const maxVariants = 24

// add proposes x; it reports false once the consumer is done.
func (vs *variants) add(x any) bool {
	if vs.stopped {
		return false
	}
	if vs.n >= maxVariants || vs.g.values > maxValues {
		vs.stopped = true
		return false
	}
	if valueLooksSecret(x) {
		return true
	}
	key := string(appendJSON(nil, x))
	if vs.seen[key] {
		return true
	}
	vs.seen[key] = true
	vs.n++
	if !vs.yield(x) {
		vs.stopped = true
	}
	return !vs.stopped
}

func (vs *variants) collect(a, b view, depth int) {
	g := vs.g
	if depth > maxDepth || vs.stopped || a.never {
		return
	}
	if b.never {
		if x, ok := g.minimal(a, depth); ok {
			vs.add(x)
		}
		return
	}
	shared := a.types() & b.types()
	steps := []func(){
		func() { vs.enums(a, b) },
		func() { vs.types(a, b, depth) },
		func() {
			if shared&(jsontype.Number|jsontype.Integer) != 0 {
				vs.numbers(a, b)
			}
		},
		func() {
			if shared&jsontype.String != 0 {
				vs.strings(a, b)
			}
		},
		func() { vs.composition(a, b, depth) },
		func() {
			if shared&jsontype.Object != 0 {
				vs.objects(a, b, depth)
			}
		},
		func() {
			if shared&jsontype.Array != 0 {
				vs.arrays(a, b, depth)
			}
		},
	}
	for _, step := range steps {
		if vs.stopped {
			return
		}
		step()
	}
}

// nested proposes the variants of an inner pair of views, each wrapped by
// wrap into a value at this level.
func (vs *variants) nested(a, b view, depth int, wrap func(any) any) {
	for x := range vs.g.variants(a, b, depth) {
		if !vs.add(wrap(x)) {
			return
		}
	}
}

// enums: a's members b does not allow, or plain values outside b's enum.
func (vs *variants) enums(a, b view) {
	bv, bHas := enumValues(b)
	if !bHas {
		return
	}
	if av, ok := enumValues(a); ok {
		for _, x := range av {
			if !containsValue(bv, x) && typeAdmits(a.types(), x) && !vs.add(x) {
				return
			}
		}
		return
	}
	for _, t := range typeOrder(a) {
		for i := range 3 {
			if x, ok := vs.g.nth(a.onlyType(t), i, 0); ok && !containsValue(bv, x) {
				if !vs.add(x) {
					return
				}
				break
			}
		}
	}
}

// types: a value of each type a takes and b does not; for number narrowed
// to integer, a fraction.
func (vs *variants) types(a, b view, depth int) {
	am, bm := a.types(), b.types()
	if am&jsontype.Number != 0 && bm&jsontype.Number == 0 && bm&jsontype.Integer != 0 {
		lo, hi := a.numberBound(true), a.numberBound(false)
		for _, prefer := range [...]float64{0.5, 1.5} {
			if lo.set {
				prefer += lo.v
			}
			if x, ok := pickNumber(lo, hi, false, a.steps(), prefer); ok && !isWhole(x) {
				if !vs.add(numberValue(x)) {
					return
				}
				break
			}
		}
	}
	for _, t := range typeOrder(a) {
		if bm&t != 0 {
			continue
		}
		if x, ok := vs.g.ofType(a, t, depth); ok && !vs.add(x) {
			return
		}
	}
}

// onlyType restricts a view to one type (for generating a value of it).
func (v view) onlyType(t int) view {
	w := v
	w.only = t
	return w
}

// numbers: just past each limit b tightened, inside a's; a multiple of a's
// step that is not one of b's.
func (vs *variants) numbers(a, b view) {
	integer := a.types()&jsontype.Number == 0 || b.types()&jsontype.Number == 0
	alo, ahi, asteps := a.numberBound(true), a.numberBound(false), a.steps()
	try := func(prefer float64, outside func(float64) bool) bool {
		if x, ok := pickNumber(alo, ahi, integer, asteps, prefer); ok && outside(x) {
			return vs.add(numberValue(x))
		}
		return !vs.stopped
	}
	if bhi := b.numberBound(false); bhi.set {
		out := func(x float64) bool { return x > bhi.v || bhi.excl && x == bhi.v }
		if !try(bhi.v, out) || !try(bhi.v+1, out) {
			return
		}
		if ahi.set && (!try((bhi.v+ahi.v)/2, out) || !try(ahi.v, out)) {
			return
		}
	}
	if blo := b.numberBound(true); blo.set {
		out := func(x float64) bool { return x < blo.v || blo.excl && x == blo.v }
		if !try(blo.v, out) || !try(blo.v-1, out) {
			return
		}
		if alo.set && (!try((blo.v+alo.v)/2, out) || !try(alo.v, out)) {
			return
		}
	}
	if bsteps := b.steps(); len(bsteps) > 0 {
		base := 1.0
		if len(asteps) > 0 {
			base = asteps[0]
		}
		for k := 1; k <= 16; k++ {
			if x := base * float64(k); !divisible(x, bsteps) {
				try(x, func(y float64) bool { return !divisible(y, bsteps) })
				return
			}
		}
	}
}

// strings: lengths just past b's bounds; a's shapes (format example,
// pattern variants, plain words) that fail b's pattern or format.
func (vs *variants) strings(a, b view) {
	bmax, bhasMax := b.count("maxLength", false)
	bmin, bhasMin := b.count("minLength", true)
	bres, _, bok := b.patterns()
	bfmt := b.get("format").n.present
	if !bhasMax && !bhasMin && (!bok || len(bres) == 0) && !bfmt {
		return // b constrains strings no further than by type and enum
	}
	amin, _ := a.count("minLength", true)
	amax, ahasMax := a.count("maxLength", false)
	ares, asrc, ok := a.patterns()
	if !ok {
		return
	}
	var shapes []string
	if f, ok := a.get("format").str(); ok {
		if ex, known := formatExamples[f]; known {
			shapes = append(shapes, ex)
		}
	}
	for i := range 8 {
		for _, p := range asrc {
			if s, ok := synthesize(p, i); ok {
				shapes = append(shapes, s)
			}
		}
	}
	shapes = append(shapes, plainStrings...)
	fits := func(s string) bool {
		n := utf8.RuneCountInString(s)
		return n >= amin && (!ahasMax || n <= amax) && matchesAll(ares, s) && !looksLikeSecret(s)
	}
	if bhasMax && (!ahasMax || amax > bmax) {
		for _, s := range shapes[:min(len(shapes), 4)] {
			if c := stretch(s, bmax+1, ares); fits(c) {
				if !vs.add(c) {
					return
				}
				break
			}
		}
	}
	if bhasMin && bmin > amin && bmin-1 <= maxSynthRunes {
		for _, s := range shapes {
			if c := fitLength(s, bmin-1, bmin-1, true); fits(c) {
				if !vs.add(c) {
					return
				}
				break
			}
		}
	}
	if !bok || len(bres) == 0 && !bfmt {
		return
	}
	for _, s := range shapes {
		s = fitLength(s, amin, amax, ahasMax)
		if fits(s) && (len(bres) == 0 || !matchesAll(bres, s)) && !vs.add(s) {
			return
		}
	}
}

// stretch makes a string of n code points from s, keeping a pattern
// satisfied when repeating its last character does (for "^[a-z]+$").
func stretch(s string, n int, res []*regexp.Regexp) string {
	if n > maxSynthRunes {
		return s
	}
	r := []rune(s)
	if len(r) >= n {
		return string(r[:n])
	}
	fill := 'x'
	if len(r) > 0 {
		fill = r[len(r)-1]
	}
	out := s + strings.Repeat(string(fill), n-len(r))
	if !matchesAll(res, out) {
		out = s + strings.Repeat("x", n-len(r))
	}
	return out
}

// objects: a's minimal object without what b now requires, with a member
// b no longer allows, past b's member count, or with one member varied.
func (vs *variants) objects(a, b view, depth int) {
	g := vs.g
	base, ok := g.object(a, depth)
	if !ok {
		return
	}
	obj := base.(map[string]any)
	if !vs.add(obj) {
		return
	}
	with := func(name string, x any) any {
		o := clone(obj).(map[string]any)
		o[name] = x
		return o
	}
	addMember := func(name string) bool {
		if _, has := obj[name]; has || !a.allows(name) {
			return true
		}
		x, ok := g.minimal(a.member(name), depth+1)
		return !ok || vs.add(with(name, x))
	}
	// A member a allows and b does not (closed model, removed property).
	for _, name := range append(a.propertyNames(), extraNames...) {
		if _, has := obj[name]; !has && a.allows(name) && !b.allows(name) {
			if !addMember(name) {
				return
			}
			break
		}
	}
	// A member that b's dependentRequired (or dependencies) ties to
	// others, or that brings in b's dependentSchemas entry.
	for _, name := range append(b.dependentKeys(), b.dependentSchemaKeys()...) {
		if !addMember(name) {
			return
		}
	}
	// More members than b allows.
	if bmax, ok := b.count("maxProperties", false); ok && bmax < maxProps {
		o := clone(obj).(map[string]any)
		for _, name := range append(a.propertyNames(), extraNames...) {
			if len(o) > bmax {
				break
			}
			if _, has := o[name]; !has && a.allows(name) {
				if x, ok := g.minimal(a.member(name), depth+1); ok {
					o[name] = x
				}
			}
		}
		if len(o) > bmax && !vs.add(o) {
			return
		}
	}
	// Names b's propertyNames rejects.
	if b.has("propertyNames") {
		for _, name := range extraNames {
			if !addMember(name) {
				return
			}
		}
	}
	// One member varied: required members first, then declared ones.
	names := append(slices.Clone(a.strs("required")), a.propertyNames()...)
	for i, name := range names {
		if i >= maxProps || vs.stopped {
			return
		}
		if slices.Index(names, name) != i || len(b.member(name).nodes) == 0 {
			continue // b says nothing about the member: any value a takes, b takes
		}
		vs.nested(a.member(name), b.member(name), depth+1, func(x any) any { return with(name, x) })
	}
}

// extraNames are member names tried where a schema must get a member it
// does not declare.
var extraNames = []string{"extra", "Extra-1", "extra_2"}

// arrays: one element past b's maximum, one short of b's minimum, a
// repeated element, an element varied.
func (vs *variants) arrays(a, b view, depth int) {
	g := vs.g
	amin, _ := a.count("minItems", true)
	amax, ahasMax := a.count("maxItems", false)
	withCount := func(n int) bool {
		if n >= 0 && n <= maxItems && n >= amin && (!ahasMax || n <= amax) {
			if x, ok := g.array(a, depth, &n); ok {
				return vs.add(x)
			}
		}
		return !vs.stopped
	}
	if bmax, ok := b.count("maxItems", false); ok && !withCount(bmax+1) {
		return
	}
	if bmin, ok := b.count("minItems", true); ok && !withCount(bmin-1) {
		return
	}
	if !withCount(amin) {
		return
	}
	if bu, _ := b.get("uniqueItems").boolean(); bu && (!ahasMax || amax >= 2) {
		if x, ok := g.minimal(a.item(0), depth+1); ok {
			if y, ok := g.minimal(a.item(1), depth+1); ok && equal(x, y) {
				if !vs.add(padArray([]any{x, clone(y)}, a, amin, g, depth)) {
					return
				}
			}
		}
	}
	n := max(amin, 1)
	if ahasMax && amax < n || len(b.item(0).nodes) == 0 {
		return
	}
	vs.nested(a.item(0), b.item(0), depth+1, func(x any) any { return padArray([]any{x}, a, n, g, depth) })
}

func (s snode) boolean() (bool, bool) { return s.d.boolean(s.n) }

// padArray fills an array with minimal elements up to n.
func padArray(items []any, a view, n int, g *gen, depth int) []any {
	for i := len(items); i < n; i++ {
		x, ok := g.minimal(a.item(i), depth+1)
		if !ok {
			break
		}
		items = append(items, x)
	}
	return items
}

// composition: values of each of a's branches; values matching b's not,
// b's if (so that b's then applies), b's branches.
func (vs *variants) composition(a, b view, depth int) {
	g := vs.g
	for _, br := range g.unresolvedBranches(a) {
		if x, ok := g.minimal(br, depth+1); ok && !vs.add(x) {
			return
		}
	}
	for _, n := range b.all("not") {
		if x, ok := g.minimal(a.and(sub(n)), depth+1); ok && !vs.add(x) {
			return
		}
	}
	for _, kw := range [...]string{"oneOf", "anyOf"} {
		for _, list := range b.all(kw) {
			for i, br := range list.d.items(list.n) {
				if i == maxBranches {
					break
				}
				if x, ok := g.minimal(a.and(viewOf(list.d, br)), depth+1); ok && !vs.add(x) {
					return
				}
			}
		}
	}
	for _, s := range b.nodes {
		cond := s.d.get(s.n, "if")
		if !cond.present {
			continue
		}
		withIf := a.and(viewOf(s.d, cond))
		if then := s.d.get(s.n, "then"); then.present {
			vs.nested(withIf, viewOf(s.d, then), depth+1, func(x any) any { return x })
		}
		if x, ok := g.minimal(withIf, depth+1); ok && !vs.add(x) {
			return
		}
	}
}
