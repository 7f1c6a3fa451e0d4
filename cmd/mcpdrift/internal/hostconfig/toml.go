package hostconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex CLI keeps its servers in ~/.codex/config.toml, as tables
// [mcp_servers.NAME], as inline tables (NAME = { … } under [mcp_servers]) or
// as dotted keys (NAME.command = … under [mcp_servers], or
// mcp_servers.NAME.command = … before any table). As with JSON, the file is
// edited in place: a wrapped server's lines are replaced, written in the
// form they had, with its original lines kept verbatim in a top-level table
// [x-mcpdrift.NAME], and every other line of the file stays as it was. Not
// inside the server: Codex rewrites the whole mcp_servers table when it
// changes a server (codex mcp add), and drops the keys it does not know
// there, but keeps unknown top-level tables. The stash table follows a
// [mcp_servers.NAME] table; for the other forms it goes at the end of the
// file, since a table after their lines would end the table they are in.
// go-toml's unstable parser gives where each line lies; go-toml decodes the
// values.

const tomlServers = "mcp_servers"

// tomlItem is one table header or key/value line of the file.
type tomlItem struct {
	table      bool     // a [table] header ([[array]] headers are tables too)
	path       []string // the table's name, or the table and the key
	start, end int      // its lines: from the start of its first to after its last line break
	depth      int      // a key/value's: how many elements of path its table header names
	inline     *tomlInline
}

// tomlInline is the value of a key/value line that is an inline table.
type tomlInline struct {
	start, end int          // the value's bytes, braces included
	members    []tomlMember // its key/values, as written
}

type tomlMember struct {
	key, raw string // the first part of its key; the whole "key = value" text
}

type tomlDoc struct {
	src   []byte
	items []tomlItem
	data  map[string]any
	nl    string
}

func parseTOML(src []byte) (*tomlDoc, error) {
	d := &tomlDoc{src: src, nl: "\n"}
	if strings.Contains(string(src), "\r\n") {
		d.nl = "\r\n"
	}
	if err := toml.Unmarshal(src, &d.data); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			return nil, &SyntaxError{Line: line, Col: col, Msg: de.Error()}
		}
		return nil, err
	}
	var p unstable.Parser
	p.Reset(src)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		var keys []string
		var first, last unstable.Range
		for it := e.Key(); it.Next(); {
			k := it.Node()
			if len(keys) == 0 {
				first = k.Raw
			}
			last = k.Raw
			keys = append(keys, string(k.Data))
		}
		it := tomlItem{start: lineStart(src, int(first.Offset))}
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keys
			it.table, it.path = true, keys
			it.end = lineEnd(src, int(last.Offset+last.Length))
		case unstable.KeyValue:
			it.path, it.depth = append(slices.Clone(table), keys...), len(table)
			it.end = lineEnd(src, int(e.Raw.Offset+e.Raw.Length))
			if v := e.Value(); v.Kind == unstable.InlineTable {
				in := &tomlInline{start: int(v.Raw.Offset), end: int(e.Raw.Offset + e.Raw.Length)}
				for c := v.Children(); c.Next(); {
					if kv := c.Node(); kv.Kind == unstable.KeyValue {
						k := kv.Key()
						k.Next()
						in.members = append(in.members, tomlMember{string(k.Node().Data), string(p.Raw(kv.Raw))})
					}
				}
				it.inline = in
			}
		default:
			continue
		}
		d.items = append(d.items, it)
	}
	if err := p.Error(); err != nil { // toml.Unmarshal accepted what the parser refuses: a bug
		return nil, fmt.Errorf("reading TOML: %w", err)
	}
	return d, nil
}

func lineStart(src []byte, off int) int {
	for off > 0 && src[off-1] != '\n' {
		off--
	}
	return off
}

// lineEnd returns the offset after the line break that ends the line of
// off (after a trailing comment), or the end of the file.
func lineEnd(src []byte, off int) int {
	for off < len(src) && src[off] != '\n' {
		off++
	}
	if off < len(src) {
		off++
	}
	return off
}

