// Package hostconfig rewrites the MCP server configuration of agent hosts
// (Claude Desktop, Claude Code, Cursor, VS Code, Gemini CLI, Codex CLI,
// Windsurf, Zed, Cline) so that every server is reached through
// `mcpdrift proxy`, and restores it. It edits the file in place: only the
// entries it rewrites change, byte for byte everything else (formatting,
// comments, members it does not know) stays as it was.
package hostconfig

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Containers are the members that hold the servers: mcpServers (Claude
// Desktop, Claude Code, Cursor, Gemini CLI, Windsurf, Cline), servers (VS
// Code) and context_servers (Zed). Claude Code's ~/.claude.json also keeps
// an mcpServers per project, under projects.<path>.
var Containers = []string{"mcpServers", "servers", "context_servers"}

// Options say how wrap routes servers through the proxy.
type Options struct {
	// Command is what the host runs: the path of mcpdrift, or "mcpdrift"
	// to find it on the host's PATH.
	Command string
	// ProxyFlags are proxy flags for every server (--agent-name, --on-stale,
	// --lock and their values); --server-name is added per server.
	ProxyFlags []string
	// Env is added to every wrapped entry's env (OTEL_EXPORTER_OTLP_ENDPOINT
	// and the like, which hosts that start servers with a bare environment
	// would not pass on); a variable the entry sets keeps its value.
	Env []EnvVar
	// Skip names servers to leave as they are.
	Skip []string
	// TopStash keeps what unwrap needs in one top-level x-mcpdrift member
	// rather than in each entry, for hosts that refuse unknown members in
	// an entry (Host.TopStash).
	TopStash bool
}

// AgentFlag adds --agent-name name to the proxy flags unless they have one.
func (o *Options) AgentFlag(name string) {
	if name == "" || slices.Contains(o.ProxyFlags, "--agent-name") {
		return
	}
	o.ProxyFlags = append(o.ProxyFlags, "--agent-name", name)
}

// EnvVar is one environment variable.
type EnvVar struct{ Name, Value string }

func (o Options) command() string {
	if o.Command == "" {
		return "mcpdrift"
	}
	return o.Command
}

func (o Options) proxyArgs(server string) []string {
	return append([]string{"proxy", "--server-name", server}, o.ProxyFlags...)
}

// Action is what a rewrite did to one server.
type Action string

// Actions.
const (
	Wrapped   Action = "wrapped"
	Unwrapped Action = "unwrapped"
	Skipped   Action = "skipped" // left as it is, for the reason given
	Refused   Action = "refused" // left as it is, and the user must act
)

// Outcome is what happened to one server.
type Outcome struct {
	Server string
	Scope  string // where in the file, when not the top level: "project /path" (Claude Code)
	Action Action
	Kind   string // stdio, http or sse, for wrapped servers
	Reason string // why it was skipped or refused; a caveat when wrapped
}

// Edit replaces Src[Start:End] with Text.
type Edit struct {
	Start, End int
	Text       string
}

// Result is a rewritten file.
type Result struct {
	Src, Out []byte
	Edits    []Edit // in order of Start
	Servers  []Outcome
	JSONC    bool // the file has comments or trailing commas
}

// Changed reports whether the rewrite changed anything.
func (r *Result) Changed() bool { return len(r.Edits) > 0 }

// Count returns how many servers got action a.
func (r *Result) Count(a Action) int {
	n := 0
	for _, o := range r.Servers {
		if o.Action == a {
			n++
		}
	}
	return n
}

// ErrNoServers is returned for a file without mcpServers or servers.
var ErrNoServers = errors.New(`no "mcpServers", "servers" (VS Code) or "context_servers" (Zed) object: not an MCP client configuration`)

// Wrap routes every server of the file through the proxy.
func Wrap(src []byte, o Options) (*Result, error) {
	return rewrite(src, o.Skip, func(e *entry) Outcome {
		text, kind, note, skip := e.wrap(o)
		if skip != "" {
			return Outcome{Server: e.name, Action: Skipped, Reason: skip}
		}
		e.text = text
		return Outcome{Server: e.name, Action: Wrapped, Kind: kind, Reason: note}
	})
}

// Unwrap restores the entries wrap rewrote. An entry edited since is left
// wrapped (Refused) unless force.
func Unwrap(src []byte, skip []string, force bool) (*Result, error) {
	return rewrite(src, skip, func(e *entry) Outcome {
		text, reason, refused := e.unwrap(force)
		switch {
		case refused:
			return Outcome{Server: e.name, Action: Refused, Reason: reason}
		case reason != "":
			return Outcome{Server: e.name, Action: Skipped, Reason: reason}
		}
		e.text = text
		return Outcome{Server: e.name, Action: Unwrapped}
	})
}

func rewrite(src []byte, skip []string, fn func(*entry) Outcome) (*Result, error) {
	root, jsonc, err := Parse(src)
	if err != nil {
		return nil, err
	}
	groups, err := serverGroups(src, root)
	if err != nil {
		return nil, err
	}
	res := &Result{Src: src, JSONC: jsonc}
	unit := indentUnit(src, root)
	nl := "\n"
	if bytes.Contains(src, []byte("\r\n")) {
		nl = "\r\n" // a file written on Windows
	}
	top, err := newTopStash(src, root, unit, nl)
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		for _, m := range g.node.Members {
			if slices.Contains(skip, m.Key) {
				res.Servers = append(res.Servers, Outcome{Server: m.Key, Scope: g.scope, Action: Skipped, Reason: "--skip"})
				continue
			}
			e := &entry{name: m.Key, node: m.Value, src: src, lay: entryLayout(src, m, unit, nl)}
			if g.scope == "" {
				e.top = top // the top-level stash is for the top-level servers (Gemini CLI has no others)
			}
			out := fn(e)
			out.Scope = g.scope
			res.Servers = append(res.Servers, out)
			if e.text != "" {
				res.Edits = append(res.Edits, Edit{Start: m.Value.Start, End: m.Value.End, Text: e.text})
			}
		}
	}
	if ed, ok := top.edit(src); ok {
		res.Edits = append(res.Edits, ed)
	}
	slices.SortFunc(res.Edits, func(a, b Edit) int { return a.Start - b.Start })
	res.Out = apply(src, res.Edits)
	return res, nil
}

