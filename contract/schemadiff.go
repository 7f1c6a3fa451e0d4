package contract

import (
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract/internal/jsontype"
)

// Direction of a schema: input schemas are what the server accepts (a change
// that rejects what was accepted breaks callers); output schemas are what it
// emits (a change that can emit what was not allowed breaks consumers).
type Direction string

// The directions, which are also the prefixes of schema rule ids.
const (
	DirectionInput  Direction = "input"
	DirectionOutput Direction = "output"
)

// rule is this direction's id for r (empty if r does not exist in it).
func (d Direction) rule(r schemaRule) RuleID {
	if d == DirectionInput {
		return schemaRuleIDs[r].input
	}
	return schemaRuleIDs[r].output
}

// maxSchemaDepth bounds the logical depth of the walk (through $refs).
const maxSchemaDepth = 256

// schemaDiff compares two versions of one schema (inputSchema or
// outputSchema of one tool) and reports changes through emit.
type schemaDiff struct {
	dir      Direction
	old, new *schemaDoc
	// seen memoizes compared pairs: a pair reached again (a recursive $ref,
	// or a definition used twice) is not walked again. This makes the walk
	// cycle-safe and keeps it linear in the size of the schemas.
	seen   map[[2]*value]bool
	budget int
	// cut is set when the budget or the depth bound stopped the walk.
	cut  bool
	root *ptr
	sink *toolSink
}

// toolSink receives the changes of one tool's schemas.
type toolSink struct {
	c        *collector
	subject  Kind
	name     string
	scanOpts ScanOptions
}

func newSchemaDiff(dir Direction, oldRoot, newRoot *value, root *ptr, sink *toolSink, budget int) *schemaDiff {
	return &schemaDiff{
		dir: dir, old: newSchemaDoc(oldRoot), new: newSchemaDoc(newRoot),
		seen: map[[2]*value]bool{}, budget: budget, root: root, sink: sink,
	}
}

// run compares the two roots and reports a too-complex change if the walk
// was cut short.
func (d *schemaDiff) run(oldRoot, newRoot *value) {
	d.compare(oldRoot, newRoot, d.root, 0)
	if d.cut {
		d.emit(schemaSchemaTooComplex, d.root, d.root, nil, nil, nil)
	}
}

func (d *schemaDiff) emit(r schemaRule, at, param *ptr, before, after json.RawMessage, vars map[string]string) {
	if vars == nil {
		vars = map[string]string{}
	}
	if _, ok := vars["param"]; !ok {
		vars["param"] = displayParam(param, d.dir)
	}
	d.sink.c.add(d.dir.rule(r), d.sink.subject, d.sink.name, at.String(), before, after, vars)
}

func displayParam(p *ptr, dir Direction) string {
	if n := paramName(p); n != "" {
		return SanitizeText(n)
	}
	if dir == DirectionInput {
		return "the arguments"
	}
	return "the result"
}

// compare walks one pair of subschemas at the same logical position.
// nil means absent, which is the same as true and {}.
func (d *schemaDiff) compare(o, n *value, at *ptr, depth int) {
	if d.budget <= 0 || depth > maxSchemaDepth {
		d.cut = true
		return
	}
	d.budget--
	o, n = d.old.deref(o), d.new.deref(n)
	key := [2]*value{o, n}
	if d.seen[key] {
		return
	}
	d.seen[key] = true
	of, nf := isFalse(o), isFalse(n)
	switch {
	case of && nf:
		return
	case nf:
		d.emit(schemaSchemaRejectsAll, at, at, schemaJSON(o), rawJSON(n), nil)
		return
	case of:
		d.emit(schemaSchemaAccepts, at, at, rawJSON(o), schemaJSON(n), nil)
		return
	}
	if notSchema(o) || notSchema(n) { // a number or string where a schema belongs
		if !equalValues(o, n) {
			d.emit(schemaKeywordChanged, at, at, rawJSON(o), rawJSON(n), map[string]string{"keyword": "schema"})
		}
		return
	}
	shared := d.compareType(o, n, at)
	d.compareValues(o, n, at)
	if shared&(jsontype.Number|jsontype.Integer) != 0 {
		d.compareNumberBounds(o, n, at)
		d.compareMultipleOf(o, n, at)
	}
	if shared&jsontype.String != 0 {
		d.compareCounts(o, n, at, "minLength", "maxLength")
		d.compareText(o, n, at, "pattern", schemaPatternAdded, schemaPatternRemoved, schemaPatternChanged)
	}
	d.compareText(o, n, at, "format", schemaFormatAdded, schemaFormatRemoved, schemaFormatChanged)
	if shared&jsontype.Array != 0 {
		d.compareCounts(o, n, at, "minItems", "maxItems")
		d.compareCounts(o, n, at, "minContains", "maxContains")
		d.compareUniqueItems(o, n, at)
		d.compareItems(o, n, at, depth)
	}
	if shared&jsontype.Object != 0 {
		d.compareCounts(o, n, at, "minProperties", "maxProperties")
		d.compareProperties(o, n, at, depth)
		d.compareAdditional(o, n, at, depth, "additionalProperties")
		d.compareAdditional(o, n, at, depth, "unevaluatedProperties")
		d.comparePatternProperties(o, n, at, depth)
		d.compareSub(o, n, at, depth, "propertyNames")
		d.compareDependencies(o, n, at, depth)
	}
	d.compareComposition(o, n, at, depth)
	d.compareAnnotations(o, n, at)
}

