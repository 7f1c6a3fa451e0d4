package render

import (
	"fmt"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract"
)

//go:generate go test -run ^TestRulesDoc$ -update .

// RulesMarkdown renders the rule table and the suspicious-text heuristics as
// the reference docs/rules.md. The file is generated (go generate
// ./contract/render) and a test fails when it disagrees with the table.
func RulesMarkdown() string {
	var b strings.Builder
	b.WriteString(`# Drift rules

<!-- Generated from the rule table in contract/rules.go by "go generate ./contract/render". Do not edit. -->

Every change ` + "`mcpdrift diff`" + `, the receiver and the processor report carries one of these
stable rule IDs. Severities are those of the named policies (see [diff.md](diff.md) for
policies, overrides and ignore rules). Schema rules exist per direction: ` + "`input.*`" + `
for a tool's ` + "`inputSchema`" + ` (what the server accepts: narrowing breaks callers), ` + "`output.*`" + `
for its ` + "`outputSchema`" + ` (what it emits: widening breaks consumers).

`)
	strict, _ := contract.NamedPolicy(contract.PolicyStrict)
	lenient, _ := contract.NamedPolicy(contract.PolicyLenient)
	sections := []struct{ title, prefix string }{
		{"Tools", "tool."},
		{"Input schemas", "input."},
		{"Output schemas", "output."},
		{"Prompts", "prompt."},
		{"Resource templates", "resource_template."},
		{"Resources", "resource."},
		{"Capabilities", "capability."},
		{"Server", "server."},
	}
	for _, s := range sections {
		fmt.Fprintf(&b, "## %s\n\n| rule | default | strict | lenient | when |\n| --- | --- | --- | --- | --- |\n", s.title)
		for _, r := range contract.Rules() {
			if !strings.HasPrefix(string(r.ID), s.prefix) {
				continue
			}
			st, _ := strict.Severity(r.ID)
			le, _ := lenient.Severity(r.ID)
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.ID, r.Severity, st, le, strings.ReplaceAll(r.When, "|", `\|`))
		}
		b.WriteString("\n")
	}
	b.WriteString(`## Suspicious-text heuristics

A description or instructions text that is new or changed and has a hit that the old text did
not have (same heuristic, same matched text) is reported by the ` + "`*.suspicious`" + ` rule of its
subject; a definition added with hits by ` + "`*.added_suspicious`" + `. Each change names its hits.
` + "`contract.ScanText`" + ` runs the same table over any text.

| heuristic | matches |
| --- | --- |
`)
	for _, h := range contract.Heuristics() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", h.ID, strings.ReplaceAll(h.Description, "|", `\|`))
	}
	return b.String()
}
