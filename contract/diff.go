package contract

import (
	"encoding/json"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Diff classifies every difference between two snapshots of one server under
// a policy (nil is the default policy). A nil old snapshot (no prior
// snapshot) or a nil new one (a failed probe) is no drift: the report is
// empty, by design.
func Diff(old, new *Snapshot, p *Policy) *Report {
	return diffScoped(old, new, p, diffScope{kinds: allKinds(), server: true})
}

// DiffDocuments is Diff for contracts read from files, which may carry only
// part of a contract (a bare tools/list result has no prompts and no server
// information): only the listings both documents carry are compared, and
// server-level members only when both carry them.
func DiffDocuments(old, new *Document, p *Policy) *Report {
	if old == nil || new == nil {
		return &Report{}
	}
	sc := diffScope{kinds: map[Kind]bool{}, server: documentHasServer(old) && documentHasServer(new)}
	for _, k := range Kinds {
		sc.kinds[k] = old.Present[k] && new.Present[k]
	}
	return diffScoped(old.Snapshot, new.Snapshot, p, sc)
}

func documentHasServer(d *Document) bool {
	s := d.Snapshot
	return d.Format == FormatSnapshot || s.ProtocolVersion != "" || len(s.Capabilities) > 0 || len(s.ServerInfo) > 0 || d.HasInstructions
}

type diffScope struct {
	kinds  map[Kind]bool
	server bool
}

func allKinds() map[Kind]bool {
	m := map[Kind]bool{}
	for _, k := range Kinds {
		m[k] = true
	}
	return m
}

func diffScoped(old, new *Snapshot, p *Policy, sc diffScope) *Report {
	if old == nil || new == nil {
		return &Report{}
	}
	if p == nil {
		p = DefaultPolicy()
	}
	c := &collector{}
	for _, k := range Kinds {
		if sc.kinds[k] && old.Listing(k).SetDigest() != new.Listing(k).SetDigest() {
			diffListing(c, k, old.Listing(k), new.Listing(k))
		}
	}
	if sc.server {
		diffServer(c, old, new)
	}
	return p.Apply(c.changes)
}

// collector gathers changes with default severities and rendered messages.
type collector struct {
	changes []Change
}

// add records a change; vars fill the rule's templates ({name}, {before}
// and {after} default to display forms of the values).
func (c *collector) add(rule RuleID, subject Kind, name, path string, before, after json.RawMessage, vars map[string]string) {
	r, ok := LookupRule(rule)
	if !ok {
		// A programming error: every test fails on it. A released binary
		// keeps the change visible rather than lose it.
		if testing.Testing() {
			panic("contract: a change was emitted with rule " + string(rule) + ", which the rule table does not have")
		}
		r = Rule{ID: rule, Severity: Warning, message: string(rule), brief: string(rule)}
	}
	if vars == nil {
		vars = map[string]string{}
	}
	setDefault := func(k, v string) {
		if _, ok := vars[k]; !ok {
			vars[k] = v
		}
	}
	setDefault("name", SanitizeText(name))
	setDefault("before", displayValue(before))
	setDefault("after", displayValue(after))
	c.changes = append(c.changes, Change{
		Rule: rule, Severity: r.Severity, Subject: subject, Name: name, Path: path,
		Before: before, After: after,
		Message: renderTemplate(r.message, vars), brief: renderTemplate(r.brief, vars),
	})
}

// displayValue renders a JSON value for a message: strings quoted, anything
// else as compact JSON, escaped and cut to a readable length.
func displayValue(raw json.RawMessage) string {
	if raw == nil {
		return "(absent)"
	}
	if s, ok := canon.UnquoteKey(raw); ok {
		return QuoteForDisplay(TruncateRunes(s, 40))
	}
	return SafeText(TruncateRunes(string(raw), 40))
}

// diffListing compares the definitions of one kind, matched by key.
func diffListing(c *collector, k Kind, old, new Listing) {
	subject := k
	oldBy, newBy := firstByKey(old), firstByKey(new)
	for _, key := range duplicateKeys(new) {
		if !slices.Contains(duplicateKeys(old), key) {
			c.add(subject.rule(defDuplicate), subject, key, "", nil, nil, nil)
		}
	}
	var removed, added []Definition
	for _, d := range old {
		if _, ok := newBy[d.Key]; !ok && oldBy[d.Key].Digest == d.Digest {
			removed = append(removed, d)
		}
	}
	for _, d := range new {
		if _, ok := oldBy[d.Key]; !ok && newBy[d.Key].Digest == d.Digest {
			added = append(added, d)
		}
	}
	opts := ScanOptions{}
	if k == KindTool {
		opts.ToolNames = new.Keys()
		renamed := detectRenames(removed, added)
		for _, r := range renamed {
			o, n := removed[r[0]], added[r[1]]
			c.add(RuleToolRenamed, subject, o.Key, "/name", jsonString(o.Key), jsonString(n.Key), map[string]string{"after": SanitizeText(n.Key)})
			opts.Self = n.Key
			diffDefinition(c, k, n.Key, o, n, opts)
		}
		removed = dropIndexes(removed, renamed, 0)
		added = dropIndexes(added, renamed, 1)
	}
	for _, d := range removed {
		c.add(subject.rule(defRemoved), subject, d.Key, "", jsonString(d.Key), nil, nil)
	}
	for _, d := range added {
		opts.Self = d.Key
		if hits := scanDefinition(k, d.Raw, opts); len(hits) > 0 {
			c.add(subject.rule(defAddedSuspicious), subject, d.Key, "", nil, jsonString(d.Key), map[string]string{"hits": FormatHits(hits)})
			continue
		}
		c.add(subject.rule(defAdded), subject, d.Key, "", nil, jsonString(d.Key), nil)
	}
	listed := make(map[[2]string]bool, len(new))
	for _, d := range new {
		listed[[2]string{d.Key, d.Digest}] = true
	}
	for _, d := range new {
		o, ok := oldBy[d.Key]
		// Compare only keys in both, once per key; of duplicated keys, the
		// one that did not change is the one to compare.
		if !ok || newBy[d.Key].Digest != d.Digest || listed[[2]string{d.Key, o.Digest}] {
			continue
		}
		opts.Self = d.Key
		diffDefinition(c, k, d.Key, o, d, opts)
	}
}

// firstByKey maps each key to its first definition in listing order (a
// listing sorts definitions that share a key by digest).
func firstByKey(l Listing) map[string]Definition {
	m := make(map[string]Definition, len(l))
	for _, d := range l {
		if _, ok := m[d.Key]; !ok {
			m[d.Key] = d
		}
	}
	return m
}

func duplicateKeys(l Listing) []string {
	var dups []string
	for i := 1; i < len(l); i++ {
		if l[i].Key == l[i-1].Key && (len(dups) == 0 || dups[len(dups)-1] != l[i].Key) {
			dups = append(dups, l[i].Key)
		}
	}
	return dups
}

func dropIndexes(defs []Definition, pairs [][2]int, side int) []Definition {
	drop := map[int]bool{}
	for _, p := range pairs {
		drop[p[side]] = true
	}
	var out []Definition
	for i, d := range defs {
		if !drop[i] {
			out = append(out, d)
		}
	}
	return out
}

// diffDefinition compares two definitions of one kind (name is the key
// reported; for a renamed tool, the new name). A digest change that shows
// no semantic difference is recorded as info.
func diffDefinition(c *collector, k Kind, name string, old, new Definition, opts ScanOptions) {
	before := len(c.changes)
	ov, err1 := parseValue(old.Raw)
	nv, err2 := parseValue(new.Raw)
	subject := k
	if err1 != nil || err2 != nil || !ov.isObject() || !nv.isObject() {
		c.add(subject.rule(defMemberChanged), subject, name, "", nil, nil, map[string]string{"keyword": "definition"})
		return
	}
	dd := &definitionDiff{c: c, subject: subject, name: name, opts: opts}
	switch k {
	case KindTool:
		dd.tool(ov, nv)
	case KindPrompt:
		dd.prompt(ov, nv)
	default:
		dd.resource(ov, nv)
	}
	// A renamed definition's digest differs by its name alone, which the
	// rename already reports.
	renamedOnly := old.Key != new.Key && equalValues(ov.without(k.KeyMember()), nv.without(k.KeyMember()))
	if len(c.changes) == before && old.Digest != new.Digest && !renamedOnly {
		c.add(subject.rule(defDefinitionReformatted), subject, name, "", nil, nil, nil)
	}
}

// definitionDiff compares the members of one pair of definitions.
type definitionDiff struct {
	c       *collector
	subject Kind
	name    string
	opts    ScanOptions
}

func (dd *definitionDiff) add(rule RuleID, path string, before, after json.RawMessage, vars map[string]string) {
	dd.c.add(rule, dd.subject, dd.name, path, before, after, vars)
}

// changedMembers calls fn for every member name either side has (sorted)
// whose values differ semantically; a side that is not an object has none.
func changedMembers(o, n *value, fn func(member string, ov, nv *value)) {
	for _, m := range unionSorted(objectNames(o), objectNames(n)) {
		if ov, nv := o.get(m), n.get(m); !equalValues(ov, nv) {
			fn(m, ov, nv)
		}
	}
}

// text compares a description-like text member: suspicious when the new
// text has heuristic hits the old one did not, otherwise changed.
func (dd *definitionDiff) text(changed, suspicious RuleID, path string, ov, nv *value, vars map[string]string) {
	os, _ := strValue(ov)
	ns, _ := strValue(nv)
	hits := NewHits(ScanText(os, dd.opts), ScanText(ns, dd.opts))
	if vars == nil {
		vars = map[string]string{}
	}
	if len(hits) > 0 {
		vars["hits"] = FormatHits(hits)
		dd.add(suspicious, path, rawJSON(ov), rawJSON(nv), vars)
		return
	}
	dd.add(changed, path, rawJSON(ov), rawJSON(nv), vars)
}

func strValue(v *value) (string, bool) {
	if v.isString() {
		return v.text, true
	}
	return "", false
}

func (dd *definitionDiff) tool(o, n *value) {
	changedMembers(o, n, func(m string, ov, nv *value) {
		path := "/" + escapePointer(m)
		switch m {
		case "name":
		case "title":
			dd.add(RuleToolTitleChanged, path, rawJSON(ov), rawJSON(nv), nil)
		case "description":
			dd.text(RuleToolDescriptionChanged, RuleToolDescriptionSuspicious, path, ov, nv, nil)
		case "icons":
			dd.add(RuleToolIconsChanged, path, rawJSON(ov), rawJSON(nv), nil)
		case "_meta":
			dd.add(RuleToolMetaChanged, path, rawJSON(ov), rawJSON(nv), nil)
		case "annotations":
			dd.annotations(ov, nv)
		case "execution":
			dd.execution(ov, nv)
		case "inputSchema":
			dd.schema(DirectionInput, ov, nv)
		case "outputSchema":
			switch {
			case ov == nil:
				dd.add(RuleToolOutputSchemaAdded, path, nil, rawJSON(nv), nil)
			case nv == nil:
				dd.add(RuleToolOutputSchemaRemoved, path, rawJSON(ov), nil, nil)
			default:
				dd.schema(DirectionOutput, ov, nv)
			}
		default:
			dd.add(RuleToolMemberChanged, path, rawJSON(ov), rawJSON(nv), map[string]string{"keyword": SanitizeText(m)})
		}
	})
}

func (dd *definitionDiff) schema(dir Direction, ov, nv *value) {
	root := &ptr{seg: string(dir) + "Schema"}
	sink := &toolSink{c: dd.c, subject: dd.subject, name: dd.name, scanOpts: dd.opts}
	budget := 8*(schemaSize(ov)+schemaSize(nv)) + 1024
	newSchemaDiff(dir, ov, nv, root, sink, budget).run(ov, nv)
}

// Tool annotation hints with their spec defaults and which value grants
// more authority.
type hint struct {
	name            string
	defaultValue    bool
	riskier         bool
	onlyIfReadWrite bool // meaningful only when readOnlyHint is false
}

var hints = [...]hint{
	{"readOnlyHint", false, false, false},
	{"destructiveHint", true, true, true},
	{"idempotentHint", false, false, true},
	{"openWorldHint", true, true, false},
}

// annotations judges hint changes against the spec defaults: a move to the
// riskier value (also by removing a hint whose default is riskier) is a
// warning; a move to less authority, or to the default value, is info.
func (dd *definitionDiff) annotations(o, n *value) {
	effective := func(a *value, name string, def bool) bool {
		if v := a.get(name); v.isBool() {
			return v.boolean
		}
		return def
	}
	readOnlyNow := effective(n, "readOnlyHint", false)
	changedMembers(o, n, func(m string, ov, nv *value) {
		path := "/annotations/" + escapePointer(m)
		vars := map[string]string{"keyword": SanitizeText(m), "before": displayHint(ov), "after": displayHint(nv)}
		i := slices.IndexFunc(hints[:], func(h hint) bool { return h.name == m })
		if i < 0 || hints[i].onlyIfReadWrite && readOnlyNow {
			dd.add(RuleToolAnnotationChanged, path, rawJSON(ov), rawJSON(nv), vars)
			return
		}
		h := hints[i]
		was, is := effective(o, m, h.defaultValue), effective(n, m, h.defaultValue)
		if was != is && is == h.riskier {
			dd.add(RuleToolAnnotationAuthorityIncreased, path, rawJSON(ov), rawJSON(nv), vars)
			return
		}
		dd.add(RuleToolAnnotationAuthorityDecreased, path, rawJSON(ov), rawJSON(nv), vars)
	})
}

func displayHint(v *value) string {
	if v == nil {
		return "(unset)"
	}
	return displayValue(rawJSON(v))
}

// execution compares execution.taskSupport (absent is "forbidden").
func (dd *definitionDiff) execution(o, n *value) {
	support := func(e *value) string {
		if s, ok := e.str("taskSupport"); ok {
			return s
		}
		return "forbidden"
	}
	was, is := support(o), support(n)
	path := "/execution/taskSupport"
	ov, nv := rawJSON(o.get("taskSupport")), rawJSON(n.get("taskSupport"))
	switch {
	case was == is:
	case is == "required":
		dd.add(RuleToolExecutionTaskRequired, path, ov, nv, nil)
	case is == "optional":
		dd.add(RuleToolExecutionTaskRelaxed, path, ov, nv, nil)
	case was == "required":
		dd.add(RuleToolExecutionTaskForbidden, path, ov, nv, nil)
	case was == "optional":
		dd.add(RuleToolExecutionTaskOptionalRemoved, path, ov, nv, nil)
	default:
		dd.add(RuleToolMemberChanged, path, ov, nv, map[string]string{"keyword": "execution.taskSupport"})
	}
	changedMembers(o, n, func(m string, ov, nv *value) {
		if m != "taskSupport" {
			dd.add(RuleToolMemberChanged, "/execution/"+escapePointer(m), rawJSON(ov), rawJSON(nv), map[string]string{"keyword": "execution." + SanitizeText(m)})
		}
	})
}

func (dd *definitionDiff) prompt(o, n *value) {
	changedMembers(o, n, func(m string, ov, nv *value) {
		path := "/" + escapePointer(m)
		switch m {
		case "name":
		case "title":
			dd.add(RulePromptTitleChanged, path, rawJSON(ov), rawJSON(nv), nil)
		case "description":
			dd.text(RulePromptDescriptionChanged, RulePromptDescriptionSuspicious, path, ov, nv, nil)
		case "arguments":
			dd.promptArguments(ov, nv)
		default:
			dd.add(RulePromptMemberChanged, path, rawJSON(ov), rawJSON(nv), map[string]string{"keyword": SanitizeText(m)})
		}
	})
}

// promptArguments matches arguments by name.
func (dd *definitionDiff) promptArguments(o, n *value) {
	type arg struct {
		index int
		v     *value
	}
	byName := func(list *value) (map[string]arg, []string) {
		m, order := map[string]arg{}, []string{}
		if !list.isArray() {
			return m, order
		}
		for i, a := range list.items {
			if name, ok := a.str("name"); ok {
				if _, dup := m[name]; !dup {
					m[name] = arg{i, a}
					order = append(order, name)
				}
			}
		}
		return m, order
	}
	required := func(a *value) bool { r := a.get("required"); return r.isBool() && r.boolean }
	om, oorder := byName(o)
	nm, norder := byName(n)
	for _, name := range unionSorted(oorder, norder) {
		oa, oOK := om[name]
		na, nOK := nm[name]
		vars := map[string]string{"param": SanitizeText(name)}
		switch {
		case !oOK:
			path := "/arguments/" + strconv.Itoa(na.index)
			rule := RulePromptArgumentAdded
			if required(na.v) {
				rule = RulePromptArgumentAddedRequired
			}
			dd.add(rule, path, nil, rawJSON(na.v), vars)
		case !nOK:
			path := "/arguments/" + strconv.Itoa(oa.index)
			rule := RulePromptArgumentRemoved
			if required(oa.v) {
				rule = RulePromptArgumentRemovedRequired
			}
			dd.add(rule, path, rawJSON(oa.v), nil, vars)
		default:
			path := "/arguments/" + strconv.Itoa(na.index)
			switch or, nr := required(oa.v), required(na.v); {
			case !or && nr:
				dd.add(RulePromptArgumentRequiredAdded, path+"/required", rawJSON(oa.v.get("required")), rawJSON(na.v.get("required")), vars)
			case or && !nr:
				dd.add(RulePromptArgumentRequiredRemoved, path+"/required", rawJSON(oa.v.get("required")), rawJSON(na.v.get("required")), vars)
			}
			changedMembers(oa.v, na.v, func(m string, ov, nv *value) {
				switch m {
				case "name", "required":
				case "description":
					dd.text(RulePromptArgumentDescriptionChanged, RulePromptArgumentDescriptionSuspicious, path+"/description", ov, nv, vars)
				default:
					dd.add(RulePromptMemberChanged, path+"/"+escapePointer(m), rawJSON(ov), rawJSON(nv), map[string]string{"keyword": "argument " + SanitizeText(name) + " " + SanitizeText(m)})
				}
			})
		}
	}
}

// resource compares resources and resource templates.
func (dd *definitionDiff) resource(o, n *value) {
	changedMembers(o, n, func(m string, ov, nv *value) {
		path := "/" + escapePointer(m)
		switch m {
		case "uri", "uriTemplate":
		case "title":
			dd.add(dd.subject.rule(defTitleChanged), path, rawJSON(ov), rawJSON(nv), nil)
		case "description":
			dd.text(dd.subject.rule(defDescriptionChanged), dd.subject.rule(defDescriptionSuspicious), path, ov, nv, nil)
		case "mimeType":
			dd.add(dd.subject.rule(defMimeTypeChanged), path, rawJSON(ov), rawJSON(nv), nil)
		default:
			dd.add(dd.subject.rule(defMemberChanged), path, rawJSON(ov), rawJSON(nv), map[string]string{"keyword": SanitizeText(m)})
		}
	})
}

// scanDefinition runs the suspicious-text heuristics over every text a
// model reads in a new definition: its description and, for tools, every
// description in its schemas; for prompts, argument descriptions.
func scanDefinition(k Kind, raw json.RawMessage, opts ScanOptions) []TextHit {
	v, err := parseValue(raw)
	if err != nil || !v.isObject() {
		return nil
	}
	var hits []TextHit
	scan := func(text string) {
		for _, h := range ScanText(text, opts) {
			if !slices.Contains(hits, h) {
				hits = append(hits, h)
			}
		}
	}
	if s, ok := v.str("description"); ok {
		scan(s)
	}
	switch k {
	case KindTool:
		for _, m := range [...]string{"inputSchema", "outputSchema"} {
			s := v.get(m)
			walkDescriptions(newSchemaDoc(s), s, &ptr{seg: m}, func(text string, _ *ptr) { scan(text) })
		}
	case KindPrompt:
		if args := v.get("arguments"); args.isArray() {
			for _, a := range args.items {
				if s, ok := a.str("description"); ok {
					scan(s)
				}
			}
		}
	}
	return hits
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