// group is one object of servers and where it is in the file.
type group struct {
	scope string
	node  *Node
}

// serverGroups returns every object of servers in the file: the top-level
// containers, then Claude Code's per-project mcpServers.
func serverGroups(src []byte, root *Node) ([]group, error) {
	if root.Kind != '{' {
		return nil, errAt(src, root.Start, "the file is not a JSON object")
	}
	var groups []group
	for _, name := range Containers {
		c, err := container(src, root, name)
		if err != nil {
			return nil, err
		}
		if c != nil {
			groups = append(groups, group{node: c})
		}
	}
	if p := root.Get("projects"); p != nil && p.Kind == '{' {
		for _, m := range p.Members {
			if m.Value.Kind != '{' {
				continue
			}
			c, err := container(src, m.Value, "mcpServers")
			if err != nil {
				return nil, err
			}
			if c != nil {
				groups = append(groups, group{scope: "project " + m.Key, node: c})
			}
		}
	}
	if len(groups) == 0 {
		return nil, ErrNoServers
	}
	return groups, nil
}

// container returns the object of servers named name, refusing what a host
// would read differently from us: a repeated container or server name.
func container(src []byte, root *Node, name string) (*Node, error) {
	var c *Node
	for _, m := range root.Members {
		if m.Key != name {
			continue
		}
		if c != nil {
			return nil, errAt(src, m.KeyStart, fmt.Sprintf("%q appears twice", name))
		}
		c = m.Value
	}
	if c == nil {
		return nil, nil
	}
	if c.Kind != '{' {
		return nil, errAt(src, c.Start, fmt.Sprintf("%q is not an object", name))
	}
	seen := map[string]bool{}
	for _, m := range c.Members {
		if seen[m.Key] {
			return nil, errAt(src, m.KeyStart, fmt.Sprintf("server %q appears twice in %q", m.Key, name))
		}
		seen[m.Key] = true
	}
	return c, nil
}

func apply(src []byte, edits []Edit) []byte {
	var b strings.Builder
	last := 0
	for _, e := range edits {
		b.Write(src[last:e.Start])
		b.WriteString(e.Text)
		last = e.End
	}
	b.Write(src[last:])
	return []byte(b.String())
}

// indentUnit is the indentation of one level in the file: that of the first
// member of the top-level object ("" when it is on the same line).
func indentUnit(src []byte, root *Node) string {
	if len(root.Members) == 0 {
		return "  "
	}
	if ind, ok := lineIndent(src, root.Members[0].KeyStart); ok && ind != "" {
		return ind
	}
	return "  "
}

// lineIndent returns the whitespace before off on its line, and whether
// only whitespace precedes off there.
func lineIndent(src []byte, off int) (string, bool) {
	start := off
	for start > 0 && src[start-1] != '\n' {
		start--
	}
	ind := string(src[start:off])
	return ind, strings.Trim(ind, " \t") == ""
}

// entryLayout formats a rewritten entry as the original was: one member a
// line when it spanned lines, indented as its key is.
func entryLayout(src []byte, m Member, unit, nl string) layout {
	ind, ok := lineIndent(src, m.KeyStart)
	pretty := strings.Contains(string(src[m.Value.Start:m.Value.End]), "\n")
	if !ok {
		ind = ""
	}
	return layout{pretty: pretty, indent: ind, unit: unit, nl: nl}
}
