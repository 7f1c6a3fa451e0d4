//go:generate go test -run ^TestRuleIDsGenerated$ -update .

package contract

import (
	"slices"
	"strings"
	"sync"
)

// Rule is one entry of the classification table: a stable ID, the subject it
// applies to, its severity under the default policy, and the text used to
// explain a change. docs/rules.md is generated from this table.
type Rule struct {
	ID      RuleID
	Subject Kind
	// Direction is set for schema rules (whose subject is a tool).
	Direction Direction
	// Severity under the default policy.
	Severity Severity
	// When says in one line what triggers the rule (documentation).
	When string
	// message is the one-sentence consequence, brief the fragment used in
	// the one-line description; both are templates over {name}, {param},
	// {keyword}, {before}, {after}, {hits}.
	message, brief string
}

// RuleID is a rule's stable id ("tool.removed", "input.property.added_required").
// The table spells the ids; ruleids.go, generated from it, holds them as
// constants (and as defRule and schemaRule for code generic over kinds and
// directions), which is the only way the classifier names a rule. An id the
// table lacks is a programming error that fails every test (see collector.add).
type RuleID string

// Rules returns the classification table, sorted by ID.
func Rules() []Rule { return slices.Clone(ruleTable().list) }

// LookupRule returns the rule with the given ID.
func LookupRule(id RuleID) (Rule, bool) {
	r, ok := ruleTable().byID[id]
	return r, ok
}

type rules struct {
	list []Rule
	byID map[RuleID]Rule
}

// ruleTable is built once; it is immutable data.
var ruleTable = sync.OnceValue(func() rules {
	var list []Rule
	add := func(subject Kind, sev Severity, id RuleID, when, message, brief string) {
		list = append(list, Rule{ID: id, Subject: subject, Severity: sev, When: when, message: message, brief: brief})
	}
	definitionRules(add)
	toolRules(add)
	promptRules(add)
	serverRules(add)
	for _, s := range schemaRuleSpecs() {
		for _, d := range []struct {
			dir     Direction
			sev     Severity
			message string
		}{{DirectionInput, s.in, s.inMsg}, {DirectionOutput, s.out, s.outMsg}} {
			if d.sev == None {
				continue
			}
			list = append(list, Rule{ID: RuleID(string(d.dir) + "." + s.suffix), Subject: KindTool, Direction: d.dir, Severity: d.sev, When: s.when, message: d.message, brief: s.brief})
		}
	}
	slices.SortFunc(list, func(a, b Rule) int { return strings.Compare(string(a.ID), string(b.ID)) })
	byID := make(map[RuleID]Rule, len(list))
	for _, r := range list {
		if _, dup := byID[r.ID]; dup {
			panic("contract: duplicate rule " + string(r.ID)) // a programming error in the table
		}
		byID[r.ID] = r
	}
	return rules{list: list, byID: byID}
})

type addRule func(subject Kind, sev Severity, id RuleID, when, message, brief string)

// definitionRules are the rules every kind of definition shares.
func definitionRules(add addRule) {
	for _, k := range []struct {
		subject          Kind
		noun, removedMsg string
		removed, added   Severity
	}{
		{KindTool, "tool", "agents that call {name} will get an unknown-tool error", Breaking, Compatible},
		{KindPrompt, "prompt", "clients that get prompt {name} will get an error", Breaking, Compatible},
		{KindResource, "resource", "clients that read {name} may get a not-found error", Warning, Info},
		{KindResourceTemplate, "resource template", "clients that build URIs from {name} may get not-found errors", Breaking, Info},
	} {
		s, n := k.subject, k.noun
		id := func(op string) RuleID { return RuleID(string(s) + "." + op) } // the table spells every kind's ids
		add(s, k.removed, id("removed"), n+" removed", k.removedMsg, "removed")
		add(s, k.added, id("added"), n+" added", "new "+n+" {name} is available", "added")
		add(s, Warning, id("added_suspicious"), n+" added with suspicious text (see heuristics)", "new "+n+" {name} carries suspicious text ({hits}); review it before agents read it", "added with suspicious text ({hits})")
		add(s, Warning, id("description.changed"), n+" description changed", "the description of {name} changed; text a model reads can change how and when it is used", "description changed")
		add(s, Breaking, id("description.suspicious"), n+" description new or changed and contains suspicious text", "the description of {name} now contains suspicious text ({hits}) that can steer or hijack an agent", "suspicious description ({hits})")
		add(s, Info, id("title.changed"), "display title changed", "the display title of {name} changed", "title changed")
		add(s, Info, id("member.changed"), "another member changed (icons, _meta, name of a resource, members MCP adds later)", "{keyword} of {name} changed", "{keyword} changed")
		add(s, Info, id("definition.reformatted"), "digest changed without semantic effect (reordered required/enum/type arrays, equivalent spelling)", "the definition of {name} changed without semantic effect", "reformatted")
		add(s, Warning, id("duplicate"), "the key is listed more than once in the new listing", "{name} is listed more than once; clients may use either definition", "listed twice")
	}
	add(KindResource, Warning, "resource.mime_type.changed", "resource mimeType changed", "clients reading {name} will get {after} content instead of {before}", "mimeType {before}→{after}")
	add(KindResourceTemplate, Warning, "resource_template.mime_type.changed", "resource template mimeType changed", "resources built from {name} will have {after} content instead of {before}", "mimeType {before}→{after}")
}

