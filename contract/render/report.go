package render

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/canon"
)

// displayFull renders a value for BEFORE/AFTER: strings quoted with
// escapes, other JSON as compact text; absent as "(absent)".
func displayFull(raw json.RawMessage, limit int) (string, bool) {
	if raw == nil {
		return "(absent)", false
	}
	if s, ok := canon.UnquoteKey(raw); ok {
		cut := utf8.RuneCountInString(s) > limit
		return contract.QuoteForDisplay(contract.TruncateRunes(s, limit)), cut
	}
	text := string(raw)
	cut := utf8.RuneCountInString(text) > limit
	return contract.SafeText(contract.TruncateRunes(text, limit)), cut
}

// subjectLabel is "tool search", "server", "resource file:///x".
func subjectLabel(c contract.Change) string {
	if c.Subject == contract.KindServer || c.Name == "" {
		return c.Subject.Noun(1)
	}
	return c.Subject.Noun(1) + " " + contract.SanitizeText(c.Name)
}

// textValueLimit bounds BEFORE/AFTER values in the terminal report.
const textValueLimit = 2000

// Text is the multi-line report for terminals: a summary, the one-line
// description, then every change grouped by severity with BEFORE and AFTER.
func Text(r *contract.Report) string {
	var b strings.Builder
	if r.Empty() {
		return "mcpdrift: no changes\n"
	}
	fmt.Fprintf(&b, "mcpdrift: %s (%s)\n%s\n", r.Worst(), r.Summary().String(), r.OneLine())
	b.WriteString(TextChanges(r))
	return b.String()
}

// TextChanges is the part of Text after its summary: every change grouped
// by severity with BEFORE and AFTER (for a caller that writes its own
// summary, as mcpdrift history does with the drift's description).
func TextChanges(r *contract.Report) string {
	var b strings.Builder
	current := contract.None
	for _, c := range r.Changes {
		if c.Severity != current {
			current = c.Severity
			fmt.Fprintf(&b, "\n%s\n", strings.ToUpper(current.String()))
		}
		brief := c.Brief()
		fmt.Fprintf(&b, "  %s: %s  [%s]\n", subjectLabel(c), brief, contract.SafeText(string(c.Rule)))
		// A change read back from JSON has no brief of its own: Brief is
		// then the message, said once.
		if msg := contract.SafeText(c.Message); msg != brief {
			fmt.Fprintf(&b, "      %s\n", msg)
		}
		if c.Path != "" {
			fmt.Fprintf(&b, "      path:   %s\n", contract.SanitizeText(c.Path))
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
func Markdown(r *contract.Report) string {
	var b strings.Builder
	if r.Empty() {
		return "### MCP contract drift: none\n\nNo changes.\n"
	}
	s := r.Summary()
	fmt.Fprintf(&b, "### MCP contract drift: %s\n\n", r.Worst())
	fmt.Fprintf(&b, "**%d breaking** · %d warning · %d compatible · %d info\n\n", s.Breaking, s.Warning, s.Compatible, s.Info)
	fmt.Fprintf(&b, "> %s\n\n", mdText(r.OneLine()))
	b.WriteString("| Severity | Subject | Path | Change | Before | After |\n| --- | --- | --- | --- | --- | --- |\n")
	var long []contract.Change
	for _, c := range r.Changes {
		before, cutB := displayFull(c.Before, markdownValueLimit)
		after, cutA := displayFull(c.After, markdownValueLimit)
		if cutB || cutA {
			long = append(long, c)
		}
		subject := c.Subject.Noun(1)
		if c.Name != "" {
			subject += " " + mdCode(contract.SanitizeText(c.Name))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s<br>%s | %s | %s |\n",
			c.Severity, subject, mdCode(contract.SanitizeText(c.Path)), mdText(contract.SafeText(c.Message)), mdCode(contract.SafeText(string(c.Rule))), mdCode(before), mdCode(after))
	}
	writeWitnessMarkdown(&b, r)
	if len(long) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>Full values of %d long changes</summary>\n\n", len(long))
		for _, c := range long {
			fmt.Fprintf(&b, "**%s** %s %s\n\n", mdText(subjectLabel(c)), mdCode(contract.SanitizeText(c.Path)), mdCode(contract.SafeText(string(c.Rule))))
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
