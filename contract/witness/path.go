package witness

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract/internal/jsontype"
)

// A change's path is a JSON pointer into the schema as if every local $ref
// were inlined (/inputSchema/properties/filters/properties/since/maximum).
// locate follows it through the schema version that accepts the witness
// (a) and the one that should reject it (b) at the same time, building the
// instance along the way: a member for each properties step, an element
// for each items step, a value that takes the branch for each anyOf/oneOf
// step. Where the path ends in a keyword (maximum, required, enum), or
// reaches a part only b has, the value there is the target the variants
// aim at.

// step is one step into an instance: a member name or an array index.
type step struct {
	name  string
	index int
	isIdx bool
}

func (s step) String() string {
	if s.isIdx {
		return strconv.Itoa(s.index)
	}
	return s.name
}

// cursor is a position in an instance under construction.
type cursor struct {
	root any
	loc  []step
	a, b view
	// pa and pb are the views of the object the last member step left.
	pa, pb view
}

func (c *cursor) get() any { return valueAt(c.root, c.loc) }

func (c *cursor) set(x any) { c.root = withValue(c.root, c.loc, x) }

func valueAt(x any, loc []step) any {
	for _, s := range loc {
		switch v := x.(type) {
		case map[string]any:
			x = v[s.name]
		case []any:
			if s.index >= len(v) {
				return nil
			}
			x = v[s.index]
		default:
			return nil
		}
	}
	return x
}

// withValue sets the value at loc; containers on the way exist (locate
// creates them before stepping in).
func withValue(root any, loc []step, x any) any {
	if len(loc) == 0 {
		return x
	}
	switch v := root.(type) {
	case map[string]any:
		v[loc[0].name] = withValue(v[loc[0].name], loc[1:], x)
		return v
	case []any:
		if loc[0].index < len(v) {
			v[loc[0].index] = withValue(v[loc[0].index], loc[1:], x)
		}
		return v
	}
	return root
}

// copyPath returns x with the containers on the way to loc copied and the
// rest shared, so that withValue or a delete at loc leaves x as it was.
func copyPath(x any, loc []step) any {
	switch v := x.(type) {
	case map[string]any:
		out := maps.Clone(v)
		if len(loc) > 0 {
			if m, ok := v[loc[0].name]; ok {
				out[loc[0].name] = copyPath(m, loc[1:])
			}
		}
		return out
	case []any:
		out := slices.Clone(v)
		if len(loc) > 0 && loc[0].index < len(v) {
			out[loc[0].index] = copyPath(v[loc[0].index], loc[1:])
		}
		return out
	}
	return x
}

// splitPointer splits a JSON pointer into unescaped segments.
func splitPointer(p string) []string {
	if p == "" {
		return nil
	}
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return segs
}

// locate walks segs (the path below the schema root) from c, moving c to
// the target. It returns false when the instance cannot be built.
func (g *gen) locate(c *cursor, segs []string) bool {
	for i := 0; i < len(segs); {
		seg := segs[i]
		next := ""
		if i+1 < len(segs) {
			next = segs[i+1]
		}
		switch seg {
		case "properties":
			// A member a does not declare is still stepped into when a
			// lets the object have it (an open model): b may constrain it.
			if next == "" || !g.declares(c.a, next) && !(g.declares(c.b, next) && c.a.allows(next)) {
				return true // a member a refuses: the object is the target
			}
			if !g.stepMember(c, next) {
				return false
			}
			i += 2
		case "patternProperties":
			name, ok := memberMatching(c.a, next)
			if !ok || !g.stepMember(c, name) {
				return false
			}
			i += 2
		case "additionalProperties", "unevaluatedProperties":
			if next == "" {
				return true // closed or opened: the object is the target
			}
			name := freshName(c.a)
			if name == "" || !g.stepMember(c, name) {
				return false
			}
			i++
		case "items", "prefixItems":
			idx, err := strconv.Atoi(next)
			if err == nil && (seg == "prefixItems" || c.a.prefixLen() > idx) {
				i += 2
			} else {
				idx = c.a.prefixLen()
				i++
			}
			if !g.stepItem(c, idx) {
				return false
			}
		case "additionalItems":
			if !g.stepItem(c, c.a.prefixLen()) {
				return false
			}
			i++
		case "anyOf", "oneOf", "allOf":
			idx, err := strconv.Atoi(next)
			if err != nil {
				return true
			}
			list := c.a.get(seg)
			brs := list.d.items(list.n)
			if idx >= len(brs) {
				return true // a branch only b has
			}
			if seg != "allOf" {
				c.a = c.a.and(viewOf(list.d, brs[idx]))
				c.a.resolved = append(c.a.resolved, list)
				// b's branch at the same index guides what follows (the
				// validator still judges b's whole list).
				if bl := c.b.get(seg); bl.n.present {
					if bbrs := bl.d.items(bl.n); idx < len(bbrs) {
						c.b = c.b.and(viewOf(bl.d, bbrs[idx]))
						c.b.resolved = append(c.b.resolved, bl)
					}
				}
				if !g.fill(c) {
					return false
				}
			}
			i += 2
		case "then", "else":
			cond, branch := c.a.get("if"), c.a.get(seg)
			if !branch.n.present {
				return true
			}
			if seg == "then" {
				c.a = c.a.and(sub(cond))
				if bc := c.b.get("if"); bc.n.present {
					c.b = c.b.and(sub(bc))
				}
			}
			c.a = c.a.and(sub(branch))
			if bb := c.b.get(seg); bb.n.present {
				c.b = c.b.and(sub(bb))
			}
			if !g.fill(c) {
				return false
			}
			i++
		case "dependentSchemas":
			ds := c.a.get("dependentSchemas")
			entry := ds.d.get(ds.n, next)
			if next == "" || !entry.present {
				return true
			}
			obj, ok := g.objectAt(c)
			if !ok {
				return false
			}
			if _, has := obj[next]; !has {
				x, ok := g.minimal(c.a.member(next), len(c.loc)+1)
				if !ok {
					return false
				}
				obj[next] = x
			}
			c.a = c.a.and(viewOf(ds.d, entry))
			if bs := c.b.get("dependentSchemas"); bs.n.present {
				if be := bs.d.get(bs.n, next); be.present {
					c.b = c.b.and(viewOf(bs.d, be))
				}
			}
			i += 2
		default:
			// A keyword (type, enum, maximum, required, not, if, contains,
			// propertyNames, dependentRequired, $ref, ...): the value here
			// is the target.
			return true
		}
		if len(c.loc) > maxDepth {
			return false
		}
	}
	return true
}