func notSchema(v *value) bool { return v != nil && !v.isObject() && !v.isBool() }

// schemaJSON is rawJSON with an absent schema shown as true.
func schemaJSON(v *value) json.RawMessage {
	if v == nil {
		return json.RawMessage("true")
	}
	return rawJSON(v)
}

// typeMask is the set of JSON types a schema admits, from "type" (with the
// OpenAPI "nullable"), narrowed by anyOf/oneOf lists whose branches only
// name types (pydantic writes Optional[str] as anyOf [string, null]).
func (d *schemaDiff) typeMask(doc *schemaDoc, s *value) int {
	mask := keywordTypeMask(s)
	for _, kw := range [...]string{"anyOf", "oneOf"} {
		if u, ok := foldedTypes(doc, s.get(kw)); ok {
			mask &= u
		}
	}
	return mask
}

func keywordTypeMask(s *value) int {
	t := s.get("type")
	if t == nil {
		return jsontype.All
	}
	mask := 0
	names := []*value{t}
	if t.isArray() {
		names = t.items
	}
	for _, n := range names {
		if n.isString() {
			mask |= jsontype.Bits[n.text]
		}
	}
	if mask == 0 {
		return jsontype.All // an empty or unreadable type constrains nothing we can judge
	}
	if nb := s.get("nullable"); nb.isBool() && nb.boolean {
		mask |= jsontype.Null
	}
	return mask
}

// foldedTypes reports the union of types of a branch list whose branches
// only say "type" (and annotations).
func foldedTypes(doc *schemaDoc, list *value) (int, bool) {
	if !list.isArray() || len(list.items) == 0 {
		return 0, false
	}
	u := 0
	for _, b := range list.items {
		b = doc.deref(b)
		if !b.isObject() || b.get("type") == nil {
			return 0, false
		}
		for _, n := range b.names {
			if n != "type" && n != "nullable" && !slices.Contains(annotationKeywords, n) {
				return 0, false
			}
		}
		u |= keywordTypeMask(b)
	}
	return u, true
}

func typeNames(mask int) string {
	if mask == jsontype.All {
		return "any type"
	}
	var names []string
	for _, n := range [...]string{"null", "boolean", "object", "array", "number", "integer", "string"} {
		bit := jsontype.Bits[n]
		if n == "integer" && mask&jsontype.Number != 0 {
			continue
		}
		if mask&bit == bit {
			names = append(names, n)
		}
	}
	return strings.Join(names, "|")
}

// compareType reports type changes and returns the types both sides admit,
// which decides the type-specific keywords worth comparing.
func (d *schemaDiff) compareType(o, n *value, at *ptr) int {
	om, nm := d.typeMask(d.old, o), d.typeMask(d.new, n)
	if om != nm {
		vars := map[string]string{"before": typeNames(om), "after": typeNames(nm)}
		where := at.child("type")
		before, after := rawJSON(o.get("type")), rawJSON(n.get("type"))
		switch {
		case nm&om == nm:
			d.emit(schemaTypeNarrowed, where, at, before, after, vars)
		case nm&om == om:
			d.emit(schemaTypeWidened, where, at, before, after, vars)
		default:
			d.emit(schemaTypeChanged, where, at, before, after, vars)
		}
	}
	return om & nm
}