func hasPrefix(path []string, prefix ...string) bool {
	return len(path) >= len(prefix) && slices.Equal(path[:len(prefix)], prefix)
}

// tomlServer is one server and the lines that define it.
type tomlServer struct {
	name       string
	value      map[string]any
	items      []tomlItem // its header, key/values and sub-tables, in order
	start, end int
	skip       string // why it cannot be edited in place

	inline *tomlInline // written NAME = { … }
	dotted string      // written as dotted keys: the prefix of each (NAME. or mcp_servers.NAME.)
	member bool        // its stash is an x-mcpdrift key inside its inline table, as wrap wrote it before v0.2

	stash                map[string]any // its [x-mcpdrift.NAME] table, if any
	stashStart, stashEnd int
	stashSkip            string // why that table cannot be edited in place
}

// servers returns the servers in the order the file names them.
func (d *tomlDoc) servers() ([]*tomlServer, error) {
	raw, ok := d.data[tomlServers]
	if !ok {
		return nil, nil
	}
	all, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%q is not a table", tomlServers)
	}
	var out []*tomlServer
	seen := map[string]*tomlServer{}
	for i := 0; i < len(d.items); i++ {
		it := d.items[i]
		if !hasPrefix(it.path, tomlServers) || len(it.path) < 2 {
			continue
		}
		name := it.path[1]
		s := seen[name]
		if s == nil {
			value, _ := all[name].(map[string]any)
			s = &tomlServer{name: name, value: value}
			seen[name] = s
			out = append(out, s)
			if value == nil {
				s.skip = "not a table"
			}
		}
		switch {
		case s.skip != "":
		case s.items != nil:
			s.skip = "its lines are not together in the file: edit it by hand"
		case !it.table && len(it.path) == 2 && it.inline != nil:
			s.items, s.inline = d.items[i:i+1], it.inline
			s.start, s.end = it.inline.start, it.inline.end // the value alone: key and comment stay
		case it.table && len(it.path) > 2:
			s.skip = fmt.Sprintf("its first lines are a sub-table [%s.NAME.…]: edit it by hand", tomlServers)
		case !it.table:
			j := i + 1
			for j < len(d.items) && !d.items[j].table && hasPrefix(d.items[j].path, tomlServers, name) {
				j++
			}
			s.items, s.dotted = d.items[i:j], tomlKey(name)+"."
			if it.depth == 0 {
				s.dotted = tomlServers + "." + s.dotted
			}
			s.start, s.end = it.start, d.items[j-1].end
			i = j - 1
		default:
			j := i + 1
			for j < len(d.items) && hasPrefix(d.items[j].path, tomlServers, name) && !(d.items[j].table && len(d.items[j].path) == 2) {
				j++
			}
			s.items = d.items[i:j]
			s.start, s.end = it.start, d.items[j-1].end
			i = j - 1
		}
	}
	stashes, _ := d.data[StashKey].(map[string]any)
	for _, s := range out {
		if x, ok := s.value[StashKey]; ok && s.inline != nil {
			s.member = true
			if s.stash, _ = x.(map[string]any); s.stash == nil {
				s.stashSkip = fmt.Sprintf("its %q key is damaged: edit it by hand", StashKey)
			}
			continue
		}
		s.stash, _ = stashes[s.name].(map[string]any)
		if s.stash == nil {
			if stashes[s.name] != nil {
				s.stashSkip = fmt.Sprintf("its [%s.NAME] table is damaged: edit it by hand", StashKey)
			}
			continue
		}
		s.stashStart, s.stashEnd, s.stashSkip = d.tableLines(StashKey, s.name)
	}
	return out, nil
}

