package contract

import (
	"encoding/json"
	"fmt"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"strings"
)

// Human descriptions of a report. Server text is attacker-controlled: names
// and values go through SanitizeText, messages (built from sanitized parts)
// through SafeText, so no control, bidi or invisible character reaches a
// terminal or a rendered pull-request comment.

// Limits of the one-line description.
const (
	oneLineNames    = 5  // names listed per group before "+N more"
	oneLineBriefs   = 3  // changes listed per subject before "+N more"
	oneLineSegments = 10 // segments before "+N more"
)

// OneLine describes the report in one line, worst first: removed, renamed
// and breaking-changed definitions lead, then spec generation, transport and
// version changes, then warnings, then added definitions and capabilities,
// then a count of the rest. "no changes" when empty.
func (r *Report) OneLine() string {
	if r.Empty() {
		return "no changes"
	}
	var segs []string
	used := make([]bool, len(r.Changes))
	take := func(pred func(Change) bool) []Change {
		var out []Change
		for i, c := range r.Changes {
			if !used[i] && pred(c) {
				used[i] = true
				out = append(out, c)
			}
		}
		return out
	}
	sevIs := func(s Severity) func(Change) bool { return func(c Change) bool { return c.Severity == s } }
	and := func(a, b func(Change) bool) func(Change) bool { return func(c Change) bool { return a(c) && b(c) } }
	versions := func(c Change) bool {
		switch c.Rule {
		case "server.spec_generation.changed", "server.transport.changed", "server.protocol_version.changed", "server.version.changed":
			return true
		}
		return false
	}
	for _, sev := range [...]Severity{Breaking, Warning} {
		if sev == Warning {
			segs = append(segs, subjectGroups(take(versions))...)
		}
		segs = append(segs, nameGroups("removed", take(and(sevIs(sev), Change.RemovesDefinition)))...)
		segs = append(segs, renameGroups(take(and(sevIs(sev), ruleIs(RuleToolRenamed))))...)
		segs = append(segs, subjectGroups(take(sevIs(sev)))...)
	}
	segs = append(segs, nameGroups("added", take(func(c Change) bool {
		return c.Rule == c.Subject.rule(defAdded) || c.Rule == c.Subject.rule(defAddedSuspicious)
	}))...)
	if caps := take(ruleIs(RuleCapabilityAdded)); len(caps) > 0 {
		segs = append(segs, "added capabilities ("+listNames(caps, func(c Change) string { return paramOf(c) })+")")
	}
	var rest []string
	for _, sev := range [...]Severity{Compatible, Info} {
		if n := len(take(sevIs(sev))); n > 0 {
			rest = append(rest, fmt.Sprintf("+%d %s", n, sev))
		}
	}
	if len(rest) > 0 {
		segs = append(segs, strings.Join(rest, ", "))
	}
	if len(segs) > oneLineSegments {
		segs = append(segs[:oneLineSegments], fmt.Sprintf("+%d more", len(segs)-oneLineSegments))
	}
	return strings.Join(segs, "; ")
}

func ruleIs(id RuleID) func(Change) bool { return func(c Change) bool { return c.Rule == id } }

// RemovesDefinition reports a change that removes a whole definition:
// tool.removed, prompt.removed and the like.
func (c Change) RemovesDefinition() bool {
	return c.Subject != KindServer && c.Rule == c.Subject.rule(defRemoved)
}

// Noun names the kind in prose, for n of them: "tool", "resource templates".
func (subject Kind) Noun(n int) string {
	word := strings.ReplaceAll(string(subject), "_", " ")
	if n != 1 {
		word += "s"
	}
	return word
}

// nameGroups renders "removed 2 tools (a, b)" per subject kind.
func nameGroups(verb string, cs []Change) []string {
	var segs []string
	for _, subject := range [...]Kind{KindTool, KindPrompt, KindResourceTemplate, KindResource} {
		var group []Change
		for _, c := range cs {
			if c.Subject == subject {
				group = append(group, c)
			}
		}
		if len(group) > 0 {
			segs = append(segs, fmt.Sprintf("%s %d %s (%s)", verb, len(group), subject.Noun(len(group)), listNames(group, func(c Change) string { return SanitizeText(c.Name) })))
		}
	}
	return segs
}

