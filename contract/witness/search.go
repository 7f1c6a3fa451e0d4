package witness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpdrift/mcpdrift/contract/internal/jsontype"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// pair is the search state of one (accepting, rejecting) pair of schema
// documents: the names its pruned schemas cover, the compiled schemas,
// the bases, and the results per change path. The three changes of one
// tool share it, and so do tools with identical schemas (documents are
// cached by their text).
type pair struct {
	a, b   *doc
	names  map[string]bool
	seeded map[string]bool // the paths seeded, joined
	as, bs *jsonschema.Schema
	// open are the keywords that as and bs left out, keep (by side) those
	// that must stay (leftout.go).
	open [2][]leftOut
	keep [2]map[kept]bool
	// compiledFor is how many names and kept schemas as and bs were
	// compiled for.
	compiledFor int
	bases       []any
	baseOK      []bool
	results     map[string]result
}

type result struct {
	value        json.RawMessage
	reason, none string
}

type pairKey struct{ a, b *doc }

// Bounds of the per-pair state.
const (
	maxPairs   = 256
	maxResults = 256
)

func (g *Generator) pair(a, b *doc) *pair {
	k := pairKey{a, b}
	if p, ok := g.pairs[k]; ok {
		return p
	}
	if len(g.pairs) >= maxPairs {
		clear(g.pairs)
	}
	p := &pair{a: a, b: b, names: map[string]bool{}, seeded: map[string]bool{}, keep: [2]map[kept]bool{{}, {}}, results: map[string]result{}}
	g.pairs[k] = p
	return p
}

// search finds a value schema a accepts and schema b rejects, aimed at the
// part of the schema that segs (the change's path below the schema root,
// whole in key) names. It returns the value and b's reason, or nil and why not.
// Candidates come lazily, most telling first; the first one b rejects at
// the target is the witness (else the first one b rejects anywhere).
func (g *Generator) search(ad, bd *doc, key string, segs []string) (json.RawMessage, string, string) {
	if ad == nil || bd == nil {
		return nil, "", "the schema is not a JSON object or boolean"
	}
	p := g.pair(ad, bd)
	if r, ok := p.results[key]; ok {
		return r.value, r.reason, r.none
	}
	v, reason, none := g.find(p, key, segs)
	if len(p.results) < maxResults {
		p.results[key] = result{v, reason, none}
	}
	return v, reason, none
}

func (g *Generator) find(p *pair, key string, segs []string) (json.RawMessage, string, string) {
	ge := &gen{}
	// Names the candidates are likely to have (the bases', the path's) are
	// compiled for at once, so that the changes of one tool share one
	// compilation of each version (Report seeds the paths of all of them).
	p.seed(key, segs)
	if base, ok := p.base(ge, 0); ok {
		newNames(base, p.names)
	}
	var first any
	var firstReason string
	tried := 0
	for cand, target := range ge.candidates(p, segs) {
		if tried++; tried > maxCandidates {
			break
		}
		if err := g.ready(p, cand); err != nil {
			return nil, "", "the schema does not compile: " + compileError(err)
		}
		if !validate(p.as, cand).valid {
			continue
		}
		vb := validate(p.bs, cand)
		if vb.valid {
			continue
		}
		reason, onTarget := vb.reason(target)
		if onTarget {
			return appendJSON(nil, cand), reason, ""
		}
		if first == nil {
			first, firstReason = cand, reason
		}
	}
	if first != nil {
		return appendJSON(nil, first), firstReason, ""
	}
	if tried == 0 {
		return nil, "", "no value could be built that the accepting version allows (its bounds, patterns or required members conflict, or exceed the generator's limits)"
	}
	return nil, "", "no value found that one version accepts and the other rejects; for this change the two versions may accept the same values"
}

// ready compiles the pair's pruned schemas for a candidate. Names and kept
// keywords only grow: the schemas are compiled again whenever the
// candidate (or a seed) brings a member name they left out, or a value
// that a keyword they left out would judge.
func (g *Generator) ready(p *pair, cand any) error {
	newNames(cand, p.names)
	for p.as == nil || p.compiledFor != p.size() || p.meets(cand) {
		p.compiledFor = p.size()
		var err error
		p.open = [2][]leftOut{}
		if p.as, err = g.compile(p.a, p.names, p.keep[0], &p.open[0]); err != nil {
			return err
		}
		if p.bs, err = g.compile(p.b, p.names, p.keep[1], &p.open[1]); err != nil {
			p.as = nil
			return err
		}
	}
	return nil
}

func (p *pair) size() int { return len(p.names) + len(p.keep[0]) + len(p.keep[1]) }