func toolRules(add addRule) {
	t := KindTool
	add(t, Breaking, "tool.renamed", "a removed tool's definition reappears under a new name", "{name} was renamed to {after}; agents that call {name} will get an unknown-tool error", "renamed to {after}")
	add(t, Info, "tool.icons.changed", "icons changed", "the icons of {name} changed", "icons changed")
	add(t, Info, "tool.meta.changed", "_meta changed", "the _meta of {name} changed", "_meta changed")
	add(t, Warning, "tool.annotation.authority_increased", "an annotation now claims more authority (read-only→not, non-destructive→destructive, idempotent→not, closed→open world), judged against the spec defaults", "{name} now claims more authority ({keyword} {before}→{after}); approvals given under the old hint no longer fit", "{keyword} {before}→{after}")
	add(t, Info, "tool.annotation.authority_decreased", "an annotation now claims less authority, or moved to a value equal to its spec default", "{name} now claims less authority ({keyword} {before}→{after})", "{keyword} {before}→{after}")
	add(t, Info, "tool.annotation.changed", "another annotation changed (title, unknown hints, or hints that do not apply to a read-only tool)", "annotation {keyword} of {name} changed", "annotation {keyword} changed")
	add(t, Breaking, "tool.execution.task_required", "execution.taskSupport became required", "{name} now requires task-augmented calls; clients without task support can no longer call it", "tasks now required")
	add(t, Breaking, "tool.execution.task_forbidden", "execution.taskSupport went from required to forbidden", "{name} no longer accepts task-augmented calls, which clients had to make before", "tasks now forbidden")
	add(t, Warning, "tool.execution.task_optional_removed", "execution.taskSupport went from optional to forbidden", "{name} no longer accepts task-augmented calls; clients that call it as a task will get an error", "tasks now forbidden")
	add(t, Compatible, "tool.execution.task_relaxed", "execution.taskSupport became optional", "{name} now accepts calls with or without a task", "tasks now optional")
	add(t, Breaking, "tool.output_schema.removed", "outputSchema removed", "{name} no longer declares an output schema; code that relies on validated structured results loses that guarantee", "outputSchema removed")
	add(t, Compatible, "tool.output_schema.added", "outputSchema added", "{name} now declares an output schema for its structured results", "outputSchema added")
}

func promptRules(add addRule) {
	p := KindPrompt
	add(p, Compatible, "prompt.argument.added", "optional argument added", "clients may now pass {param} to {name}", "argument {param} added")
	add(p, Breaking, "prompt.argument.added_required", "required argument added", "clients that get {name} without {param} will get an error", "required argument {param} added")
	add(p, Warning, "prompt.argument.removed", "optional argument removed", "{name} no longer takes {param}; clients that pass it may have it ignored or rejected", "argument {param} removed")
	add(p, Breaking, "prompt.argument.removed_required", "required argument removed", "{name} no longer takes {param}, which every client passed; they may get an error", "required argument {param} removed")
	add(p, Breaking, "prompt.argument.required_added", "argument became required", "clients that get {name} without {param} will get an error", "argument {param} now required")
	add(p, Compatible, "prompt.argument.required_removed", "argument became optional", "clients may now omit {param} when getting {name}", "argument {param} now optional")
	add(p, Warning, "prompt.argument.description.changed", "argument description changed", "the description of argument {param} of {name} changed", "argument {param} description changed")
	add(p, Breaking, "prompt.argument.description.suspicious", "argument description new or changed and contains suspicious text", "the description of argument {param} of {name} now contains suspicious text ({hits}) that can steer or hijack an agent", "argument {param} description suspicious ({hits})")
}