// allowedValues is the set of values enum/const allow, keyed by valueKey in
// order of appearance; ok is false when neither keyword is present.
func allowedValues(s *value) (keys []string, vals map[string]*value, kw string, ok bool) {
	list := s.get("enum")
	kw = "enum"
	if c := s.get("const"); c != nil {
		list, kw = &value{kind: '[', items: []*value{c}}, "const"
	}
	if !list.isArray() {
		return nil, nil, "", false
	}
	vals = map[string]*value{}
	for _, it := range list.items {
		k := valueKey(it)
		if _, dup := vals[k]; !dup {
			vals[k] = it
			keys = append(keys, k)
		}
	}
	return keys, vals, kw, true
}

// compareValues compares enum/const as sets.
func (d *schemaDiff) compareValues(o, n *value, at *ptr) {
	ok, ov, okw, oHas := allowedValues(o)
	nk, nv, nkw, nHas := allowedValues(n)
	switch {
	case !oHas && !nHas:
	case !oHas:
		d.emit(schemaEnumAdded, at.child(nkw), at, nil, rawJSON(n.get(nkw)), nil)
	case !nHas:
		d.emit(schemaEnumRemoved, at.child(okw), at, rawJSON(o.get(okw)), nil, nil)
	default:
		for _, k := range ok {
			if nv[k] == nil {
				d.emit(schemaEnumValueRemoved, at.child(okw), at, rawJSON(ov[k]), nil, nil)
			}
		}
		for _, k := range nk {
			if ov[k] == nil {
				d.emit(schemaEnumValueAdded, at.child(nkw), at, nil, rawJSON(nv[k]), nil)
			}
		}
	}
}

// bound is one side of a numeric range: a value and whether it is exclusive.
type bound struct {
	v    *value
	excl bool
	kw   string
}

// numberBound reads the effective lower (or upper) bound from minimum /
// exclusiveMinimum (draft 2020 numbers, or draft-04 booleans), the tighter
// of the two when both are present.
func numberBound(s *value, lower bool) *bound {
	incKW, exclKW := "maximum", "exclusiveMaximum"
	if lower {
		incKW, exclKW = "minimum", "exclusiveMinimum"
	}
	var b *bound
	if v := s.get(incKW); v.isNumber() {
		b = &bound{v: v, kw: incKW}
		if e := s.get(exclKW); e.isBool() && e.boolean {
			b.excl = true
		}
	}
	if v := s.get(exclKW); v.isNumber() {
		e := &bound{v: v, excl: true, kw: exclKW}
		if b == nil || tighter(e, b, lower) {
			b = e
		}
	}
	return b
}

// tighter reports whether a admits strictly less than b.
func tighter(a, b *bound, lower bool) bool {
	if numbersEqual(a.v, b.v) {
		return a.excl && !b.excl
	}
	if lower {
		return a.v.num > b.v.num
	}
	return a.v.num < b.v.num
}

func (d *schemaDiff) compareNumberBounds(o, n *value, at *ptr) {
	for _, lower := range [...]bool{true, false} {
		ob, nb := numberBound(o, lower), numberBound(n, lower)
		d.compareBound(ob, nb, at, lower)
	}
}

func (d *schemaDiff) compareBound(ob, nb *bound, at *ptr, lower bool) {
	switch {
	case ob == nil && nb == nil:
	case ob == nil:
		d.emit(schemaLimitAdded, at.child(nb.kw), at, nil, rawJSON(nb.v), map[string]string{"keyword": nb.kw})
	case nb == nil:
		d.emit(schemaLimitRemoved, at.child(ob.kw), at, rawJSON(ob.v), nil, map[string]string{"keyword": ob.kw})
	case tighter(nb, ob, lower):
		d.emit(schemaLimitTightened, at.child(nb.kw), at, rawJSON(ob.v), rawJSON(nb.v), map[string]string{"keyword": nb.kw})
	case tighter(ob, nb, lower):
		d.emit(schemaLimitRelaxed, at.child(nb.kw), at, rawJSON(ob.v), rawJSON(nb.v), map[string]string{"keyword": nb.kw})
	}
}

