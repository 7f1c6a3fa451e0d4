// Package render formats a contract.Report in every output format, each a
// Formatter from New: the terminal report (text), a pull-request comment
// (markdown), the report as JSON, SARIF 2.1.0 for code scanning and GitHub
// workflow-command annotations; and the rules reference docs/rules.md
// (RulesMarkdown). The classifier (package contract) builds each change's
// message and one-line description; formats live here, apart from it, as
// oasdiff keeps its formatters apart from its checker. Server text is
// attacker-controlled: every format escapes it (contract.SanitizeText,
// contract.SafeText) so no control, bidi or invisible character reaches a
// terminal, a rendered comment or a workflow command.
package render