// meets keeps the keywords left out that would judge x, and reports
// whether there was one.
func (p *pair) meets(x any) bool {
	found := false
	for side, open := range p.open {
		for _, o := range open {
			if o.meets(x) {
				p.keep[side][o.key()], found = true, true
			}
		}
	}
	return found
}

// seed adds the member names a change's path (segs; key is the whole
// pointer) steps through, and keeps the keywords of the schemas it ends
// at, once per path.
func (p *pair) seed(key string, segs []string) {
	if p.seeded[key] {
		return
	}
	p.seeded[key] = true
	for i := 0; i+1 < len(segs); i++ {
		if segs[i] == "properties" || segs[i] == "dependentSchemas" {
			p.names[segs[i+1]] = true
		}
	}
	for _, ptr := range onPath(segs) {
		for _, kw := range leftOutKeywords {
			p.keep[0][kept{ptr, kw}], p.keep[1][kept{ptr, kw}] = true, true
		}
	}
}

// base returns base i of a pair, computed once: 0 is the smallest value
// both versions accept, 1 the smallest the accepting one accepts (when it
// differs); ok is false when there is no such base.
func (p *pair) base(ge *gen, i int) (any, bool) {
	for len(p.bases) <= i && len(p.bases) < 2 {
		root := viewOf(p.a, p.a.root())
		if len(p.bases) == 1 {
			x, ok := ge.minimal(root, 0)
			if ok && p.bases[0] != nil && equal(p.bases[0], x) {
				ok = false
			}
			p.bases, p.baseOK = append(p.bases, x), append(p.baseOK, ok)
			continue
		}
		x, ok := ge.minimal(root.and(viewOf(p.b, p.b.root())), 0)
		p.bases, p.baseOK = append(p.bases, x), append(p.baseOK, ok)
	}
	return p.bases[i], p.baseOK[i]
}

// newNames adds the member names of x to names and reports whether any
// was new (then the pruned schemas must be compiled again).
func newNames(x any, names map[string]bool) bool {
	added := false
	var walk func(x any)
	walk = func(x any) {
		switch v := x.(type) {
		case map[string]any:
			for k, m := range v {
				if !names[k] {
					names[k], added = true, true
				}
				walk(m)
			}
		case []any:
			for _, m := range v {
				walk(m)
			}
		}
	}
	walk(x)
	return added
}

// candidates yields the values to validate, each with the instance
// location it aims at. Two bases are tried: the smallest value both
// versions accept (so that the only difference is at the target), then
// the smallest the accepting version accepts.
func (ge *gen) candidates(p *pair, segs []string) iter.Seq2[any, []string] {
	return func(yield func(any, []string) bool) {
		aRoot, bRoot := viewOf(p.a, p.a.root()), viewOf(p.b, p.b.root())
		seen := map[string]bool{}
		emit := func(x any, loc []step) bool {
			if valueLooksSecret(x) {
				return true
			}
			key := string(appendJSON(nil, x))
			if seen[key] {
				return true
			}
			seen[key] = true
			at := make([]string, len(loc))
			for i, s := range loc {
				at[i] = s.String()
			}
			return yield(x, at)
		}
		for i := range 2 {
			base, ok := p.base(ge, i)
			if !ok {
				continue
			}
			c := &cursor{root: clone(base), a: aRoot, b: bRoot}
			if !ge.locate(c, segs) {
				continue
			}
			at := slices.Clone(c.loc)
			// Leaving an optional member out: first when b requires it and
			// a does not (the likely witness), else after the variants.
			// Candidates copy only the containers on the way to what they
			// change.
			leaveOut := func() bool {
				n := len(at)
				if n == 0 || at[n-1].isIdx {
					return true
				}
				o := copyPath(c.root, at[:n-1])
				if p, ok := valueAt(o, at[:n-1]).(map[string]any); ok {
					delete(p, at[n-1].name)
					return emit(o, at[:n-1])
				}
				return true
			}
			first := len(at) > 0 && !at[len(at)-1].isIdx && requires(c.pb, at[len(at)-1].name) && !requires(c.pa, at[len(at)-1].name)
			if first && !leaveOut() {
				return
			}
			for v := range ge.variants(c.a, c.b, len(at)) {
				if !emit(withValue(copyPath(c.root, at), at, v), at) {
					return
				}
			}
			if !first && !leaveOut() {
				return
			}
			if !emit(c.root, at) {
				return
			}
		}
	}
}

// requires reports whether a view lists name under required.
func requires(v view, name string) bool { return slices.Contains(v.strs("required"), name) }

