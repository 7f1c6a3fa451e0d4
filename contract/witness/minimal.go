package witness

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/contract/internal/jsontype"
)

// Bounds of generation: hostile schemas (recursive $refs, huge minimum
// counts, deep nesting) make the generator give up with "no witness"
// rather than run on.
const (
	// maxDepth bounds the depth of a generated value and of schema walks.
	maxDepth = 32
	// maxValues bounds the JSON values generated for one change.
	maxValues = 4096
	// maxItems bounds an array the generator builds (minItems above it: no witness).
	maxItems = 64
	// maxProps bounds an object's members.
	maxProps = 64
	// maxEnum bounds the enum members looked at.
	maxEnum = 64
	// maxBranches bounds the anyOf/oneOf branches tried.
	maxBranches = 8
)

// gen builds values from views. Values are what encoding/json decodes into
// (map[string]any, []any, string, json.Number, bool, nil), so they marshal
// deterministically (sorted member names).
type gen struct {
	values int
}

// spend counts one generated value against the budget.
func (g *gen) spend() bool {
	g.values++
	return g.values <= maxValues
}

// minimal returns a small value the view accepts: required members only,
// the first enum member, the bound nearest zero, a readable string.
func (g *gen) minimal(v view, depth int) (any, bool) {
	if v.never || depth > maxDepth || !g.spend() {
		return nil, false
	}
	if vals, ok := enumValues(v); ok {
		for _, x := range vals {
			if typeAdmits(v.types(), x) {
				return x, true
			}
		}
		return nil, false
	}
	if bs := g.unresolvedBranches(v); bs != nil {
		for _, b := range bs {
			if x, ok := g.minimal(b, depth+1); ok {
				return x, true
			}
		}
		return nil, false
	}
	for _, t := range typeOrder(v) {
		if x, ok := g.ofType(v, t, depth); ok {
			return x, true
		}
	}
	return nil, false
}

// unresolvedBranches returns, when the view has anyOf or oneOf not yet
// chosen, one view per branch (the view with that branch folded in).
func (g *gen) unresolvedBranches(v view) []view {
	for _, kw := range [...]string{"anyOf", "oneOf"} {
		for _, list := range v.all(kw) {
			if !list.d.isArray(list.n) || slices.Contains(v.resolved, list) {
				continue
			}
			var out []view
			for i, b := range list.d.items(list.n) {
				if i == maxBranches {
					break
				}
				w := v.and(viewOf(list.d, b))
				w.resolved = append(w.resolved, list)
				out = append(out, w)
			}
			return out
		}
	}
	return nil
}

// typeOrder lists the types to try for a view, most telling first: the
// type its keywords imply, then readable scalars.
func typeOrder(v view) []int {
	mask := v.types()
	var order []int
	add := func(t int) {
		if mask&t != 0 && !slices.Contains(order, t) {
			order = append(order, t)
		}
	}
	switch {
	case v.has("properties") || v.has("required") || v.has("additionalProperties") || v.has("patternProperties") || v.has("minProperties"):
		add(jsontype.Object)
	case v.has("items") || v.has("prefixItems") || v.has("minItems") || v.has("contains"):
		add(jsontype.Array)
	case v.has("minimum") || v.has("maximum") || v.has("exclusiveMinimum") || v.has("exclusiveMaximum") || v.has("multipleOf"):
		add(jsontype.Integer)
		add(jsontype.Number)
	}
	for _, t := range [...]int{jsontype.String, jsontype.Integer, jsontype.Number, jsontype.Boolean, jsontype.Object, jsontype.Array, jsontype.Null} {
		add(t)
	}
	return order
}

func (g *gen) ofType(v view, t int, depth int) (any, bool) {
	switch t {
	case jsontype.Null:
		return nil, true
	case jsontype.Boolean:
		return false, true
	case jsontype.Integer:
		return g.number(v, true, 0)
	case jsontype.Number:
		return g.number(v, false, 0)
	case jsontype.String:
		return g.str(v, 0)
	case jsontype.Object:
		return g.object(v, depth)
	case jsontype.Array:
		return g.array(v, depth, nil)
	}
	return nil, false
}

// number picks a number the view's bounds, integer type and multipleOf
// allow, as near prefer as they let it be.
func (g *gen) number(v view, integer bool, prefer float64) (any, bool) {
	lo, hi := v.numberBound(true), v.numberBound(false)
	steps := v.steps()
	x, ok := pickNumber(lo, hi, integer || v.types()&jsontype.Number == 0, steps, prefer)
	if !ok {
		return nil, false
	}
	return numberValue(x), true
}

// steps are the view's multipleOf values.
func (v view) steps() []float64 {
	var out []float64
	for _, s := range v.all("multipleOf") {
		if f, ok := s.d.num(s.n); ok && f > 0 {
			out = append(out, f)
		}
	}
	return out
}