// tableLines returns the lines of the table [key.name] and its sub-tables,
// which must be together, headed by that table.
func (d *tomlDoc) tableLines(key, name string) (start, end int, skip string) {
	start = -1
	for i, it := range d.items {
		if !hasPrefix(it.path, key, name) {
			continue
		}
		switch {
		case start >= 0 && d.items[i-1].end != end:
			return 0, 0, fmt.Sprintf("its [%s.NAME] lines are not together in the file: edit it by hand", key)
		case start < 0 && !(it.table && len(it.path) == 2):
			return 0, 0, fmt.Sprintf("its %s entry is not a [%s.NAME] table: edit it by hand", key, key)
		case start < 0:
			start = it.start
		}
		end = it.end
	}
	return start, end, ""
}

// local returns the path of an item below the server's table.
func (s *tomlServer) local(it tomlItem) []string { return it.path[2:] }

func (s *tomlServer) text(d *tomlDoc, it tomlItem) string { return string(d.src[it.start:it.end]) }

// Keys of a Codex server entry that wrap replaces; all others are kept.
var tomlWrapKeys = []string{"command", "args", "env", "env_vars", "url", "http_headers", "env_http_headers", "bearer_token_env_var", "bearer_token"}

// Keys with which a Codex server signs in through Codex (codex mcp login).
var tomlHostAuthKeys = []string{"scopes", "oauth_resource"}

func wrapTOML(src []byte, o Options) (*Result, error) {
	var tail []string // the stash tables that go at the end of the file
	return rewriteTOML(src, o.Skip, func(d *tomlDoc, s *tomlServer) ([]Edit, Outcome) {
		if s.stash != nil || s.stashSkip != "" {
			return nil, Outcome{Action: Skipped, Reason: "already wrapped"}
		}
		text, stash, out := s.wrap(d, o)
		if text == "" {
			return nil, out
		}
		if s.inline != nil || s.dotted != "" {
			tail = append(tail, stash)
		} else { // right after the table, a blank line between
			text += d.nl + stash
			if terminated(d.src[s.start:s.end]) {
				text += d.nl
			}
		}
		return []Edit{{Start: s.start, End: s.end, Text: text}}, out
	}, func(d *tomlDoc) []Edit {
		if len(tail) == 0 {
			return nil
		}
		// Each table after a blank line; a file that did not end in a
		// line break still does not.
		body := strings.Join(tail, d.nl+d.nl)
		if terminated(d.src) {
			body = d.nl + body + d.nl
		} else {
			body = d.nl + d.nl + body
		}
		return []Edit{{Start: len(d.src), End: len(d.src), Text: body}}
	})
}

func terminated(src []byte) bool { return len(src) == 0 || src[len(src)-1] == '\n' }

func unwrapTOML(src []byte, skip []string, force bool) (*Result, error) {
	var gone [][2]int // the stash tables to remove, apart from their servers
	return rewriteTOML(src, skip, func(d *tomlDoc, s *tomlServer) ([]Edit, Outcome) {
		if s.stashSkip != "" {
			return nil, Outcome{Action: Refused, Reason: s.stashSkip}
		}
		if s.stash == nil {
			if isProxyArgv(s.value) {
				return nil, Outcome{Action: Skipped, Reason: notStashed}
			}
			return nil, Outcome{Action: Skipped, Reason: "not wrapped"}
		}
		orig, ok1 := s.stash["original"].(string)
		sum, ok2 := s.stash["wrapped"].(string)
		if !ok1 || !ok2 {
			return nil, Outcome{Action: Refused, Reason: fmt.Sprintf("its [%s.NAME] table is damaged (no original or digest): edit it by hand", StashKey)}
		}
		if !force && tomlDigest(s.value) != sum {
			return nil, Outcome{Action: Refused, Reason: "it was edited after wrap, and unwrap would undo that edit: restore it by hand from its " +
				fmt.Sprintf("[%s.NAME] table, or run unwrap --force to restore the original anyway", StashKey)}
		}
		orig, reason := s.restored(d, orig)
		if reason != "" {
			return nil, Outcome{Action: Refused, Reason: reason}
		}
		// As wrap left a [mcp_servers.NAME] table, its stash follows its
		// lines: both go back to the original at once. A host that
		// rewrote the file may have put lines between them.
		if !s.member && s.form() == tomlTable && s.stashStart >= s.end && strings.TrimSpace(string(d.src[s.end:s.stashStart])) == "" {
			return []Edit{{Start: s.start, End: s.stashEnd, Text: orig}}, Outcome{Action: Unwrapped}
		}
		if !s.member {
			gone = append(gone, [2]int{s.stashStart, s.stashEnd})
		}
		return []Edit{{Start: s.start, End: s.end, Text: orig}}, Outcome{Action: Unwrapped}
	}, func(d *tomlDoc) []Edit { return tomlRemovals(d.src, gone) })
}

