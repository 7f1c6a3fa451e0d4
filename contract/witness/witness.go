// Package witness proves schema changes by example. For a change that
// contract.Diff classified, it finds a concrete tools/call arguments object
// (for an inputSchema change) or structuredContent result (for an
// outputSchema change) that the old schema accepts and the new one rejects
// (for a loosening, the reverse), validated by the JSON Schema library the
// interceptor's guard uses, with the validator's reason. For a removed or
// renamed tool, the witness is an old call to the old name.
//
// Generation is pure and deterministic (the same change gives the same
// witness), bounded (depth, size and candidate limits: a hostile schema
// gets "no witness", never a hang), and never produces a value that looks
// like a credential. It starts from the smallest value the old schema
// accepts (required members only) on the path of the change and varies the
// value there: the enum member that was removed, a number between the old
// and the new limit, a value of the type that was dropped, an object
// without the member now required or with the member now refused, a string
// matching the old pattern and not the new. Every candidate is validated
// under both versions; only a true witness is kept.
package witness

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// effect is how a schema rule moves acceptance.
type effect int

const (
	noEffect     effect = iota // text, annotations: nothing validates differently
	narrows                    // the new schema rejects values the old accepted
	widens                     // the new schema accepts values the old rejected
	either                     // could go both ways: narrowing tried first
	loosensFirst               // could go both ways: widening tried first
)

// effects maps schema rule suffixes (docs/rules.md, after "input." or
// "output.") to their effect. Whom a change hurts depends on the direction
// (input or output); which values it lets through does not.
var effects = map[string]effect{
	"property.added":                  loosensFirst, // accepts more when closed; narrows an open, typed member
	"property.added_required":         narrows,
	"property.added_required_default": narrows,
	"required.added":                  narrows,
	"required.added_default":          narrows,
	"required.removed":                widens,
	"property.removed_closed":         narrows,
	"property.removed_open":           loosensFirst,
	"property.removed_required":       loosensFirst,
	"property.removed_optional":       loosensFirst,
	"type.changed":                    either,
	"type.narrowed":                   narrows,
	"type.widened":                    widens,
	"enum.added":                      narrows,
	"enum.removed":                    widens,
	"enum.value_removed":              narrows,
	"enum.value_added":                widens,
	"limit.added":                     narrows,
	"limit.tightened":                 narrows,
	"limit.relaxed":                   widens,
	"limit.removed":                   widens,
	"pattern.added":                   narrows,
	"pattern.changed":                 either,
	"pattern.removed":                 widens,
	"format.added":                    narrows,
	"format.changed":                  either,
	"format.removed":                  widens,
	"additional_properties.closed":    narrows,
	"additional_properties.opened":    widens,
	"any_of.branch_removed":           narrows,
	"any_of.branch_added":             widens,
	"one_of.branch_removed":           narrows,
	"one_of.branch_added":             either,
	"constraint.added":                narrows,
	"constraint.removed":              widens,
	"constraint.changed":              either,
	"dependent_required.added":        narrows,
	"dependent_required.removed":      widens,
	"schema.rejects_all":              narrows,
	"schema.accepts":                  widens,
}

// Why there is no witness, by rule suffix.
var noneReasons = map[string]string{
	"description.changed":    "the change is to text a model reads, not to which values validate",
	"description.suspicious": "the change is to text a model reads, not to which values validate",
	"annotation.changed":     "the change is to an annotation, not to which values validate",
	"default.changed":        "a default does not change which values validate; a call that omits the parameter now gets the new default",
	"keyword.changed":        "the keyword is not one JSON Schema validates",
	"ref.changed":            "the schema refers to another document, which is not loaded",
	"schema.too_complex":     "the schemas were too complex to compare, so no witness was searched",
}

// Generator builds witnesses. It keeps compiled schemas between changes
// of one report (tools often share shapes); it is not safe for concurrent
// use. The zero value is not usable: call New.
type Generator struct {
	// docs are the documents read, by their first bytes (docKey).
	docs     map[string][]*doc
	ndocs    int
	compiled map[string]compiled
	pairs    map[pairKey]*pair
}