// doc returns the parsed view of a schema document, cached by its text
// (raw is a whole JSON value as jsonwire.SkipValue delimits it).
func (g *Generator) doc(raw []byte) *doc {
	for _, d := range g.docs[string(raw[:min(len(raw), docKeyLen)])] {
		if bytes.Equal(d.raw, raw) {
			return d
		}
	}
	d := newDoc(raw)
	if d == nil {
		return nil
	}
	if r := d.root(); !d.isObject(r) && string(d.bytes(r)) != "true" && string(d.bytes(r)) != "false" {
		return nil
	}
	if g.ndocs >= maxCachedDocs {
		clear(g.docs)
		g.ndocs = 0
	}
	k := string(raw[:min(len(raw), docKeyLen)])
	g.docs[k] = append(g.docs[k], d)
	g.ndocs++
	return d
}

// docKeyLen is how many leading bytes of a document's text file it in
// the cache.
const docKeyLen = 64

// known returns the cached object document whose text b starts with. An
// object's text ends at its closing brace, so b's value is that document:
// a schema read before is recognized without scanning it.
func (g *Generator) known(b []byte) *doc {
	if len(b) < docKeyLen {
		return nil
	}
	for _, d := range g.docs[string(b[:docKeyLen])] {
		if d.raw[0] == '{' && bytes.HasPrefix(b, d.raw) {
			return d
		}
	}
	return nil
}

// compile compiles the document pruned for the given member names, cached
// by the pruned text (tools often share shapes once pruned); with open not
// nil, additionalProperties are left out where they can be (but under the
// pointers in keep) and listed in *open.
func (g *Generator) compile(d *doc, names map[string]bool, keep map[kept]bool, open *[]leftOut) (*jsonschema.Schema, error) {
	sch, err := g.compileText(d.prune(names, keep, open))
	if err != nil && open != nil {
		// Say where the schema is wrong as it is written: pruned without
		// moving or leaving out keywords.
		if _, plain := g.compileText(d.prune(names, nil, nil)); plain != nil {
			err = plain
		}
	}
	return sch, err
}

// compileText compiles a pruned schema, cached by its text.
func (g *Generator) compileText(pruned []byte) (*jsonschema.Schema, error) {
	if c, ok := g.compiled[string(pruned)]; ok {
		return c.sch, c.err
	}
	sch, err := Compile(pruned, "urn:mcpdrift:witness", CompileOptions{AssertFormat: true})
	if len(g.compiled) >= maxCachedCompiled {
		clear(g.compiled)
	}
	g.compiled[string(pruned)] = compiled{sch, err}
	return sch, err
}

// Call returns the smallest arguments object a tool definition's
// inputSchema accepts, validated (a tool without inputSchema takes {}).
// Replay sends it to tools whose changes have no witness of their own.
func (g *Generator) Call(tool json.RawMessage) (json.RawMessage, error) {
	schema := jsonwire.Lookup(tool, "inputSchema")
	if schema == nil {
		return json.RawMessage(`{}`), nil
	}
	if len(schema) > maxSchemaBytes {
		return nil, errors.New("the inputSchema is too large")
	}
	d := g.doc(schema)
	if d == nil {
		return nil, errors.New("the inputSchema is not a JSON object")
	}
	ge := &gen{}
	v := viewOf(d, d.root())
	x, ok := ge.ofType(v, jsontype.Object, 0)
	if !ok || valueLooksSecret(x) {
		return nil, errors.New("no arguments object could be built that the inputSchema accepts")
	}
	names := map[string]bool{}
	newNames(x, names)
	sch, err := g.compile(d, names, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("the inputSchema does not compile: %w", err)
	}
	if vd := validate(sch, x); !vd.valid {
		reason, _ := vd.reason(nil)
		return nil, fmt.Errorf("the smallest arguments object found is not valid: %s", reason)
	}
	return appendJSON(nil, x), nil
}

// Accepts reports whether a tool definition's inputSchema accepts an
// arguments object, and if not the validator's reason (a tool without
// inputSchema accepts anything).
func (g *Generator) Accepts(tool, arguments json.RawMessage) (bool, string, error) {
	schema := jsonwire.Lookup(tool, "inputSchema")
	if schema == nil {
		return true, "", nil
	}
	d := g.doc(schema)
	if d == nil || len(schema) > maxSchemaBytes {
		return false, "", errors.New("the inputSchema is not a JSON object or is too large")
	}
	x, err := jsonschema.UnmarshalJSON(bytes.NewReader(arguments))
	if err != nil {
		return false, "", fmt.Errorf("the arguments are not JSON: %w", err)
	}
	names := map[string]bool{}
	newNames(x, names)
	sch, err := g.compile(d, names, nil, nil)
	if err != nil {
		return false, "", fmt.Errorf("the inputSchema does not compile: %s", compileError(err))
	}
	v := validate(sch, x)
	if v.valid {
		return true, "", nil
	}
	reason, _ := v.reason(nil)
	return false, reason, nil
}