// declares reports whether a view names a member (properties or required).
func (g *gen) declares(v view, name string) bool {
	for _, s := range v.all("properties") {
		if s.d.get(s.n, name).present {
			return true
		}
	}
	for _, r := range v.strs("required") {
		if r == name {
			return true
		}
	}
	return false
}

// objectAt returns the object at the cursor, making the value there one if
// it is not.
func (g *gen) objectAt(c *cursor) (map[string]any, bool) {
	if obj, ok := c.get().(map[string]any); ok {
		return obj, true
	}
	x, ok := g.ofType(c.a, jsontype.Object, len(c.loc))
	if !ok {
		return nil, false
	}
	obj := x.(map[string]any)
	c.set(obj)
	return obj, true
}

// stepMember moves into member name, creating it (and the object) as needed.
func (g *gen) stepMember(c *cursor, name string) bool {
	obj, ok := g.objectAt(c)
	if !ok {
		return false
	}
	a, b := c.a.member(name), c.b.member(name)
	if _, has := obj[name]; !has {
		x, ok := g.minimal(a.and(b), len(c.loc)+1)
		if !ok {
			if x, ok = g.minimal(a, len(c.loc)+1); !ok {
				return false
			}
		}
		obj[name] = x
	}
	c.loc = append(c.loc, step{name: name})
	c.pa, c.pb = c.a, c.b
	c.a, c.b = a, b
	return true
}

// stepItem moves into element idx, creating the array and the elements
// before it as needed.
func (g *gen) stepItem(c *cursor, idx int) bool {
	if idx >= maxItems {
		return false
	}
	arr, ok := c.get().([]any)
	if !ok {
		arr = []any{}
	}
	for len(arr) <= idx {
		a, b := c.a.item(len(arr)), c.b.item(len(arr))
		x, ok := g.minimal(a.and(b), len(c.loc)+1)
		if !ok {
			if x, ok = g.minimal(a, len(c.loc)+1); !ok {
				return false
			}
		}
		arr = append(arr, x)
	}
	c.set(arr)
	c.loc = append(c.loc, step{index: idx, isIdx: true})
	c.a, c.b = c.a.item(idx), c.b.item(idx)
	return true
}

// fill replaces the value at the cursor with one the (narrowed) view a
// accepts, preferring one b accepts too.
func (g *gen) fill(c *cursor) bool {
	x, ok := g.minimal(c.a.and(c.b), len(c.loc))
	if !ok {
		if x, ok = g.minimal(c.a, len(c.loc)); !ok {
			return false
		}
	}
	c.set(x)
	return true
}

// memberMatching makes a member name that a patternProperties key matches
// and properties does not declare.
func memberMatching(v view, pattern string) (string, bool) {
	re, err := compilePattern(pattern)
	if err != nil {
		return "", false
	}
	declared := v.propertyNames()
	for i := range 8 {
		name, ok := synthesize(pattern, i)
		if ok && name != "" && re.MatchString(name) && !slices.Contains(declared, name) && !looksLikeSecret(name) {
			return name, true
		}
	}
	return "", false
}

// freshName is a member name the view does not declare or match by a
// pattern, so additionalProperties governs it.
func freshName(v view) string {
	for _, name := range extraNames {
		if !slices.Contains(v.propertyNames(), name) && !matchesPattern(v, name) {
			return name
		}
	}
	return ""
}

func matchesPattern(v view, name string) bool {
	for _, s := range v.all("patternProperties") {
		for _, m := range s.d.objectMembers(s.n) {
			if re, err := compilePattern(m.name); err == nil && re.MatchString(name) {
				return true
			}
		}
	}
	return false
}