// compareCounts compares a min/max pair of counts (lengths, item or
// property counts). A minimum of 0 is the same as none.
func (d *schemaDiff) compareCounts(o, n *value, at *ptr, minKW, maxKW string) {
	count := func(s *value, kw string, lower bool) *bound {
		v := s.get(kw)
		if !v.isNumber() || lower && v.numOK && v.num <= 0 {
			return nil
		}
		return &bound{v: v, kw: kw}
	}
	d.compareBound(count(o, minKW, true), count(n, minKW, true), at, true)
	d.compareBound(count(o, maxKW, false), count(n, maxKW, false), at, false)
}

func (d *schemaDiff) compareMultipleOf(o, n *value, at *ptr) {
	om, nm := o.get("multipleOf"), n.get("multipleOf")
	if !om.isNumber() {
		om = nil
	}
	if !nm.isNumber() {
		nm = nil
	}
	where := at.child("multipleOf")
	vars := map[string]string{"keyword": "multipleOf"}
	switch {
	case om == nil || nm == nil:
		d.oneSided(schemaLimitAdded, schemaLimitRemoved, where, at, om, nm, vars)
	case numbersEqual(om, nm):
	case om.numOK && nm.numOK && nm.num > 0 && isWhole(om.num/nm.num):
		// every multiple of the old step is a multiple of the new one
		d.emit(schemaLimitRelaxed, where, at, rawJSON(om), rawJSON(nm), vars)
	default:
		d.emit(schemaLimitTightened, where, at, rawJSON(om), rawJSON(nm), vars)
	}
}

func isWhole(f float64) bool {
	return f >= 1 && math.Abs(f-math.Round(f)) <= 1e-9*f
}

func (d *schemaDiff) compareUniqueItems(o, n *value, at *ptr) {
	ou, nu := o.get("uniqueItems"), n.get("uniqueItems")
	oSet, nSet := ou.isBool() && ou.boolean, nu.isBool() && nu.boolean
	vars := map[string]string{"keyword": "uniqueItems"}
	switch {
	case !oSet && nSet:
		d.emit(schemaLimitTightened, at.child("uniqueItems"), at, rawJSON(ou), rawJSON(nu), vars)
	case oSet && !nSet:
		d.emit(schemaLimitRelaxed, at.child("uniqueItems"), at, rawJSON(ou), rawJSON(nu), vars)
	}
}

// compareText handles pattern and format: added, changed or removed.
func (d *schemaDiff) compareText(o, n *value, at *ptr, kw string, added, removed, changed schemaRule) {
	ov, nv := o.get(kw), n.get(kw)
	if equalValues(ov, nv) {
		return
	}
	where := at.child(kw)
	if !d.oneSided(added, removed, where, at, ov, nv, nil) {
		d.emit(changed, where, at, rawJSON(ov), rawJSON(nv), nil)
	}
}

// compareProperties walks every property named in properties or required
// on either side.
func (d *schemaDiff) compareProperties(o, n *value, at *ptr, depth int) {
	op, np := o.get("properties"), n.get("properties")
	oReq, nReq := requiredSet(o), requiredSet(n)
	names := unionSorted(objectNames(op), objectNames(np), oReq, nReq)
	closed := isClosed(d.new, n)
	for _, name := range names {
		os, ns := op.get(name), np.get(name)
		or, nr := slices.Contains(oReq, name), slices.Contains(nReq, name)
		oHas, nHas := os != nil || or, ns != nil || nr
		where := at.child("properties").child(name)
		switch {
		case !oHas && nHas:
			rule := schemaPropertyAdded
			if nr {
				rule = schemaPropertyAddedRequired
				if d.dir == DirectionInput && hasDefault(d.new, ns) {
					rule = schemaPropertyAddedRequiredDefault
				}
			}
			d.emit(rule, where, where, nil, schemaJSON(ns), nil)
			d.scanAdded(ns, where)
		case oHas && !nHas:
			rule := schemaPropertyRemovedOpen
			switch {
			case d.dir == DirectionOutput && or:
				rule = schemaPropertyRemovedRequired
			case d.dir == DirectionOutput:
				rule = schemaPropertyRemovedOptional
			case closed:
				rule = schemaPropertyRemovedClosed
			}
			d.emit(rule, where, where, schemaJSON(os), nil, nil)
		default:
			if or && !nr {
				d.emit(schemaRequiredRemoved, at.child("required"), where, jsonString(name), nil, nil)
			}
			if !or && nr {
				rule := schemaRequiredAdded
				if d.dir == DirectionInput && hasDefault(d.new, ns) {
					rule = schemaRequiredAddedDefault
				}
				d.emit(rule, at.child("required"), where, nil, jsonString(name), nil)
			}
			d.compare(os, ns, where, depth+1)
		}
	}
}