// The forms a server can be written in.
const (
	tomlTable      = "a [mcp_servers.NAME] table"
	tomlInlineForm = "an inline table"
	tomlDotted     = "dotted keys"
)

func (s *tomlServer) form() string {
	switch {
	case s.inline != nil:
		return tomlInlineForm
	case s.dotted != "":
		return tomlDotted
	}
	return tomlTable
}

// restored returns the text to put in place of the server's lines: its
// original, verbatim while the server is written in the form it had. A
// host may have rewritten it in another (Codex writes a server of dotted
// keys as a [mcp_servers.NAME] table): the original then goes back as such
// a table, the same keys with the same values (and comments, for dotted
// keys) — not the original form, which would not fit where the host put
// the server.
func (s *tomlServer) restored(d *tomlDoc, orig string) (string, string) {
	form, keys := tomlOriginal(orig, s.name)
	switch {
	case form == s.form():
		return orig, ""
	case s.form() != tomlTable || keys == "":
		return "", fmt.Sprintf("it is written as %s since wrap (by the host), and its original as %s: restore it by hand from its [%s.NAME] table", s.form(), form, StashKey)
	}
	text := "[" + tomlServers + "." + tomlKey(s.name) + "]" + d.nl + keys
	if terminated(d.src[s.start:s.end]) && !terminated([]byte(text)) {
		text += d.nl
	}
	return text, ""
}

// tomlOriginal says which form a server's original text has, and gives its
// keys as the lines of a [mcp_servers.NAME] table would have them ("" for
// a table, or text that does not parse).
func tomlOriginal(orig, name string) (form, keys string) {
	var p unstable.Parser
	if strings.HasPrefix(strings.TrimSpace(orig), "{") {
		src := []byte("x = " + orig)
		p.Reset(src)
		var lines []string
		for p.NextExpression() {
			if e := p.Expression(); e.Kind == unstable.KeyValue {
				for c := e.Value().Children(); c.Next(); {
					if kv := c.Node(); kv.Kind == unstable.KeyValue {
						lines = append(lines, string(p.Raw(kv.Raw)))
					}
				}
			}
		}
		if p.Error() != nil || len(lines) == 0 {
			return tomlInlineForm, ""
		}
		return tomlInlineForm, strings.Join(lines, "\n") + "\n"
	}
	// Dotted keys: each loses its NAME. (or mcp_servers.NAME.) prefix; the
	// rest of its line, and the lines between, stay as they are.
	src := []byte(orig)
	p.Reset(src)
	var cuts []Edit
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind == unstable.Table || e.Kind == unstable.ArrayTable {
			return tomlTable, ""
		}
		if e.Kind != unstable.KeyValue {
			continue
		}
		var parts []unstable.Range
		var names []string
		for it := e.Key(); it.Next(); {
			parts, names = append(parts, it.Node().Raw), append(names, string(it.Node().Data))
		}
		drop := 1
		if len(names) > 2 && names[0] == tomlServers && names[1] == name {
			drop = 2
		}
		if len(parts) <= drop {
			return tomlDotted, ""
		}
		cuts = append(cuts, Edit{Start: int(parts[0].Offset), End: int(parts[drop].Offset)})
	}
	if p.Error() != nil || len(cuts) == 0 {
		return tomlDotted, ""
	}
	return tomlDotted, string(apply(src, cuts))
}

