package render

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract"
)

// Rendering of witnesses in the text and Markdown reports. Witness values
// hold server text (enum members, property names) and reasons quote it:
// everything passes through the same escaping as the rest of the report.

// witnessValueLimit bounds a witness value in the reports.
const witnessValueLimit = 400

// witnessShown reports whether a change's witness appears in the human
// reports: every witness found, and the reason there is none for a
// breaking change.
func witnessShown(c contract.Change) bool {
	return c.Witness.Found() || c.Witness != nil && c.Witness.None != "" && c.Severity == contract.Breaking
}

func witnessValue(raw json.RawMessage) string {
	text, _ := displayFull(raw, witnessValueLimit)
	return text
}

// writeWitnessText writes the witness lines of one change in the text report.
func writeWitnessText(b *strings.Builder, c contract.Change) {
	if !witnessShown(c) {
		return
	}
	w := c.Witness
	if !w.Found() {
		fmt.Fprintf(b, "      WITNESS: none (%s)\n", contract.SafeText(w.None))
		return
	}
	fmt.Fprintf(b, "      WITNESS: %s %s\n", w.ValueKind(), witnessValue(w.Value()))
	fmt.Fprintf(b, "               old: %s\n               new: %s\n", contract.SanitizeText(w.Old), contract.SanitizeText(w.New))
}

// markdownWitnessRows bounds the witness table of a pull-request comment.
const markdownWitnessRows = 50

// writeWitnessMarkdown writes the witness section of the Markdown report:
// one row per change whose witness is shown.
func writeWitnessMarkdown(b *strings.Builder, r *contract.Report) {
	var rows []contract.Change
	for _, c := range r.Changes {
		if witnessShown(c) {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n#### Witnesses\n\nValues the old schema accepts and the new one rejects (for a loosening, the reverse), as a JSON Schema validator judged them; for a removed or renamed tool, the smallest old call.\n\n")
	b.WriteString("| Subject | Change | Value | Old | New |\n| --- | --- | --- | --- | --- |\n")
	for i, c := range rows {
		if i == markdownWitnessRows {
			fmt.Fprintf(b, "\n%d more in the JSON report.\n", len(rows)-markdownWitnessRows)
			break
		}
		subject := c.Subject.Noun(1)
		if c.Name != "" {
			subject += " " + mdCode(contract.SanitizeText(c.Name))
		}
		w := c.Witness
		if !w.Found() {
			fmt.Fprintf(b, "| %s | %s | no witness | | %s |\n", subject, mdCode(contract.SafeText(string(c.Rule))), mdText(contract.SafeText(w.None)))
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s %s | %s | %s |\n", subject, mdCode(contract.SafeText(string(c.Rule))), w.ValueKind(),
			mdCode(witnessValue(w.Value())), mdCode(contract.SanitizeText(w.Old)), mdCode(contract.SanitizeText(w.New)))
	}
}