func serverRules(add addRule) {
	s := KindServer
	add(s, Breaking, "capability.removed", "server capability (or a sub-capability such as resources.subscribe) removed", "the server no longer offers {param}; clients that use it will get errors", "capability {param} removed")
	add(s, Compatible, "capability.added", "server capability added", "the server now offers {param}", "capability {param} added")
	add(s, Warning, "capability.list_changed.removed", "a listChanged flag dropped", "the server no longer announces changes to {param}; clients keep stale listings until they poll", "{param} dropped")
	add(s, Info, "capability.changed", "capability contents changed without adding or removing a capability", "the contents of capability {param} changed", "capability {param} changed")
	add(s, Info, "server.protocol_version.changed", "negotiated protocol version changed", "the negotiated protocol version changed from {before} to {after}", "protocol {before}→{after}")
	add(s, Info, "server.version.changed", "serverInfo.version changed", "the server version changed from {before} to {after}", "server version {before}→{after}")
	add(s, Info, "server.info.changed", "another serverInfo member changed (name, title, icons, websiteUrl)", "serverInfo {keyword} changed from {before} to {after}", "serverInfo {keyword} changed")
	add(s, Warning, "server.spec_generation.changed", "spec generation changed between stateful_2025 and stateless_2026", "the server now speaks {after} instead of {before}; clients built for one generation may fail on the other", "spec generation {before}→{after}")
	add(s, Warning, "server.transport.changed", "the transport that answered changed", "the server now answers over {after} instead of {before}", "transport {before}→{after}")
	add(s, Warning, "server.instructions.changed", "instructions changed, added or removed", "the server instructions a model reads changed; they can change how an agent uses every tool", "instructions changed")
	add(s, Breaking, "server.instructions.suspicious", "instructions new or changed and contain suspicious text", "the server instructions now contain suspicious text ({hits}) that can steer or hijack an agent", "suspicious instructions ({hits})")
}

// schemaRuleSpec is one schema rule in both directions; a None severity means
// the rule does not exist in that direction.
type schemaRuleSpec struct {
	suffix        string
	in, out       Severity
	when          string
	inMsg, outMsg string
	brief         string
}