func pickNumber(lo, hi bound, integer bool, steps []float64, prefer float64) (float64, bool) {
	x := prefer
	if lo.set && (x < lo.v || lo.excl && x <= lo.v) {
		x = lo.v
		if lo.excl {
			x = above(lo.v, hi, integer)
		}
	}
	if hi.set && (x > hi.v || hi.excl && x >= hi.v) {
		x = hi.v
		if hi.excl {
			x = below(hi.v, lo, integer)
		}
	}
	if integer {
		x = math.Ceil(x)
	}
	if len(steps) > 0 {
		step := steps[0]
		if integer && !isWhole(step) {
			step = math.Ceil(step)
		}
		k := math.Ceil(x / step)
		for range 64 {
			y := k * step
			if divisible(y, steps) && (!integer || isWhole(y)) {
				x = y
				break
			}
			k++
		}
	}
	if math.IsInf(x, 0) || math.IsNaN(x) ||
		lo.set && (x < lo.v || lo.excl && x <= lo.v) ||
		hi.set && (x > hi.v || hi.excl && x >= hi.v) ||
		integer && !isWhole(x) || !divisible(x, steps) {
		return 0, false
	}
	return x, true
}

// above is the smallest readable value over an exclusive lower bound v.
func above(v float64, hi bound, integer bool) float64 {
	if integer {
		return math.Floor(v) + 1
	}
	if hi.set && hi.v-v <= 1 {
		return v + (hi.v-v)/2
	}
	return v + 1
}

func below(v float64, lo bound, integer bool) float64 {
	if integer {
		return math.Ceil(v) - 1
	}
	if lo.set && v-lo.v <= 1 {
		return v - (v-lo.v)/2
	}
	return v - 1
}

func isWhole(f float64) bool { return f == math.Trunc(f) && !math.IsInf(f, 0) }

// divisible reports whether x is a multiple of every step (within the
// rounding of binary fractions such as 0.1).
func divisible(x float64, steps []float64) bool {
	for _, s := range steps {
		q := x / s
		if math.Abs(q-math.Round(q)) > 1e-9*math.Max(1, math.Abs(q)) {
			return false
		}
	}
	return true
}

// numberValue writes a number as JSON: integers without exponent or
// fraction, others in the shortest form.
func numberValue(x float64) json.Number {
	if isWhole(x) && math.Abs(x) < 1e21 {
		return json.Number(strconv.FormatFloat(x, 'f', -1, 64))
	}
	return json.Number(strconv.FormatFloat(x, 'g', -1, 64))
}

// str builds a string: a format example, a string matching the patterns,
// or "example", fitted to the length bounds. variant picks another shape.
func (g *gen) str(v view, variant int) (any, bool) {
	minLen, _ := v.count("minLength", true)
	maxLen, hasMax := v.count("maxLength", false)
	if minLen > maxSynthRunes || hasMax && maxLen < minLen {
		return nil, false
	}
	res, src, ok := v.patterns()
	if !ok {
		return nil, false
	}
	var candidates []string
	if f, ok := v.get("format").str(); ok {
		if ex, known := formatExamples[f]; known {
			candidates = append(candidates, ex)
		}
	}
	for i := range 4 {
		for _, p := range src {
			if s, ok := synthesize(p, variant+i); ok {
				candidates = append(candidates, s)
			}
		}
	}
	candidates = append(candidates, "example", "example-"+strconv.Itoa(variant+1))
	for _, c := range candidates {
		c = fitLength(c, minLen, maxLen, hasMax)
		if matchesAll(res, c) && !looksLikeSecret(c) {
			return c, true
		}
	}
	return nil, false
}

func (s snode) str() (string, bool) { return s.d.str(s.n) }

// fitLength pads with "x" or cuts a string to the length bounds (in code
// points, as JSON Schema counts).
func fitLength(s string, minLen, maxLen int, hasMax bool) string {
	if n := utf8.RuneCountInString(s); n < minLen {
		s += strings.Repeat("x", minLen-n)
	}
	if hasMax && utf8.RuneCountInString(s) > maxLen {
		s = string([]rune(s)[:maxLen])
	}
	return s
}

func matchesAll(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if !re.MatchString(s) {
			return false
		}
	}
	return true
}

// object builds the required members (and what they depend on), then
// optional declared members up to minProperties.
func (g *gen) object(v view, depth int) (any, bool) {
	obj := map[string]any{}
	order := v.strs("required") // a fresh slice: appended to below
	for i := 0; i < len(order); i++ {
		if len(order) > maxProps {
			return nil, false
		}
		for _, dep := range v.dependents(order[i]) {
			if !slices.Contains(order, dep) {
				order = append(order, dep)
			}
		}
	}
	minProps, _ := v.count("minProperties", true)
	if minProps > maxProps {
		return nil, false
	}
	if len(order) < minProps {
		for _, name := range v.propertyNames() {
			if len(order) >= minProps {
				break
			}
			if !slices.Contains(order, name) {
				order = append(order, name)
			}
		}
	}
	for i := 0; len(order) < minProps; i++ {
		order = append(order, "extra_"+strconv.Itoa(i+1))
	}
	for _, name := range order {
		x, ok := g.minimal(v.member(name), depth+1)
		if !ok {
			return nil, false
		}
		obj[name] = x
	}
	return obj, true
}