func objectNames(v *value) []string {
	if !v.isObject() {
		return nil
	}
	return v.names
}

func requiredSet(s *value) []string {
	r := s.get("required")
	if !r.isArray() {
		return nil
	}
	var names []string
	for _, it := range r.items {
		if it.isString() {
			names = append(names, it.text)
		}
	}
	return names
}

func hasDefault(doc *schemaDoc, s *value) bool {
	return doc.deref(s).get("default") != nil
}

// isClosed reports an object schema that rejects undeclared members.
func isClosed(doc *schemaDoc, s *value) bool {
	return isFalse(doc.deref(s.get("additionalProperties"))) || isFalse(doc.deref(s.get("unevaluatedProperties")))
}

// compareAdditional handles additionalProperties and unevaluatedProperties:
// closing and opening have their own rules, otherwise the schemas recurse.
func (d *schemaDiff) compareAdditional(o, n *value, at *ptr, depth int, kw string) {
	os, ns := o.get(kw), n.get(kw)
	oc, nc := isFalse(d.old.deref(os)), isFalse(d.new.deref(ns))
	where := at.child(kw)
	vars := map[string]string{"keyword": kw}
	switch {
	case !oc && nc:
		d.emit(schemaAdditionalPropertiesClosed, where, at, rawJSON(os), rawJSON(ns), vars)
	case oc && !nc:
		d.emit(schemaAdditionalPropertiesOpened, where, at, rawJSON(os), rawJSON(ns), vars)
	case !oc && !nc:
		d.compare(os, ns, where, depth+1)
	}
}

// comparePatternProperties compares patterns present on both sides; a
// pattern on one side only is compared with what governed those members on
// the other side (additionalProperties).
func (d *schemaDiff) comparePatternProperties(o, n *value, at *ptr, depth int) {
	op, np := o.get("patternProperties"), n.get("patternProperties")
	for _, p := range unionSorted(objectNames(op), objectNames(np)) {
		os, ns := op.get(p), np.get(p)
		if os == nil {
			os = o.get("additionalProperties")
		}
		if ns == nil {
			ns = n.get("additionalProperties")
		}
		d.compare(os, ns, at.child("patternProperties").child(p), depth+1)
	}
}

// compareSub recurses into a single-subschema keyword where absent means
// true (propertyNames).
func (d *schemaDiff) compareSub(o, n *value, at *ptr, depth int, kw string) {
	if o.get(kw) != nil || n.get(kw) != nil {
		d.compare(o.get(kw), n.get(kw), at.child(kw), depth+1)
	}
}

// compareItems handles prefixItems/items (draft 2020) and items as an
// array/additionalItems (draft 7): position i is governed by the prefix
// entry, or else by the rest schema.
func (d *schemaDiff) compareItems(o, n *value, at *ptr, depth int) {
	opre, orest, _, orestKW := arrayShape(o)
	npre, nrest, npreKW, nrestKW := arrayShape(n)
	if npreKW == "" {
		_, _, npreKW, _ = arrayShape(o)
	}
	for i := range max(len(opre), len(npre)) {
		oi, ni := orest, nrest
		if i < len(opre) {
			oi = opre[i]
		}
		if i < len(npre) {
			ni = npre[i]
		}
		d.compare(oi, ni, at.child(npreKW).index(i), depth+1)
	}
	if nrestKW == "" {
		nrestKW = orestKW
	}
	if orest != nil || nrest != nil {
		d.compare(orest, nrest, at.child(nrestKW), depth+1)
	}
	d.compareSub(o, n, at, depth, "unevaluatedItems")
	d.compareOptional(o, n, at, depth, "contains")
}