// tomlRemovals removes stash tables (each [start, end) of its lines) and
// the blank line before each, which wrap or the host put there, so that no
// gap is left where they were. Adjacent tables go at once; when they end
// an unterminated file, so does what is left.
func tomlRemovals(src []byte, tables [][2]int) []Edit {
	var edits []Edit
	slices.SortFunc(tables, func(a, b [2]int) int { return a[0] - b[0] })
	for _, t := range tables {
		start := t[0]
		if start > 0 {
			if prev := lineStart(src, start-1); strings.TrimSpace(string(src[prev:start])) == "" {
				start = prev
			}
		}
		if n := len(edits); n > 0 && start <= edits[n-1].End {
			edits[n-1].End = max(edits[n-1].End, t[1])
			continue
		}
		edits = append(edits, Edit{Start: start, End: t[1]})
	}
	if n := len(edits); n > 0 && edits[n-1].End == len(src) && !terminated(src) {
		last := &edits[n-1]
		if last.Start > 0 && src[last.Start-1] == '\n' {
			last.Start--
			if last.Start > 0 && src[last.Start-1] == '\r' {
				last.Start--
			}
		}
	}
	return edits
}

// rewriteTOML edits each server with fn, then adds the edits finish
// returns (of the lines apart from the servers').
func rewriteTOML(src []byte, skip []string, fn func(*tomlDoc, *tomlServer) ([]Edit, Outcome), finish func(*tomlDoc) []Edit) (*Result, error) {
	d, servers, err := readTOML(src)
	if err != nil {
		return nil, err
	}
	if servers == nil {
		return nil, fmt.Errorf("no [%s.NAME] table: not a Codex configuration with MCP servers", tomlServers)
	}
	res := &Result{Src: src}
	for _, s := range servers {
		var edits []Edit
		var out Outcome
		switch {
		case slices.Contains(skip, s.name):
			out = Outcome{Action: Skipped, Reason: "--skip"}
		case s.skip != "":
			out = Outcome{Action: Skipped, Reason: s.skip}
		default:
			edits, out = fn(d, s)
		}
		out.Server = s.name
		res.Servers = append(res.Servers, out)
		res.Edits = append(res.Edits, edits...)
	}
	res.Edits = append(res.Edits, finish(d)...)
	slices.SortStableFunc(res.Edits, func(a, b Edit) int { return a.Start - b.Start })
	// A removal that took the line break ending an unterminated file's
	// last server line starts where that server's own edit ends, which
	// replaced the line break already.
	for i := 1; i < len(res.Edits); i++ {
		if e := &res.Edits[i]; e.Start < res.Edits[i-1].End && e.Text == "" {
			e.Start = min(res.Edits[i-1].End, e.End)
		}
	}
	res.Out = apply(src, res.Edits)
	if len(res.Edits) > 0 {
		if _, err := parseTOML(res.Out); err != nil {
			return nil, fmt.Errorf("hostconfig: the rewritten file does not parse (%v); nothing was written", err) // a bug, not input
		}
	}
	return res, nil
}

// readTOML parses src and finds its servers.
func readTOML(src []byte) (*tomlDoc, []*tomlServer, error) {
	d, err := parseTOML(src)
	if err != nil {
		return nil, nil, err
	}
	servers, err := d.servers()
	return d, servers, err
}

func listTOML(src []byte) ([]Server, error) {
	_, servers, err := readTOML(src)
	if err != nil {
		return nil, err
	}
	var out []Server
	for _, s := range servers {
		out = append(out, Server{Name: s.name, Wrapped: s.stash != nil || s.stashSkip != "" || isProxyArgv(s.value)})
	}
	return out, nil
}

func isProxyArgv(v map[string]any) bool {
	cmd, _ := v["command"].(string)
	args, _ := v["args"].([]any)
	first := ""
	if len(args) > 0 {
		first, _ = args[0].(string)
	}
	return isProxyCommand(cmd, first)
}

