// Package render formats a contract.Report for people: the terminal report
// (Text), a pull-request comment (Markdown), and the rules reference
// docs/rules.md (RulesMarkdown). The classifier (package contract) builds
// each change's message and one-line description; formats live here, apart
// from it, as oasdiff keeps its formatters apart from its checker. Server
// text is attacker-controlled: every format escapes it (contract.SanitizeText,
// contract.SafeText) so no control, bidi or invisible character reaches a
// terminal or a rendered comment.
package render
