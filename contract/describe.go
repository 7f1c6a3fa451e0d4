package contract

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Human descriptions of a report. Server text is attacker-controlled: names
// and values go through SanitizeText, messages (built from sanitized parts)
// through safeText, so no control, bidi or invisible character reaches a
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
		segs = append(segs, nameGroups("removed", take(and(sevIs(sev), definitionRemoved)))...)
		segs = append(segs, renameGroups(take(and(sevIs(sev), ruleIs("tool.renamed"))))...)
		segs = append(segs, subjectGroups(take(sevIs(sev)))...)
	}
	segs = append(segs, nameGroups("added", take(func(c Change) bool {
		return c.Rule == c.Subject+".added" || c.Rule == c.Subject+".added_suspicious"
	}))...)
	if caps := take(ruleIs("capability.added")); len(caps) > 0 {
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

func ruleIs(id string) func(Change) bool { return func(c Change) bool { return c.Rule == id } }

// definitionRemoved matches tool.removed, prompt.removed and the like.
func definitionRemoved(c Change) bool {
	return c.Subject != SubjectServer && c.Rule == c.Subject+".removed"
}

// nouns names subjects in the one-line description.
func noun(subject string, n int) string {
	word := strings.ReplaceAll(subject, "_", " ")
	if n != 1 {
		word += "s"
	}
	return word
}

// nameGroups renders "removed 2 tools (a, b)" per subject kind.
func nameGroups(verb string, cs []Change) []string {
	var segs []string
	for _, subject := range [...]string{SubjectTool, SubjectPrompt, SubjectResourceTemplate, SubjectResource} {
		var group []Change
		for _, c := range cs {
			if c.Subject == subject {
				group = append(group, c)
			}
		}
		if len(group) > 0 {
			segs = append(segs, fmt.Sprintf("%s %d %s (%s)", verb, len(group), noun(subject, len(group)), listNames(group, func(c Change) string { return SanitizeText(c.Name) })))
		}
	}
	return segs
}

func renameGroups(cs []Change) []string {
	if len(cs) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("renamed %d %s (%s)", len(cs), noun(SubjectTool, len(cs)), listNames(cs, func(c Change) string {
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
		if c.Subject != SubjectServer {
			label = SanitizeText(c.Name)
			if c.Subject != SubjectTool {
				label = noun(c.Subject, 1) + " " + label
			}
		}
		g := index[c.Subject+"\x00"+c.Name]
		if g == nil {
			g = &group{label: label}
			index[c.Subject+"\x00"+c.Name] = g
			groups = append(groups, g)
		}
		g.briefs = append(g.briefs, briefOf(c))
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

// briefOf is the change's one-line fragment; changes decoded from JSON have
// none, so the message stands in.
func briefOf(c Change) string {
	if c.brief != "" {
		return safeText(c.brief)
	}
	return safeText(c.Message)
}

// paramOf is the capability name of a capability change.
func paramOf(c Change) string {
	return strings.ReplaceAll(strings.TrimPrefix(c.Path, "/capabilities/"), "/", ".")
}

// jsonText returns the string a JSON string holds, or the JSON text.
func jsonText(raw json.RawMessage) string {
	if s, ok := UnquoteKey(raw); ok { // exact: a name may hold an unpaired surrogate
		return s
	}
	return string(raw)
}

// displayFull renders a value for BEFORE/AFTER: strings quoted with
// escapes, other JSON as compact text; absent as "(absent)".
func displayFull(raw json.RawMessage, limit int) (string, bool) {
	if raw == nil {
		return "(absent)", false
	}
	if s, ok := UnquoteKey(raw); ok {
		cut := utf8.RuneCountInString(s) > limit
		return QuoteForDisplay(truncateRunes(s, limit)), cut
	}
	text := string(raw)
	cut := utf8.RuneCountInString(text) > limit
	return safeText(truncateRunes(text, limit)), cut
}

// safeText escapes control, bidi and invisible characters (and bytes that
// are not UTF-8) but, unlike SanitizeText, leaves backslashes alone: it is
// for text that was built from already sanitized parts, or JSON text, whose
// backslashes are escapes of their own.
func safeText(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || needsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x{%X}`, s[i])
		case needsEscape(r):
			fmt.Fprintf(&b, `\u{%X}`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// subjectLabel is "tool search", "server", "resource file:///x".
func subjectLabel(c Change) string {
	if c.Subject == SubjectServer || c.Name == "" {
		return noun(c.Subject, 1)
	}
	return noun(c.Subject, 1) + " " + SanitizeText(c.Name)
}

// String is "2 breaking, 1 warning, 0 compatible, 3 info".
func (s Summary) String() string {
	parts := make([]string, 0, 4)
	for _, sev := range worstFirst {
		parts = append(parts, fmt.Sprintf("%d %s", s.Count(sev), sev))
	}
	return strings.Join(parts, ", ")
}

// textValueLimit bounds BEFORE/AFTER values in the terminal report.
const textValueLimit = 2000

// Text is the multi-line report for terminals: a summary, the one-line
// description, then every change grouped by severity with BEFORE and AFTER.
func (r *Report) Text() string {
	var b strings.Builder
	if r.Empty() {
		return "mcpdrift: no changes\n"
	}
	fmt.Fprintf(&b, "mcpdrift: %s (%s)\n%s\n", r.Worst(), r.Summary().String(), r.OneLine())
	current := None
	for _, c := range r.Changes {
		if c.Severity != current {
			current = c.Severity
			fmt.Fprintf(&b, "\n%s\n", strings.ToUpper(current.String()))
		}
		fmt.Fprintf(&b, "  %s: %s  [%s]\n", subjectLabel(c), briefOf(c), safeText(c.Rule))
		fmt.Fprintf(&b, "      %s\n", safeText(c.Message))
		if c.Path != "" {
			fmt.Fprintf(&b, "      path:   %s\n", SanitizeText(c.Path))
		}
		before, _ := displayFull(c.Before, textValueLimit)
		after, _ := displayFull(c.After, textValueLimit)
		fmt.Fprintf(&b, "      BEFORE: %s\n      AFTER:  %s\n", before, after)
		writeWitnessText(&b, c)
	}
	return b.String()
}

// markdownValueLimit bounds values in the Markdown table; longer values are
// shown whole in a collapsed section below it.
const markdownValueLimit = 80

// Markdown renders the report for a pull-request comment: a heading with the
// worst severity, counts, the one-line description, a table of changes and
// the full values of long ones in a collapsed section.
func (r *Report) Markdown() string {
	var b strings.Builder
	if r.Empty() {
		return "### MCP contract drift: none\n\nNo changes.\n"
	}
	s := r.Summary()
	fmt.Fprintf(&b, "### MCP contract drift: %s\n\n", r.Worst())
	fmt.Fprintf(&b, "**%d breaking** · %d warning · %d compatible · %d info\n\n", s.Breaking, s.Warning, s.Compatible, s.Info)
	fmt.Fprintf(&b, "> %s\n\n", mdText(r.OneLine()))
	b.WriteString("| Severity | Subject | Path | Change | Before | After |\n| --- | --- | --- | --- | --- | --- |\n")
	var long []Change
	for _, c := range r.Changes {
		before, cutB := displayFull(c.Before, markdownValueLimit)
		after, cutA := displayFull(c.After, markdownValueLimit)
		if cutB || cutA {
			long = append(long, c)
		}
		subject := noun(c.Subject, 1)
		if c.Name != "" {
			subject += " " + mdCode(SanitizeText(c.Name))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s<br>%s | %s | %s |\n",
			c.Severity, subject, mdCode(SanitizeText(c.Path)), mdText(safeText(c.Message)), mdCode(safeText(c.Rule)), mdCode(before), mdCode(after))
	}
	writeWitnessMarkdown(&b, r)
	if len(long) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>Full values of %d long changes</summary>\n\n", len(long))
		for _, c := range long {
			fmt.Fprintf(&b, "**%s** %s %s\n\n", mdText(subjectLabel(c)), mdCode(SanitizeText(c.Path)), mdCode(safeText(c.Rule)))
			for _, side := range [...]struct {
				label string
				raw   json.RawMessage
			}{{"BEFORE", c.Before}, {"AFTER", c.After}} {
				text, _ := displayFull(side.raw, 1<<20)
				fmt.Fprintf(&b, "%s:\n\n%s\n\n", side.label, mdFence(text))
			}
		}
		b.WriteString("</details>\n")
	}
	return b.String()
}

// mdText escapes Markdown and HTML syntax in running text. The text never
// starts a line (it follows "> " or "| "), so only inline syntax matters;
// with [ and ] escaped no link can form.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '*', '_', '[', ']', '|', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode renders a code span safe inside a table cell: a fence longer than
// any backtick run inside, and pipes escaped (GitHub tables split on them
// even in code spans).
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	s = strings.ReplaceAll(s, "|", `\|`)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdFence renders a fenced code block longer than any backtick run inside.
func mdFence(s string) string {
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return fence + "text\n" + s + "\n" + fence
}

func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}