func arrayShape(s *value) (prefix []*value, rest *value, prefixKW, restKW string) {
	if p := s.get("prefixItems"); p.isArray() {
		return p.items, s.get("items"), "prefixItems", "items"
	}
	if it := s.get("items"); it.isArray() {
		return it.items, s.get("additionalItems"), "items", "additionalItems"
	}
	if s.get("items") != nil {
		return nil, s.get("items"), "", "items"
	}
	return nil, nil, "", ""
}

// oneSided reports a keyword value present on one side only, as the added
// or the removed rule, and says whether it did (false: both or neither).
func (d *schemaDiff) oneSided(added, removed schemaRule, where, at *ptr, os, ns *value, vars map[string]string) bool {
	switch {
	case os == nil && ns != nil:
		d.emit(added, where, at, nil, rawJSON(ns), vars)
	case ns == nil && os != nil:
		d.emit(removed, where, at, rawJSON(os), nil, vars)
	default:
		return false
	}
	return true
}

// compareOptional handles a keyword whose absence means no constraint at
// all (contains, not, if): added or removed is a constraint change; present
// on both sides it recurses.
func (d *schemaDiff) compareOptional(o, n *value, at *ptr, depth int, kw string) {
	os, ns := o.get(kw), n.get(kw)
	where := at.child(kw)
	if os != nil && ns != nil {
		d.compare(os, ns, where, depth+1)
		return
	}
	d.oneSided(schemaConstraintAdded, schemaConstraintRemoved, where, at, os, ns, map[string]string{"keyword": kw})
}

// compareDependencies handles dependentRequired, dependentSchemas and the
// draft-7 dependencies keyword (arrays are dependentRequired, schemas
// dependentSchemas).
func (d *schemaDiff) compareDependencies(o, n *value, at *ptr, depth int) {
	oreq, oschemas := dependencies(o)
	nreq, nschemas := dependencies(n)
	for _, k := range unionSorted(mapKeys(oreq), mapKeys(nreq)) {
		where := at.child("dependentRequired").child(k)
		param := at.child("properties").child(k)
		for _, name := range without(oreq[k], nreq[k]) {
			d.emit(schemaDependentRequiredRemoved, where, param, jsonString(name), nil, nil)
		}
		for _, name := range without(nreq[k], oreq[k]) {
			d.emit(schemaDependentRequiredAdded, where, param, nil, jsonString(name), nil)
		}
	}
	for _, k := range unionSorted(mapKeys(oschemas), mapKeys(nschemas)) {
		os, ns := oschemas[k], nschemas[k]
		where := at.child("dependentSchemas").child(k)
		if !d.oneSided(schemaConstraintAdded, schemaConstraintRemoved, where, where, os, ns, map[string]string{"keyword": "dependentSchemas"}) {
			d.compare(os, ns, where, depth+1)
		}
	}
}

func dependencies(s *value) (map[string][]string, map[string]*value) {
	req, schemas := map[string][]string{}, map[string]*value{}
	read := func(v *value, asSchemas bool) {
		if !v.isObject() {
			return
		}
		for i, k := range v.names {
			m := v.members[i]
			if m.isArray() && !asSchemas {
				for _, it := range m.items {
					if it.isString() {
						req[k] = append(req[k], it.text)
					}
				}
			} else if m.isObject() || m.isBool() {
				schemas[k] = m
			}
		}
	}
	read(s.get("dependencies"), false)
	read(s.get("dependentRequired"), false)
	read(s.get("dependentSchemas"), true)
	return req, schemas
}

// compareComposition handles allOf/anyOf/oneOf (branches matched by
// fingerprint, then in order), not and if/then/else.
func (d *schemaDiff) compareComposition(o, n *value, at *ptr, depth int) {
	for _, kw := range [...]string{"allOf", "anyOf", "oneOf"} {
		d.compareBranches(o, n, at, depth, kw)
	}
	d.compareCondition(o, n, at, "not")
	d.compareCondition(o, n, at, "if")
	if o.get("if") != nil || n.get("if") != nil {
		d.compareSub(o, n, at, depth, "then")
		d.compareSub(o, n, at, depth, "else")
	}
}