// array builds minItems elements (and one matching contains); with
// uniqueItems the elements are made distinct. count overrides minItems.
func (g *gen) array(v view, depth int, count *int) (any, bool) {
	n, _ := v.count("minItems", true)
	if count != nil {
		n = *count
	}
	contains := v.get("contains")
	if contains.n.present && n == 0 {
		if mc, ok := v.count("minContains", true); !ok || mc > 0 {
			n = 1
		}
	}
	if n > maxItems {
		return nil, false
	}
	unique := false
	for _, s := range v.all("uniqueItems") {
		if b, _ := s.d.boolean(s.n); b {
			unique = true
		}
	}
	out := make([]any, 0, n)
	for i := range n {
		item := v.item(i)
		if i == 0 && contains.n.present {
			item = item.and(sub(contains))
		}
		var x any
		var ok bool
		if unique {
			x, ok = g.nth(item, i, depth+1)
		} else {
			x, ok = g.minimal(item, depth+1)
		}
		if !ok {
			return nil, false
		}
		out = append(out, x)
	}
	return out, true
}

// nth returns the i-th of several distinct small values of a view (for
// arrays with uniqueItems).
func (g *gen) nth(v view, i int, depth int) (any, bool) {
	if vals, ok := enumValues(v); ok {
		if i < len(vals) {
			return vals[i], true
		}
		return nil, false
	}
	for _, t := range typeOrder(v) {
		switch t {
		case jsontype.Integer, jsontype.Number:
			if x, ok := g.number(v, t == jsontype.Integer, float64(i)); ok {
				return x, true
			}
		case jsontype.String:
			if x, ok := g.str(v, i); ok {
				return x, true
			}
		case jsontype.Boolean:
			if i < 2 {
				return i == 1, true
			}
		default:
			if i == 0 {
				return g.ofType(v, t, depth)
			}
		}
	}
	return nil, false
}

// enumValues decodes the view's const or enum (the first node's, filtered
// by the others'); ok is false when the view has neither. Decoded lists
// are cached per document node and shared: callers never modify them.
func enumValues(v view) ([]any, bool) {
	var lists [][]any
	for _, s := range v.nodes {
		if l, ok := s.d.enumList(s.n); ok {
			lists = append(lists, l)
		}
	}
	if len(lists) == 0 {
		return nil, false
	}
	if len(lists) == 1 {
		return lists[0], true
	}
	var out []any
	for _, x := range lists[0] {
		inAll := true
		for _, l := range lists[1:] {
			inAll = inAll && containsValue(l, x)
		}
		if inAll {
			out = append(out, x)
		}
	}
	return out, true
}

// enumList is a node's const (as a one-value list) or enum, decoded once;
// members that look like secrets are left out.
func (d *doc) enumList(n node) ([]any, bool) {
	if l, ok := d.enums[n.off]; ok {
		return l, l != nil
	}
	var list []any
	if c := d.get(n, "const"); c.present {
		if x, ok := d.decodeNode(c, 0); ok && !valueLooksSecret(x) {
			list = []any{x}
		} else {
			list = []any{}
		}
	} else if e := d.get(n, "enum"); d.isArray(e) {
		list = []any{}
		for i, it := range d.items(e) {
			if i == maxEnum {
				break
			}
			if x, ok := d.decodeNode(it, 0); ok && !valueLooksSecret(x) {
				list = append(list, x)
			}
		}
	}
	if d.enums == nil {
		d.enums = map[int][]any{}
	}
	d.enums[n.off] = list
	return list, list != nil
}

// containsValue reports whether list holds a value equal to x (JSON
// equality: numbers by value).
func containsValue(list []any, x any) bool {
	return slices.ContainsFunc(list, func(y any) bool { return equal(x, y) })
}

func equal(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, e1 := x.Float64()
		fy, e2 := y.Float64()
		return e1 == nil && e2 == nil && fx == fy
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, equal)
	}
	return a == b
}

// typeAdmits reports whether a value is of a type in mask.
func typeAdmits(mask int, x any) bool {
	return mask&typeOf(x) != 0
}

func typeOf(x any) int {
	switch v := x.(type) {
	case nil:
		return jsontype.Null
	case bool:
		return jsontype.Boolean
	case map[string]any:
		return jsontype.Object
	case []any:
		return jsontype.Array
	case string:
		return jsontype.String
	case json.Number:
		if f, err := v.Float64(); err == nil && isWhole(f) {
			return jsontype.Integer
		}
		return jsontype.Number
	}
	panic(fmt.Sprintf("witness: unexpected value type %T", x)) // a programming error
}

// clone copies a value deeply.
func clone(x any) any {
	switch v := x.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, m := range v {
			out[k] = clone(m)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, m := range v {
			out[i] = clone(m)
		}
		return out
	}
	return x
}