type compiled struct {
	sch *jsonschema.Schema
	err error
}

// Bounds of one Generator's caches.
const (
	maxCachedDocs     = 256
	maxCachedCompiled = 512
	// maxSchemaBytes bounds a schema the generator reads.
	maxSchemaBytes = 4 << 20
	// maxCandidates bounds the values validated for one change.
	maxCandidates = 48
	// maxPerReport bounds the changes of one report searched for a witness
	// (worst first), so a listing of thousands of changed tools costs a
	// bounded time.
	maxPerReport = 1000
)

// New returns a Generator.
func New() *Generator {
	return &Generator{docs: map[string][]*doc{}, compiled: map[string]compiled{}, pairs: map[pairKey]*pair{}}
}

// Report attaches a witness to every change of r that can carry one (see
// Applies), reading the definitions from old and new (the snapshots r was
// computed from). Changes that already carry one are left alone.
func Report(r *contract.Report, old, new *contract.Snapshot) {
	New().Report(r, old, new)
}

// Report is the package function Report with this generator's caches.
func (g *Generator) Report(r *contract.Report, old, new *contract.Snapshot) {
	if r == nil || old == nil || new == nil {
		return
	}
	renamedFrom := map[string]string{} // new name → old name
	for _, c := range r.Changes {
		if c.Rule == contract.RuleToolRenamed {
			if to, ok := canon.UnquoteKey(c.After); ok {
				renamedFrom[to] = c.Name
			}
		}
	}
	names := func(c contract.Change) (string, string) {
		switch {
		case c.Rule == contract.RuleToolRenamed:
			to, _ := canon.UnquoteKey(c.After)
			return c.Name, to
		case renamedFrom[c.Name] != "":
			return renamedFrom[c.Name], c.Name
		}
		return c.Name, c.Name
	}
	// Only the definitions the changes name are looked up.
	wantOld, wantNew := map[string]bool{}, map[string]bool{}
	for _, c := range r.Changes {
		if c.Witness == nil && Applies(c) {
			o, n := names(c)
			wantOld[o], wantNew[n] = true, true
		}
	}
	oldTools, newTools := g.tools(old.Tools, wantOld), g.tools(new.Tools, wantNew)
	// The paths of all the changes to one schema are seeded first, so that
	// its versions are compiled once for all of them. Changes of one shape
	// (the same path in several tools) split their path once.
	segs := make([][]string, len(r.Changes))
	split := map[string][]string{}
	seeded := map[seedKey]bool{}
	for i, c := range r.Changes {
		if c.Witness != nil || !Applies(c) {
			continue
		}
		s, ok := split[c.Path]
		if !ok {
			s = splitPointer(c.Path)
			split[c.Path] = s
		}
		segs[i] = s
		if searchable(c.Rule) {
			oldName, newName := names(c)
			g.seed(c, s, oldTools.get(oldName), newTools.get(newName), seeded)
		}
	}
	searched := 0
	for i := range r.Changes {
		c := &r.Changes[i]
		if c.Witness != nil || !Applies(*c) {
			continue
		}
		if searched++; searched > maxPerReport {
			c.Witness = &contract.Witness{None: "the report has more than " + strconv.Itoa(maxPerReport) + " changes witnesses are for; the first ones got theirs"}
			continue
		}
		oldName, newName := names(*c)
		c.Witness = g.change(*c, segs[i], oldTools.get(oldName), newTools.get(newName))
	}
}

// searchable reports whether a rule's changes are searched for a witness
// (the rest say why there is none without a search).
func searchable(rule contract.RuleID) bool {
	dir, suffix, _ := strings.Cut(string(rule), ".")
	_, ok := effects[suffix]
	return ok && (dir == "input" || dir == "output")
}