// wrap returns the server's lines routed through the proxy, in the form
// they were written in, and its stash table.
func (s *tomlServer) wrap(d *tomlDoc, o Options) (text, stash string, out Outcome) {
	v := s.value
	cmd, hasCmd := v["command"]
	_, hasURL := v["url"]
	var args []string
	env := map[string]string{}
	if e, ok := v["env"]; ok {
		m, ok := e.(map[string]any)
		if !ok {
			return "", "", Outcome{Action: Skipped, Reason: `"env" is not a table`}
		}
		for k, x := range m {
			str, ok := x.(string)
			if !ok {
				return "", "", Outcome{Action: Skipped, Reason: fmt.Sprintf("env %q is not a string", k)}
			}
			env[k] = str
		}
	}
	envVars, ok := stringList(v["env_vars"])
	if !ok {
		return "", "", Outcome{Action: Skipped, Reason: `"env_vars" is not a list of strings`}
	}
	switch {
	case hasCmd && hasURL:
		return "", "", Outcome{Action: Skipped, Reason: `both "command" and "url": which one the host uses is unclear`}
	case hasCmd:
		c, ok := cmd.(string)
		if !ok || c == "" {
			return "", "", Outcome{Action: Skipped, Reason: `"command" is not a non-empty string`}
		}
		list, ok := stringList(v["args"])
		if !ok {
			return "", "", Outcome{Action: Skipped, Reason: `"args" is not a list of strings`}
		}
		if len(list) > 0 && isProxyCommand(c, list[0]) {
			return "", "", Outcome{Action: Skipped, Reason: "already runs mcpdrift proxy"}
		}
		args = append(o.proxyArgs(s.name), "--server-command", c)
		for _, a := range list {
			args = append(args, "--server-arg="+a)
		}
		out = Outcome{Action: Wrapped, Kind: "stdio"}
	case hasURL:
		for _, k := range tomlHostAuthKeys {
			if v[k] != nil {
				return "", "", Outcome{Action: Skipped, Reason: fmt.Sprintf("it signs in through the host (%q), which the proxy cannot do for it", k)}
			}
		}
		var reason string
		args, reason = s.remoteArgs(o, env, &envVars)
		if reason != "" {
			return "", "", Outcome{Action: Skipped, Reason: reason}
		}
		out = Outcome{Action: Wrapped, Kind: "http"}
		if slices.Contains(args, "--oauth") {
			out.Reason = "no headers or token: if the server asks for OAuth, the proxy signs in (the user consents in a browser once; the token is kept in the user config dir)"
		}
	default:
		return "", "", Outcome{Action: Skipped, Reason: `neither "command" nor "url"`}
	}
	for _, e := range o.Env {
		if _, ok := env[e.Name]; !ok {
			env[e.Name] = e.Value
		}
	}
	var value map[string]any // the server as wrapped
	switch {
	case s.inline != nil:
		text, value = s.wrappedInline(o.command(), args, env, envVars)
	case s.dotted != "":
		text, value = s.wrappedDotted(d, o.command(), args, env, envVars)
	default:
		text, value = s.wrappedText(d, o.command(), args, env, envVars)
	}
	stash = strings.Join([]string{"[" + tomlKey(StashKey) + "." + tomlKey(s.name) + "]",
		"wrapped = " + tomlQuote(tomlDigest(value)),
		"original = " + tomlVerbatim(string(d.src[s.start:s.end]))}, d.nl)
	return text, stash, out
}

