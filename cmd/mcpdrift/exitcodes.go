package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Exit codes. exitCodes below is the only description of what they mean:
// the root help, each command's help and the README's table are rendered
// from it (TestExitCodesREADME keeps the README current).
const (
	exitOK     = 0
	exitDrift  = 1
	exitUsage  = 2
	exitInput  = 3
	exitProbe  = 4
	exitOutput = 5
	// The control plane commands (status, history, impact, accept).
	exitUnreachable = 6
	exitNotFound    = 7
	exitConflict    = 8
	exitKept        = 9 // unwrap: entries left wrapped
)

// exitCode is one row of the exit status table. A new command adds its name
// to the rows it can exit with; a new kind of outcome gets a new code, never
// a second meaning of an old one.
type exitCode struct {
	code     int
	name     string
	commands []string // nil: every command
	meaning  string
}

var exitCodes = []exitCode{
	{exitOK, "ok", nil,
		"success; diff and check: no change at or above --fail-on (default breaking), or check --update wrote the lock; replay: no answer at or above --fail-on; status: every server UP or PENDING"},
	{exitDrift, "drift", []string{"diff", "check", "replay", "status", "approve"},
		"a change at or above --fail-on (the report lists every change); replay: an answer at or above --fail-on (default accepted); status: a server is DRIFTED, a drift waits for an operator (mcpdrift accept); approve: the changes were not approved, the lock is unchanged"},
	{exitUsage, "usage", nil,
		"the command line is wrong: an unknown command or flag, a wrong number of arguments, an invalid flag value, a policy (--policy, --config) that cannot be read or used, replay without --yes-call-tools, approve with changes to approve but no terminal to ask and no --yes, or a parameter the control plane refused (400)"},
	{exitInput, "input", []string{"hash", "diff", "check", "replay", "approve", "wrap", "unwrap"},
		"an input cannot be used: a contract file or lock that is missing, unreadable, over a limit, not JSON, or whose digests cannot be computed (the message names the definition and the reason); wrap, unwrap: a FILE that is not an MCP client configuration (line:column; the file is left as it is)"},
	{exitProbe, "probe", []string{"snapshot", "check", "replay", "status", "approve", "proxy"},
		"the server could not be probed: the message names the error class (unreachable, timeout, auth_required, ...) and the step, with a stdio server's stderr tail; a failed probe is never drift; status: a server is DOWN, its last probe failed (takes precedence over 1); proxy: the server could not be started or reached"},
	{exitOutput, "output", nil,
		"the result could not be written: -o FILE, --output, the lock (check --update, approve), a configuration and its backup (wrap, unwrap) or standard output"},
	{exitUnreachable, "unreachable", []string{"status", "history", "impact", "accept"},
		"the control plane did not answer usably: connection refused or timed out, unauthorized (401: set --token), the part of the API unavailable (503: no receiver or processor registered), a server error, or a response that is not the API's JSON"},
	{exitNotFound, "not_found", []string{"history", "impact", "accept"},
		"the control plane knows no such server, tool or drift (404)"},
	{exitConflict, "conflict", []string{"accept"},
		"nothing to accept, or --drift is not the newest open drift (409)"},
	{exitKept, "kept", []string{"unwrap"},
		"an entry edited since it was wrapped was left wrapped, named with the reason (--force restores it anyway)"},
}

// exitError carries an exit code up to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func inputError(err error) error { return &exitError{code: exitInput, err: err} }
func probeError(err error) error { return &exitError{code: exitProbe, err: err} }

// outputError is nil for a nil err, so writes can return it directly.
func outputError(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: exitOutput, err: err}
}

// exitName is the table's name of the code err exits with.
func exitName(err error) string {
	code := exitUsage
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	for _, c := range exitCodes {
		if c.code == code {
			return c.name
		}
	}
	return "error"
}

// appliesTo reports whether a command can exit with c ("" asks for all).
func (c exitCode) appliesTo(command string) bool {
	return command == "" || c.commands == nil || slices.Contains(c.commands, command)
}

// exitStatusHelp is the "Exit status" paragraph of a command's help (of
// the root command for ""): the table's rows that apply to it.
func exitStatusHelp(command string) string {
	// The name column is as wide as the longest name plus two spaces, so a
	// long name (unreachable) never runs into its meaning.
	width := 0
	for _, c := range exitCodes {
		width = max(width, len(c.name)+2)
	}
	indent := strings.Repeat(" ", 5+width)
	var b strings.Builder
	b.WriteString("Exit status:\n")
	for _, c := range exitCodes {
		if c.appliesTo(command) {
			fmt.Fprintf(&b, "  %d  %-*s%s\n", c.code, width, c.name, wrap(c.meaning, 79-len(indent), indent))
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// exitCodesMarkdown is the README's table.
func exitCodesMarkdown() string {
	var b strings.Builder
	b.WriteString("| exit | name | commands | when |\n| --- | --- | --- | --- |\n")
	for _, c := range exitCodes {
		cmds := "all"
		if c.commands != nil {
			cmds = "`" + strings.Join(c.commands, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", c.code, c.name, cmds, markdownFlags(c.meaning))
	}
	return b.String()
}

// markdownFlags writes flags as code.
func markdownFlags(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		lead := strings.TrimLeft(w, "(")
		core := strings.TrimRight(lead, ",;)")
		if len(core) > 1 && core[0] == '-' {
			words[i] = w[:len(w)-len(lead)] + "`" + core + "`" + lead[len(core):]
		}
	}
	return strings.Join(words, " ")
}

// wrap breaks s into lines of at most width bytes, indenting every line
// after the first.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		if i > 0 && n+1+len(w) > width {
			b.WriteString("\n" + indent)
			n = 0
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