func (d *schemaDiff) compareBranches(o, n *value, at *ptr, depth int, kw string) {
	ol, nl := o.get(kw), n.get(kw)
	if kw != "allOf" {
		_, of := foldedTypes(d.old, ol)
		_, nf := foldedTypes(d.new, nl)
		if (of || ol == nil) && (nf || nl == nil) {
			return // type-only unions are compared as types
		}
	}
	where := at.child(kw)
	vars := map[string]string{"keyword": kw}
	switch {
	case !ol.isArray() && !nl.isArray():
		return
	case !ol.isArray():
		d.emit(schemaConstraintAdded, where, at, nil, rawJSON(nl), vars)
		return
	case !nl.isArray():
		d.emit(schemaConstraintRemoved, where, at, rawJSON(ol), nil, vars)
		return
	}
	pairs, removed, added := d.matchBranches(ol.items, nl.items)
	for _, p := range pairs {
		d.compare(ol.items[p[0]], nl.items[p[1]], where.index(p[1]), depth+1)
	}
	removedRule, addedRule := schemaConstraintRemoved, schemaConstraintAdded
	switch kw {
	case "anyOf":
		removedRule, addedRule = schemaAnyOfBranchRemoved, schemaAnyOfBranchAdded
	case "oneOf":
		removedRule, addedRule = schemaOneOfBranchRemoved, schemaOneOfBranchAdded
	}
	for _, i := range removed {
		d.emit(removedRule, where.index(i), at, schemaJSON(ol.items[i]), nil, vars)
	}
	for _, j := range added {
		d.emit(addedRule, where.index(j), at, nil, schemaJSON(nl.items[j]), vars)
	}
}

// matchBranches pairs old and new branches: equal fingerprints first (a
// reorder is no change), then the rest in order; what is left over was
// removed or added.
func (d *schemaDiff) matchBranches(ob, nb []*value) (pairs [][2]int, removed, added []int) {
	usedNew := make([]bool, len(nb))
	nfp := make([]fingerprint, len(nb))
	for j, b := range nb {
		nfp[j] = d.new.fingerprint(b)
	}
	var restOld []int
	for i, b := range ob {
		fp := d.old.fingerprint(b)
		j := slices.IndexFunc(nfp, func(f fingerprint) bool { return f == fp })
		for j >= 0 && usedNew[j] {
			k := slices.IndexFunc(nfp[j+1:], func(f fingerprint) bool { return f == fp })
			if k < 0 {
				j = -1
				break
			}
			j += 1 + k
		}
		if j >= 0 {
			usedNew[j] = true
			pairs = append(pairs, [2]int{i, j})
			continue
		}
		restOld = append(restOld, i)
	}
	var restNew []int
	for j := range nb {
		if !usedNew[j] {
			restNew = append(restNew, j)
		}
	}
	k := min(len(restOld), len(restNew))
	for x := range k {
		pairs = append(pairs, [2]int{restOld[x], restNew[x]})
	}
	return pairs, restOld[k:], restNew[k:]
}

// compareCondition handles not and if: which way a change inside them moves
// acceptance is not decidable in general, so a semantic change is a warning.
func (d *schemaDiff) compareCondition(o, n *value, at *ptr, kw string) {
	os, ns := o.get(kw), n.get(kw)
	where := at.child(kw)
	vars := map[string]string{"keyword": kw}
	switch {
	case os == nil && ns == nil:
	case os == nil:
		if kw == "if" && n.get("then") == nil && n.get("else") == nil {
			return // an if without then/else constrains nothing
		}
		d.emit(schemaConstraintAdded, where, at, nil, rawJSON(ns), vars)
	case ns == nil:
		if kw == "if" && o.get("then") == nil && o.get("else") == nil {
			return
		}
		d.emit(schemaConstraintRemoved, where, at, rawJSON(os), nil, vars)
	case d.old.fingerprint(os) != d.new.fingerprint(ns):
		d.emit(schemaConstraintChanged, where, at, rawJSON(os), rawJSON(ns), vars)
	}
}

// knownKeywords are handled by the walk; anything else is compared as an
// unknown keyword.
var knownKeywords = map[string]bool{
	"type": true, "nullable": true, "enum": true, "const": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minLength": true, "maxLength": true, "pattern": true, "format": true,
	"minItems": true, "maxItems": true, "minContains": true, "maxContains": true, "uniqueItems": true,
	"items": true, "prefixItems": true, "additionalItems": true, "unevaluatedItems": true, "contains": true,
	"minProperties": true, "maxProperties": true, "properties": true, "required": true,
	"additionalProperties": true, "unevaluatedProperties": true, "patternProperties": true, "propertyNames": true,
	"dependencies": true, "dependentRequired": true, "dependentSchemas": true,
	"allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true,
	"$defs": true, "definitions": true, "$ref": true, "$recursiveRef": true, "$dynamicRef": true,
	"default": true, "description": true,
}