// wrappedInline writes an inline-table server as one: the proxy's command
// line, every member wrap does not replace as written, and env.
func (s *tomlServer) wrappedInline(command string, args []string, env map[string]string, envVars []string) (string, map[string]any) {
	members := []string{"command = " + tomlQuote(command), "args = " + tomlArray(args)}
	if len(envVars) > 0 {
		members = append(members, "env_vars = "+tomlArray(envVars))
	}
	for _, m := range s.inline.members {
		if !slices.Contains(tomlWrapKeys, m.key) {
			members = append(members, m.raw)
		}
	}
	if len(env) > 0 {
		var kv []string
		for _, k := range sortedKeys(env) {
			kv = append(kv, tomlKey(k)+" = "+tomlQuote(env[k]))
		}
		members = append(members, "env = { "+strings.Join(kv, ", ")+" }")
	}
	text := "{ " + strings.Join(members, ", ") + " }"
	return text, tomlDecoded("x = "+text, "x")
}

// wrappedDotted writes a server written as dotted keys as dotted keys: the
// proxy's command line, every key wrap does not replace (lines as they
// were), and env, one key a variable.
func (s *tomlServer) wrappedDotted(d *tomlDoc, command string, args []string, env map[string]string, envVars []string) (string, map[string]any) {
	lines := []string{s.dotted + "command = " + tomlQuote(command), s.dotted + "args = " + tomlArray(args)}
	if len(envVars) > 0 {
		lines = append(lines, s.dotted+"env_vars = "+tomlArray(envVars))
	}
	for _, it := range s.items {
		if !slices.Contains(tomlWrapKeys, s.local(it)[0]) {
			lines = append(lines, strings.TrimRight(s.text(d, it), "\r\n"))
		}
	}
	for _, k := range sortedKeys(env) {
		lines = append(lines, s.dotted+"env."+tomlKey(k)+" = "+tomlQuote(env[k]))
	}
	text := strings.Join(lines, d.nl)
	if terminated(d.src[s.start:s.end]) {
		text += d.nl
	}
	path := []string{tomlServers, s.name}
	if !strings.HasPrefix(s.dotted, tomlServers+".") {
		path = path[1:]
	}
	return text, tomlDecoded(text, path...)
}

// tomlDecoded decodes text wrap wrote and returns the table at path in it.
func tomlDecoded(text string, path ...string) map[string]any {
	var v map[string]any
	if err := toml.Unmarshal([]byte(text), &v); err != nil {
		panic(fmt.Sprintf("hostconfig: wrote TOML that does not parse: %v", err)) // a bug, not input
	}
	for _, k := range path {
		v = v[k].(map[string]any)
	}
	return v
}

// remoteArgs are the proxy's flags for a url entry; header values and
// tokens go into env, never into args.
func (s *tomlServer) remoteArgs(o Options, env map[string]string, envVars *[]string) ([]string, string) {
	v := s.value
	u, ok := v["url"].(string)
	if !ok || !remoteURL(u) {
		return nil, "the url is not an http(s) string: the proxy reaches servers over TCP"
	}
	args := o.proxyArgs(s.name)
	if secretURL(u) {
		args = append(args, "--upstream-env", UpstreamEnv)
		env[UpstreamEnv] = u
	} else {
		args = append(args, "--upstream", u)
	}
	taken := func(name string) bool { _, ok := env[name]; return ok }
	signed := false
	static, ok := stringMap(v["http_headers"])
	if !ok {
		return nil, `"http_headers" is not a table of strings`
	}
	for _, h := range sortedKeys(static) {
		name := uniqueEnvName(HeaderEnvPrefix+envSuffix(h), taken)
		env[name] = static[h]
		args = append(args, "--header-env", h+"="+name)
		signed = true
	}
	fromEnv, ok := stringMap(v["env_http_headers"])
	if !ok {
		return nil, `"env_http_headers" is not a table of strings`
	}
	for _, h := range sortedKeys(fromEnv) {
		args = append(args, "--header-env", h+"="+fromEnv[h])
		*envVars = appendNew(*envVars, fromEnv[h]) // Codex passes a server only the variables it names
		signed = true
	}
	if tok, ok := v["bearer_token"].(string); ok {
		name := uniqueEnvName("MCPDRIFT_BEARER_TOKEN", taken)
		env[name] = tok
		args = append(args, "--bearer-token-env", name)
		signed = true
	}
	if tv, ok := v["bearer_token_env_var"].(string); ok && tv != "" {
		args = append(args, "--bearer-token-env", tv)
		*envVars = appendNew(*envVars, tv)
		signed = true
	}
	if !signed {
		args = append(args, "--oauth")
	}
	return args, ""
}