// seed adds a change's path (segs) to the names both searches of its
// schema pair (narrowing and widening) compile for, once per pair and path
// (done).
func (g *Generator) seed(c contract.Change, segs []string, oldTool, newTool *tool, done map[seedKey]bool) {
	dir, _, _ := strings.Cut(string(c.Rule), ".")
	member := dir + "Schema"
	if len(segs) == 0 || segs[0] != member {
		return
	}
	od, nd := oldTool.doc(g, member), newTool.doc(g, member)
	if od == nil || nd == nil {
		return
	}
	if k := (seedKey{od, nd, c.Path}); !done[k] {
		done[k] = true // the same change in another tool with these schemas: seeded
		g.pair(od, nd).seed(c.Path, segs[1:])
		g.pair(nd, od).seed(c.Path, segs[1:])
	}
}

type seedKey struct {
	old, new *doc
	path     string
}

// tool is a definition with its schemas looked up once.
type tool struct {
	raw           json.RawMessage
	input, output []byte
	// docs are the documents of input and output, once read.
	docs [2]*doc
	read [2]bool
}

// doc returns the document of a schema member (inputSchema, outputSchema)
// as the generator caches it; "{}" when absent, nil when too large or not
// JSON Schema.
func (t *tool) doc(g *Generator, member string) *doc {
	if t == nil {
		return g.doc([]byte("{}"))
	}
	i := 0
	if member != "inputSchema" {
		i = 1
	}
	if t.read[i] {
		return t.docs[i]
	}
	raw := t.schema(member)
	var d *doc
	switch {
	case raw == nil:
		d = g.doc([]byte("{}"))
	case len(raw) <= maxSchemaBytes:
		d = g.doc(raw)
	}
	t.docs[i], t.read[i] = d, true
	return d
}

// toolSet is the definitions of a listing that some changes name, each
// split when first asked for.
type toolSet struct {
	g     *Generator
	raw   map[string]json.RawMessage
	split map[string]*tool
}

func (g *Generator) tools(l contract.Listing, want map[string]bool) *toolSet {
	ts := &toolSet{g: g, raw: make(map[string]json.RawMessage, len(want)), split: map[string]*tool{}}
	for _, d := range l {
		if _, dup := ts.raw[d.Key]; !dup && want[d.Key] {
			ts.raw[d.Key] = d.Raw
		}
	}
	return ts
}

func (ts *toolSet) get(name string) *tool {
	if t, ok := ts.split[name]; ok {
		return t
	}
	raw, ok := ts.raw[name]
	if !ok {
		return nil
	}
	t := ts.g.splitTool(raw)
	ts.split[name] = t
	return t
}

// splitTool finds a definition's schemas. A schema whose text the
// generator has read before (tools often share one) is recognized by
// comparing bytes rather than scanned again.
func (g *Generator) splitTool(raw json.RawMessage) *tool {
	t := &tool{raw: raw}
	o, _ := jsonwire.NewObject(raw)
	var recognized *doc
	skip := func(key, b []byte, i int) (int, bool) {
		recognized = nil
		if jsonwire.KeyIs(key, "inputSchema") || jsonwire.KeyIs(key, "outputSchema") {
			if recognized = g.known(b[i:]); recognized != nil {
				return i + len(recognized.raw), true
			}
		}
		return jsonwire.SkipValue(b, i)
	}
	for {
		m, ok := o.NextSkipping(skip)
		if !ok {
			return t
		}
		switch {
		case t.input == nil && jsonwire.KeyIs(m.Key, "inputSchema"):
			t.input = m.Value
			t.docs[0], t.read[0] = recognized, recognized != nil
		case t.output == nil && jsonwire.KeyIs(m.Key, "outputSchema"):
			t.output = m.Value
			t.docs[1], t.read[1] = recognized, recognized != nil
		}
	}
}

func (t *tool) schema(member string) []byte {
	if t == nil {
		return nil
	}
	if member == "inputSchema" {
		return t.input
	}
	return t.output
}