func schemaRuleSpecs() []schemaRuleSpec {
	return []schemaRuleSpec{
		{"property.added", Compatible, Compatible, "optional property added",
			"agents may now pass {param} to {name}", "{name} may now return {param}", "param {param} added"},
		{"property.added_required", Breaking, Compatible, "required property added",
			"agents calling {name} without {param} will now get a validation error", "{name} now always returns {param}", "required param {param} added"},
		{"property.added_required_default", Warning, None, "required property added, with a default",
			"{param} is now required by {name} (it has a default); agents that omit it may get a validation error", "", "required param {param} added (with default)"},
		{"required.added", Breaking, Compatible, "existing property became required",
			"agents calling {name} without {param} will now get a validation error", "{name} now always returns {param}", "param {param} now required"},
		{"required.added_default", Warning, None, "existing property with a default became required",
			"{param} is now required by {name} (it has a default); agents that omit it may get a validation error", "", "param {param} now required (with default)"},
		{"required.removed", Compatible, Breaking, "required property became optional",
			"agents may now omit {param} when calling {name}", "{name} may now omit {param}; code that reads it unconditionally will fail", "param {param} now optional"},
		{"property.removed_closed", Breaking, None, "property removed from a closed model (additionalProperties false)",
			"agents that pass {param} to {name} will now get a validation error", "", "param {param} removed"},
		{"property.removed_open", Warning, None, "property removed from an open model",
			"{name} no longer declares {param}; agents that pass it will have it silently ignored", "", "param {param} removed"},
		{"property.removed_required", None, Breaking, "required property removed",
			"", "{name} no longer returns {param}; code that reads it will fail", "field {param} removed"},
		{"property.removed_optional", None, Warning, "optional property removed",
			"", "{name} no longer declares {param}; code that reads it may get nothing", "field {param} removed"},
		{"type.changed", Breaking, Breaking, "type changed to a disjoint (or overlapping, neither wider nor narrower) set",
			"agents passing {param} as {before} will now get a validation error from {name}", "{name} now returns {param} as {after} instead of {before}", "{param} type {before}→{after}"},
		{"type.narrowed", Breaking, Compatible, "type narrowed (number→integer, null dropped, type introduced)",
			"agents passing {param} as {before} may now get a validation error from {name} (now {after})", "{name} now returns {param} only as {after}", "{param} type narrowed {before}→{after}"},
		{"type.widened", Compatible, Breaking, "type widened (integer→number, null added, type dropped)",
			"{name} now also accepts {param} as {after}", "{name} may now return {param} as {after}; code that expects {before} will fail", "{param} type widened {before}→{after}"},
		{"enum.added", Breaking, Compatible, "enum or const introduced",
			"agents passing {param} outside {after} will now get a validation error from {name}", "{name} now returns {param} only as one of {after}", "{param} restricted to {after}"},
		{"enum.removed", Compatible, Warning, "enum or const dropped",
			"{name} now accepts any value of {param}", "{name} may now return any value as {param}; code that switches on known values may see others", "{param} no longer restricted"},
		{"enum.value_removed", Breaking, Compatible, "enum value removed, or const changed",
			"agents passing {before} as {param} will now get a validation error from {name}", "{name} no longer returns {before} as {param}", "{param} value {before} removed"},
		{"enum.value_added", Compatible, Warning, "enum value added, or const changed",
			"agents may now pass {after} as {param} to {name}", "{name} may now return {after} as {param}; code that switches on known values may not handle it", "{param} value {after} added"},
		{"limit.added", Warning, Compatible, "a limit newly set where none was (maximum, minLength, maxItems, multipleOf, ...)",
			"{param} of {name} is now limited ({keyword} {after}); agent calls outside it will get a validation error", "{name} now keeps {param} within {keyword} {after}", "{param} {keyword} {after} set"},
		{"limit.tightened", Breaking, Compatible, "max* decreased, min* increased, multipleOf changed to a non-divisor, uniqueItems set",
			"agents passing {param} within the old limit but outside the new one ({keyword} {before}→{after}) will get a validation error from {name}", "{name} now keeps {param} within {keyword} {after}", "{param} {keyword} {before}→{after}"},
		{"limit.relaxed", Compatible, Warning, "max* increased, min* decreased, multipleOf relaxed, uniqueItems unset",
			"{name} now accepts more values of {param} ({keyword} {before}→{after})", "{name} may now return {param} outside the old limit ({keyword} {before}→{after})", "{param} {keyword} {before}→{after}"},
		{"limit.removed", Compatible, Warning, "a limit removed",
			"{name} no longer limits {param} ({keyword} {before} removed)", "{name} may now return {param} outside the old limit ({keyword} {before} removed)", "{param} {keyword} removed"},
		{"pattern.added", Breaking, Warning, "pattern added",
			"agents passing {param} that does not match {after} will now get a validation error from {name}", "{name} now returns {param} matching {after}", "{param} pattern added"},
		{"pattern.changed", Warning, Warning, "pattern changed",
			"{param} of {name} must now match {after} instead of {before}; some agent values may be rejected", "{name} now returns {param} matching {after} instead of {before}", "{param} pattern changed"},
		{"pattern.removed", Compatible, Warning, "pattern removed",
			"{name} no longer checks {param} against {before}", "{name} may now return {param} not matching {before}", "{param} pattern removed"},
		{"format.added", Warning, Warning, "format added",
			"{name} may now reject {param} that is not a valid {after}", "{name} now says {param} is a {after}", "{param} format {after} added"},
		{"format.changed", Warning, Warning, "format changed",
			"{param} of {name} is now a {after} instead of a {before}", "{name} now returns {param} as a {after} instead of a {before}", "{param} format {before}→{after}"},
		{"format.removed", Compatible, Warning, "format removed",
			"{name} no longer requires {param} to be a {before}", "{name} no longer promises {param} is a {before}", "{param} format removed"},
		{"additional_properties.closed", Warning, Compatible, "additionalProperties closed (set to false)",
			"{name} now rejects members of {param} it does not declare; agents that send extras will get a validation error", "{name} no longer returns undeclared members in {param}", "{param} closed to extra members"},
		{"additional_properties.opened", Compatible, Warning, "additionalProperties opened (false removed)",
			"{name} now accepts undeclared members in {param}", "{name} may now return undeclared members in {param}", "{param} open to extra members"},
		{"any_of.branch_removed", Breaking, Compatible, "anyOf branch removed",
			"values of {param} that only matched the removed anyOf branch will now be rejected by {name}", "{name} no longer returns {param} of the removed anyOf branch", "{param} anyOf branch removed"},
		{"any_of.branch_added", Compatible, Breaking, "anyOf branch added",
			"{name} now accepts another shape of {param}", "{name} may now return {param} in a shape code does not expect", "{param} anyOf branch added"},
		{"one_of.branch_removed", Breaking, Compatible, "oneOf branch removed",
			"values of {param} that only matched the removed oneOf branch will now be rejected by {name}", "{name} no longer returns {param} of the removed oneOf branch", "{param} oneOf branch removed"},
		{"one_of.branch_added", Warning, Breaking, "oneOf branch added",
			"values of {param} that match the new oneOf branch as well as an old one will now be rejected by {name}", "{name} may now return {param} in a shape code does not expect", "{param} oneOf branch added"},
		{"constraint.added", Breaking, Compatible, "allOf branch, not, if/then/else, contains or a dependentSchemas entry added",
			"{name} now checks {param} against a new {keyword} constraint; some agent values will be rejected", "{name} now also constrains {param} by {keyword}", "{param} {keyword} added"},
		{"constraint.removed", Compatible, Warning, "allOf branch, not, if/then/else, contains or a dependentSchemas entry removed",
			"{name} no longer checks {param} against {keyword}", "{name} no longer constrains {param} by {keyword}", "{param} {keyword} removed"},
		{"constraint.changed", Warning, Warning, "the schema under not or if changed (which way it moves acceptance is not decidable in general)",
			"the {keyword} condition on {param} of {name} changed; some agent values may now be rejected", "the {keyword} condition on {param} of {name} changed", "{param} {keyword} changed"},
		{"dependent_required.added", Breaking, Compatible, "dependentRequired entry added",
			"agents passing {param} to {name} must now also pass {after}", "{name} now returns {after} whenever it returns {param}", "{param} now needs {after}"},
		{"dependent_required.removed", Compatible, Warning, "dependentRequired entry removed",
			"agents passing {param} no longer need to pass {before}", "{name} may return {param} without {before}", "{param} no longer needs {before}"},
		{"schema.rejects_all", Breaking, Compatible, "a subschema became false (nothing allowed)",
			"{name} now rejects any value of {param}", "{name} no longer returns {param}", "{param} forbidden"},
		{"schema.accepts", Compatible, Breaking, "a false subschema now allows values",
			"{name} now accepts {param}, which it rejected before", "{name} may now return {param}, which it never returned before", "{param} now allowed"},
		{"default.changed", Warning, Info, "default added, removed or changed",
			"the default of {param} changed from {before} to {after}; agent calls that omit it now mean something else", "the documented default of {param} changed from {before} to {after}", "{param} default {before}→{after}"},
		{"description.changed", Warning, Warning, "a parameter or field description changed",
			"the description agents read for {param} of {name} changed", "the description of {param} in the result of {name} changed", "{param} description changed"},
		{"description.suspicious", Breaking, Breaking, "a parameter or field description new or changed and contains suspicious text",
			"the description of {param} of {name} now contains suspicious text ({hits}) that can steer or hijack an agent", "the description of {param} in the result of {name} now contains suspicious text ({hits})", "{param} description suspicious ({hits})"},
		{"annotation.changed", Info, Info, "an annotation keyword changed (title, examples, deprecated, readOnly, writeOnly, $comment, $schema, content*)",
			"{keyword} of {param} of {name} changed", "{keyword} of {param} in the result of {name} changed", "{param} {keyword} changed"},
		{"keyword.changed", Info, Info, "a keyword this classifier does not know changed",
			"keyword {keyword} of {param} of {name} changed", "keyword {keyword} of {param} in the result of {name} changed", "{param} {keyword} changed"},
		{"ref.changed", Warning, Warning, "a $ref that cannot be resolved locally changed",
			"{param} of {name} now refers to {after} instead of {before}; review it by hand", "{param} in the result of {name} now refers to {after} instead of {before}", "{param} $ref changed"},
		{"schema.too_complex", Warning, Warning, "the schemas were too large or too recursive to compare completely",
			"the input schema of {name} was only partly compared (too complex); review it by hand", "the output schema of {name} was only partly compared (too complex); review it by hand", "schema only partly compared"},
	}
}

// renderTemplate fills a rule template. Values are already display-safe.
func renderTemplate(tmpl string, vars map[string]string) string {
	if !strings.Contains(tmpl, "{") {
		return tmpl
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		b.WriteString(tmpl[:i])
		key := tmpl[i+1 : i+j]
		if v, ok := vars[key]; ok {
			b.WriteString(v)
		} else {
			b.WriteString(tmpl[i : i+j+1])
		}
		tmpl = tmpl[i+j+1:]
	}
}