// wrappedText writes the server's table: its header line as it was, the
// proxy's command line, every key wrap does not replace (lines as they
// were), env, and the sub-tables it had.
func (s *tomlServer) wrappedText(d *tomlDoc, command string, args []string, env map[string]string, envVars []string) (string, map[string]any) {
	var lines []string
	header := strings.TrimRight(s.text(d, s.items[0]), "\r\n")
	lines = append(lines, header,
		"command = "+tomlQuote(command),
		"args = "+tomlArray(args))
	if len(envVars) > 0 {
		lines = append(lines, "env_vars = "+tomlArray(envVars))
	}
	var subtables []string
	var cur []string // the sub-table the item is in, nil for the server's own
	for _, it := range s.items[1:] {
		l := s.local(it)
		text := strings.TrimRight(s.text(d, it), "\r\n")
		switch {
		case it.table:
			cur = l
			if cur[0] != "env" {
				subtables = append(subtables, text)
			}
		case cur == nil && !slices.Contains(tomlWrapKeys, l[0]):
			lines = append(lines, text)
		case cur != nil && cur[0] != "env":
			subtables = append(subtables, text)
		}
	}
	if len(env) > 0 {
		lines = append(lines, "", tomlHeader(s.name, "env"))
		for _, k := range sortedKeys(env) {
			lines = append(lines, tomlKey(k)+" = "+tomlQuote(env[k]))
		}
	}
	if len(subtables) > 0 {
		lines = append(lines, "")
		lines = append(lines, subtables...)
	}
	body := strings.Join(lines, d.nl) + d.nl
	return body, tomlDecoded(body, tomlServers, s.name)
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func tomlKey(k string) string {
	if bareKey.MatchString(k) {
		return k
	}
	return tomlQuote(k)
}

func tomlHeader(server string, sub string) string {
	return "[" + tomlServers + "." + tomlKey(server) + "." + tomlKey(sub) + "]"
}

// tomlQuote writes s as a TOML basic string: JSON's escapes are TOML's,
// except that TOML also wants DEL escaped.
func tomlQuote(s string) string {
	return strings.ReplaceAll(quote(s), "\x7f", `\u007F`)
}

func tomlArray(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = tomlQuote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// tomlVerbatim writes text as a TOML string that decodes to exactly text:
// a multi-line literal string, which keeps it readable, when text allows
// (the line break after the opening quotes is not part of the value), else
// a basic string with escapes.
func tomlVerbatim(text string) string {
	if !strings.Contains(text, "'''") && !strings.ContainsAny(text, "\r\x7f") && !strings.HasSuffix(text, "'") && !hasControl(text) {
		return "'''\n" + text + "'''"
	}
	return tomlQuote(text)
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' }) >= 0
}

// tomlDigest is a digest of a server's value, blind to formatting, comments
// and order (and to 20 written 20.0, as Codex rewrites it): what unwrap
// compares to tell a hand edit.
func tomlDigest(v map[string]any) string {
	c := make(map[string]any, len(v))
	for k, x := range v {
		if k != StashKey { // an inline table's own stash
			c[k] = x
		}
	}
	b, err := json.Marshal(c) // map keys sorted; every TOML value has a JSON form
	if err != nil {
		panic(fmt.Sprintf("hostconfig: %v", err))
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func stringList(v any) ([]string, bool) {
	if v == nil {
		return nil, true
	}
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(list))
	for i, x := range list {
		if out[i], ok = x.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

func stringMap(v any) (map[string]string, bool) {
	if v == nil {
		return nil, true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		if out[k], ok = x.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