func renameGroups(cs []Change) []string {
	if len(cs) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("renamed %d %s (%s)", len(cs), KindTool.Noun(len(cs)), listNames(cs, func(c Change) string {
		return SanitizeText(c.Name) + "→" + SanitizeText(jsonText(c.After))
	}))}
}

func listNames(cs []Change, name func(Change) string) string {
	var names []string
	for i, c := range cs {
		if i == oneLineNames {
			names = append(names, fmt.Sprintf("+%d more", len(cs)-oneLineNames))
			break
		}
		names = append(names, name(c))
	}
	return strings.Join(names, ", ")
}

// subjectGroups renders "search: brief, brief" per subject, in order of
// first appearance; server-level briefs stand alone.
func subjectGroups(cs []Change) []string {
	type group struct {
		label  string
		briefs []string
	}
	var groups []*group
	index := map[string]*group{}
	for _, c := range cs {
		label := ""
		if c.Subject != KindServer {
			label = SanitizeText(c.Name)
			if c.Subject != KindTool {
				label = c.Subject.Noun(1) + " " + label
			}
		}
		g := index[string(c.Subject)+"\x00"+c.Name]
		if g == nil {
			g = &group{label: label}
			index[string(c.Subject)+"\x00"+c.Name] = g
			groups = append(groups, g)
		}
		g.briefs = append(g.briefs, c.Brief())
	}
	// Subjects with the same changes share one segment:
	// "echo, get-env: description changed".
	type merged struct {
		labels []string
		briefs []string
	}
	var order []*merged
	byBriefs := map[string]*merged{}
	for _, g := range groups {
		key := strings.Join(g.briefs, "\x00")
		m := byBriefs[key]
		if m == nil || g.label == "" {
			m = &merged{briefs: g.briefs}
			byBriefs[key] = m
			order = append(order, m)
		}
		if g.label != "" {
			m.labels = append(m.labels, g.label)
		}
	}
	var segs []string
	for _, m := range order {
		briefs := m.briefs
		if len(briefs) > oneLineBriefs {
			briefs = append(briefs[:oneLineBriefs:oneLineBriefs], fmt.Sprintf("+%d more", len(m.briefs)-oneLineBriefs))
		}
		text := strings.Join(briefs, ", ")
		if len(m.labels) > 0 {
			labels := m.labels
			if len(labels) > oneLineNames {
				labels = append(labels[:oneLineNames:oneLineNames], fmt.Sprintf("+%d more", len(m.labels)-oneLineNames))
			}
			text = strings.Join(labels, ", ") + ": " + text
		}
		segs = append(segs, text)
	}
	return segs
}

// Brief is the change's one-line fragment ("description changed"), made
// safe for display; changes decoded from JSON have none, so the message
// stands in.
func (c Change) Brief() string {
	if c.brief != "" {
		return SafeText(c.brief)
	}
	return SafeText(c.Message)
}

// paramOf is the capability name of a capability change.
func paramOf(c Change) string {
	return strings.ReplaceAll(strings.TrimPrefix(c.Path, "/capabilities/"), "/", ".")
}

// jsonText returns the string a JSON string holds, or the JSON text.
func jsonText(raw json.RawMessage) string {
	if s, ok := canon.UnquoteKey(raw); ok { // exact: a name may hold an unpaired surrogate
		return s
	}
	return string(raw)
}

// String is "2 breaking, 1 warning, 0 compatible, 3 info".
func (s Summary) String() string {
	parts := make([]string, 0, 4)
	for _, sev := range worstFirst {
		parts = append(parts, fmt.Sprintf("%d %s", s.Count(sev), sev))
	}
	return strings.Join(parts, ", ")
}