// compareAnnotations reports default, description, annotation keywords,
// unresolvable $refs and unknown keywords.
func (d *schemaDiff) compareAnnotations(o, n *value, at *ptr) {
	if od, nd := o.get("default"), n.get("default"); !equalValues(od, nd) {
		d.emit(schemaDefaultChanged, at.child("default"), at, rawJSON(od), rawJSON(nd), nil)
	}
	d.compareDescription(o, n, at)
	for _, kw := range refKeywords {
		// After deref only unresolvable references are left.
		if or, nr := o.get(kw), n.get(kw); !equalValues(or, nr) {
			d.emit(schemaRefChanged, at.child(kw), at, rawJSON(or), rawJSON(nr), map[string]string{"before": displayValue(rawJSON(or)), "after": displayValue(rawJSON(nr))})
		}
	}
	for _, kw := range unionSorted(objectNames(o), objectNames(n)) {
		if knownKeywords[kw] || kw == "description" {
			continue
		}
		ov, nv := o.get(kw), n.get(kw)
		if equalValues(ov, nv) {
			continue
		}
		rule := schemaKeywordChanged
		if slices.Contains(annotationKeywords, kw) {
			rule = schemaAnnotationChanged
		}
		d.emit(rule, at.child(kw), at, rawJSON(ov), rawJSON(nv), map[string]string{"keyword": SanitizeText(kw)})
	}
}

func (d *schemaDiff) compareDescription(o, n *value, at *ptr) {
	ov, nv := o.get("description"), n.get("description")
	if equalValues(ov, nv) {
		return
	}
	os, _ := o.str("description")
	ns, _ := n.str("description")
	hits := NewHits(ScanText(os, d.sink.scanOpts), ScanText(ns, d.sink.scanOpts))
	where := at.child("description")
	if len(hits) > 0 {
		d.emit(schemaDescriptionSuspicious, where, at, rawJSON(ov), rawJSON(nv), map[string]string{"hits": FormatHits(hits)})
		return
	}
	d.emit(schemaDescriptionChanged, where, at, rawJSON(ov), rawJSON(nv), nil)
}

// scanAdded reports suspicious descriptions inside a newly added subschema.
func (d *schemaDiff) scanAdded(s *value, at *ptr) {
	walkDescriptions(d.new, s, at, func(text string, where *ptr) {
		if hits := ScanText(text, d.sink.scanOpts); len(hits) > 0 {
			d.emit(schemaDescriptionSuspicious, where.child("description"), where, nil, jsonString(text), map[string]string{"hits": FormatHits(hits)})
		}
	})
}

// walkDescriptions calls fn for every description in a schema (through
// local $refs, each node once).
func walkDescriptions(doc *schemaDoc, s *value, at *ptr, fn func(text string, where *ptr)) {
	seen := map[*value]bool{}
	var walk func(v *value, at *ptr, depth int)
	walk = func(v *value, at *ptr, depth int) {
		v = doc.deref(v)
		if !v.isObject() || seen[v] || depth > maxSchemaDepth {
			return
		}
		seen[v] = true
		if text, ok := v.str("description"); ok {
			fn(text, at)
		}
		for i, kw := range v.names {
			m := v.members[i]
			switch {
			case slices.Contains(schemaMapKeywords, kw) && m.isObject():
				for j, name := range m.names {
					walk(m.members[j], at.child(kw).child(name), depth+1)
				}
			case (slices.Contains(schemaListKeywords, kw) || kw == "items") && m.isArray():
				for j, it := range m.items {
					walk(it, at.child(kw).index(j), depth+1)
				}
			case slices.Contains(singleSchemaKeywords, kw):
				walk(m, at.child(kw), depth+1)
			}
		}
	}
	walk(s, at, 0)
}

// schemaSize counts the values in a tree, to size the walk's budget.
func schemaSize(v *value) int {
	if v == nil {
		return 0
	}
	n := 1
	for _, it := range v.items {
		n += schemaSize(it)
	}
	for _, m := range v.members {
		n += schemaSize(m)
	}
	return n
}
