package replay

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract"
)

// Report is a replay's results with the threshold they were gated on.
type Report struct {
	// Server names the server called (its logical name or endpoint).
	Server string
	// Threshold is the --fail-on outcome ("" for none).
	Threshold Outcome
	Results   []Result
}

// NewReport grades results against a threshold.
func NewReport(server string, threshold Outcome, results []Result) *Report {
	r := &Report{Server: server, Threshold: threshold, Results: results}
	for i := range r.Results {
		r.Results[i].Fails = r.Results[i].Reaches(threshold)
	}
	return r
}

// Fails reports whether a result reached the threshold.
func (r *Report) Fails() bool {
	for _, res := range r.Results {
		if res.Fails {
			return true
		}
	}
	return false
}

// Counts counts results per outcome.
func (r *Report) Counts() map[Outcome]int {
	m := map[Outcome]int{}
	for _, o := range append(FailOnValues, Skipped) {
		m[o] = 0
	}
	for _, res := range r.Results {
		m[res.Outcome]++
	}
	return m
}

// summary is "2 graceful, 1 protocol_error, ...".
func (r *Report) summary() string {
	counts := r.Counts()
	var parts []string
	for _, o := range append(FailOnValues, Skipped) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[o], o))
	}
	return strings.Join(parts, ", ")
}

func (r *Report) thresholdText() string {
	if r.Threshold == "" {
		return "none"
	}
	return string(r.Threshold)
}

// MarshalJSON writes {"server", "fail_on", "fails", "summary", "results"}.
func (r *Report) MarshalJSON() ([]byte, error) {
	counts := map[string]int{}
	for o, n := range r.Counts() {
		counts[string(o)] = n
	}
	results := r.Results
	if results == nil {
		results = []Result{}
	}
	return json.Marshal(struct {
		Server  string         `json:"server"`
		FailOn  string         `json:"fail_on"`
		Fails   bool           `json:"fails"`
		Summary map[string]int `json:"summary"`
		Results []Result       `json:"results"`
	}{r.Server, r.thresholdText(), r.Fails(), counts, results})
}

// PlanText lists the calls a replay will make, for printing before it
// makes them.
func PlanText(server string, calls []Call) string {
	var b strings.Builder
	send := 0
	for _, c := range calls {
		if c.Skip == "" {
			send++
		}
	}
	fmt.Fprintf(&b, "mcpdrift replay: %d old calls planned against %s, %d to send (tools/call has side effects: use a test deployment)\n",
		len(calls), contract.SanitizeText(server), send)
	for _, c := range calls {
		fmt.Fprintf(&b, "  %s(%s)  expect %s  [%s]", contract.SanitizeText(c.Tool), argsText(c.Arguments), c.Expect, ruleList(c.Rules))
		if c.Skip != "" {
			fmt.Fprintf(&b, "  SKIPPED: %s", c.Skip)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// argsLimit bounds arguments shown in reports.
const argsLimit = 200

func argsText(raw json.RawMessage) string {
	s := string(raw)
	if len(s) > argsLimit {
		s = s[:argsLimit] + "…"
	}
	return contract.SanitizeText(s)
}

// Text is the report for terminals.
func (r *Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcpdrift replay: %d old calls to %s (%s); --fail-on %s: %s\n",
		len(r.Results), contract.SanitizeText(r.Server), r.summary(), r.thresholdText(), map[bool]string{true: "FAIL", false: "pass"}[r.Fails()])
	for _, res := range r.Results {
		mark := " "
		if res.Fails {
			mark = "!"
		}
		fmt.Fprintf(&b, "\n%s %-14s %s(%s)\n", mark, res.Outcome, contract.SanitizeText(res.Tool), argsText(res.Arguments))
		fmt.Fprintf(&b, "  %-14s %s (%s); the new contract: %s\n", "", ruleList(res.Rules), res.Severity, contract.SanitizeText(res.Why))
		if res.Detail != "" {
			fmt.Fprintf(&b, "  %-14s answer: %s\n", "", contract.SanitizeText(res.Detail))
		}
		fmt.Fprintf(&b, "  %-14s %s\n", "", res.Verdict)
	}
	return b.String()
}

// Markdown is the report for a pull-request comment or a job summary.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### MCP replay: %d old calls, %s\n\n", len(r.Results), map[bool]string{true: "FAIL", false: "pass"}[r.Fails()])
	fmt.Fprintf(&b, "%s against `%s`; `--fail-on %s`.\n\n", r.summary(), strings.ReplaceAll(contract.SanitizeText(r.Server), "`", "'"), r.thresholdText())
	if len(r.Results) == 0 {
		b.WriteString("No changed tool to call.\n")
		return b.String()
	}
	b.WriteString("| Outcome | Call | Changes | New contract | Answer |\n| --- | --- | --- | --- | --- |\n")
	for _, res := range r.Results {
		outcome := string(res.Outcome)
		if res.Fails {
			outcome = "**" + outcome + "** ❌"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", outcome,
			mdCell(contract.SanitizeText(res.Tool)+"("+argsText(res.Arguments)+")"),
			mdCell(ruleList(res.Rules)), mdCell(contract.SanitizeText(res.Why)),
			mdCell(strings.TrimSpace(contract.SanitizeText(res.Detail)+" — "+res.Verdict)))
	}
	return b.String()
}

// mdCell renders text as a code span safe in a table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "`", "'")
	return "`" + s + "`"
}

// ruleList joins rule ids for a report line.
func ruleList(ids []contract.RuleID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, ", ")
}
