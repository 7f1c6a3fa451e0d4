package witness

import "slices"

// Keywords that apply at one known location are left out of a pruned
// schema while no candidate needs them. A schema the root reaches through
// properties alone (no reference points at it or above it, the document
// defines no $id or anchor) applies at one instance location, which its
// path names, and nowhere else. There:
//   - additionalProperties judges only members its object's properties
//     (and patternProperties: then it stays) do not declare;
//   - "type": "object" judges only a value that is not an object;
//   - required judges only an object that lacks a name it lists.
//
// The pruning leaves them out and records them (leftOut); before a
// candidate is validated, the search checks it against the records and,
// if the keyword would judge it, compiles the schema again with the
// keyword kept. The verdict and the reasons on every candidate validated
// are the whole schema's. The nodes on a change's path keep theirs from
// the start (pair.seed), so that the candidates aimed at them do not cost
// a compilation more.

// leftOut is a keyword left out: which, on which schema (its pointer and
// node) and at which instance location the schema applies.
type leftOut struct {
	kw       string
	ptr      string
	at       []step
	d        *doc
	n        node
	required []string // for required, its names
}

// kept names a keyword of a schema (by its pointer) that must stay.
type kept struct{ ptr, kw string }

func (o leftOut) key() kept { return kept{o.ptr, o.kw} }

// meets reports whether the keyword would judge x.
func (o leftOut) meets(x any) bool {
	v, present := lookup(x, o.at)
	obj, isObject := v.(map[string]any)
	switch {
	case !present:
		return false
	case o.kw == "type":
		return !isObject
	case !isObject:
		return false
	case o.kw == "required":
		for _, name := range o.required {
			if _, has := obj[name]; !has {
				return true
			}
		}
		return false
	}
	props := o.d.get(o.n, "properties")
	for name := range obj {
		if !o.d.get(props, name).present {
			return true
		}
	}
	return false
}

// lookup is valueAt that tells an absent member from a null one.
func lookup(x any, at []step) (any, bool) {
	for _, s := range at {
		obj, ok := x.(map[string]any)
		if !ok {
			return nil, false
		}
		if x, ok = obj[s.name]; !ok {
			return nil, false
		}
	}
	return x, true
}

// leftOutKeywords are the keywords leavesOut may leave out.
var leftOutKeywords = []string{"additionalProperties", "type", "required"}

// leavesOut reports whether member m of the schema n at pl is left out
// (and records it); at is m's pointer (untracked unless a reference
// points into it).
func (p *pruner) leavesOut(n node, m member, pl *place, at string) bool {
	d := p.d
	if pl == nil || at != untracked || !slices.Contains(leftOutKeywords, m.name) || p.keep[kept{pl.ptr, m.name}] {
		return false
	}
	switch m.name {
	case "type":
		if string(d.bytes(m.value)) != `"object"` {
			return false
		}
	case "required":
		if !d.isArray(m.value) || len(d.strings(m.value)) != len(d.items(m.value)) {
			return false
		}
	case "additionalProperties":
		if d.get(n, "patternProperties").present || twice(d, n, "properties") {
			return false
		}
	}
	// A keyword given twice: the validator takes the last, get the first.
	if twice(d, n, m.name) {
		return false
	}
	o := leftOut{kw: m.name, ptr: pl.ptr, at: pl.at, d: d, n: n}
	if m.name == "required" {
		o.required = d.strings(m.value)
	}
	*p.open = append(*p.open, o)
	return true
}

func twice(d *doc, n node, name string) bool {
	count := 0
	for _, m := range d.objectMembers(n) {
		if m.name == name {
			count++
		}
	}
	return count > 1
}

// place is where a schema the root reaches through properties alone sits
// (its pointer) and applies (its instance location).
type place struct {
	ptr string
	at  []step
}

// entry is the place of the properties entry name of a schema at pl;
// nil when a reference points at that entry (it then applies elsewhere
// too).
func (p *pruner) entry(pl *place, name string) *place {
	if pl == nil {
		return nil
	}
	ptr := pl.ptr + "/properties/" + escape(name)
	for _, r := range p.refs {
		if r == ptr || r == pl.ptr+"/properties" {
			return nil
		}
	}
	return &place{ptr: ptr, at: append(slices.Clip(pl.at), step{name: name})}
}

// onPath are the pointers of the deepest schema a path (the segments of a
// change's pointer below the schema root) reaches through properties
// alone, and of its parent: the schemas whose keywords the candidates
// aimed at the change exercise.
func onPath(segs []string) []string {
	ptrs := []string{""}
	for i := 0; i+1 < len(segs) && segs[i] == "properties"; i += 2 {
		ptrs = append(ptrs, ptrs[len(ptrs)-1]+"/properties/"+escape(segs[i+1]))
	}
	return ptrs[max(0, len(ptrs)-2):]
}