func (t *tool) definition() json.RawMessage {
	if t == nil {
		return nil
	}
	return t.raw
}

// Applies reports whether a change gets a witness: a tool's input or
// output schema change classified breaking or warning, and a removed or
// renamed tool.
func Applies(c contract.Change) bool {
	if c.Subject != contract.KindTool || c.Severity < contract.Warning {
		return false
	}
	return c.Rule == contract.RuleToolRemoved || c.Rule == contract.RuleToolRenamed ||
		strings.HasPrefix(string(c.Rule), "input.") || strings.HasPrefix(string(c.Rule), "output.")
}

// Change returns the witness of one change between two definitions of a
// tool (raw JSON; nil when absent on that side), or nil when the change is
// not one witnesses are for. The result has None set when no witness
// exists or none was found.
func (g *Generator) Change(c contract.Change, oldDef, newDef json.RawMessage) *contract.Witness {
	var o, n *tool
	if oldDef != nil {
		o = g.splitTool(oldDef)
	}
	if newDef != nil {
		n = g.splitTool(newDef)
	}
	return g.change(c, splitPointer(c.Path), o, n)
}

// change is Change with the change's path split into segs.
func (g *Generator) change(c contract.Change, segs []string, oldTool, newTool *tool) *contract.Witness {
	switch {
	case c.Subject != contract.KindTool:
		return nil
	case c.Rule == contract.RuleToolRemoved || c.Rule == contract.RuleToolRenamed:
		return g.oldCall(c, oldTool.definition())
	}
	dir, suffix, ok := strings.Cut(string(c.Rule), ".")
	if !ok || dir != "input" && dir != "output" {
		return nil
	}
	if why, ok := noneReasons[suffix]; ok {
		return &contract.Witness{None: why}
	}
	eff, ok := effects[suffix]
	if !ok {
		return &contract.Witness{None: "no witness is searched for rule " + string(c.Rule)}
	}
	member := dir + "Schema"
	if len(segs) == 0 || segs[0] != member {
		return &contract.Witness{None: "the change's path is not inside " + member}
	}
	oldDoc, newDoc := oldTool.doc(g, member), newTool.doc(g, member)
	if oldDoc == nil || newDoc == nil {
		return &contract.Witness{None: "the schema is not JSON Schema, or is larger than " + strconv.Itoa(maxSchemaBytes>>20) + " MiB"}
	}
	order := []bool{true} // narrowing: the old schema accepts, the new rejects
	switch eff {
	case widens:
		order = []bool{false}
	case either:
		order = []bool{true, false}
	case loosensFirst:
		order = []bool{false, true}
	}
	var failure string
	for _, narrowing := range order {
		a, b := oldDoc, newDoc
		if !narrowing {
			a, b = newDoc, oldDoc
		}
		value, reason, why := g.search(a, b, c.Path, segs[1:])
		if value == nil {
			if failure == "" {
				failure = why
			}
			continue
		}
		w := &contract.Witness{Old: contract.WitnessValid, New: reason}
		if !narrowing {
			w.Old, w.New = reason, contract.WitnessValid
		}
		if dir == "input" {
			w.Arguments = value
		} else {
			w.Result = value
		}
		return w
	}
	return &contract.Witness{None: failure}
}

// oldCall is the witness of a removed or renamed tool: the smallest call
// the old definition accepts, to a name the new listing lacks.
func (g *Generator) oldCall(c contract.Change, oldTool json.RawMessage) *contract.Witness {
	args, err := g.Call(oldTool)
	if err != nil {
		return &contract.Witness{None: err.Error()}
	}
	why := "the new listing has no tool called " + strconv.Quote(c.Name)
	if to, ok := canon.UnquoteKey(c.After); ok && c.Rule == contract.RuleToolRenamed {
		why += " (renamed to " + strconv.Quote(to) + ")"
	}
	return &contract.Witness{Arguments: args, Old: contract.WitnessValid, New: why}
}
