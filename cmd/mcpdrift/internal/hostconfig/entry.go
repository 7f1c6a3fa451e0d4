package hostconfig

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// StashKey is the member of a wrapped entry that keeps what unwrap needs:
// the entry as it was ("original") and a digest of the entry as wrap wrote
// it ("wrapped"), so that unwrap can tell a hand edit it would undo.
// Hosts ignore members they do not know (see testdata/hosts/README.md).
const StashKey = "x-mcpdrift"

// Environment variables the wrapped entry of a remote server sets, so that
// secrets reach the proxy through its environment, never its argv (which
// any local user can read, and which hosts and ps print).
const (
	HeaderEnvPrefix = "MCPDRIFT_HEADER_"
	UpstreamEnv     = "MCPDRIFT_UPSTREAM_URL"
)

// Members of a remote entry that sign in through the host (Claude Code's
// headersHelper and oauth, Cursor's auth, Gemini CLI's oauth and
// authProviderType): the proxy cannot do that for the host, so such an
// entry is left as it is.
var hostAuthMembers = []string{"headersHelper", "oauth", "auth", "authProviderType"}

// urlMembers name a remote server's endpoint: url (most hosts), httpUrl
// (Gemini CLI's Streamable HTTP; its url is HTTP+SSE) and serverUrl
// (Windsurf).
var urlMembers = []string{"url", "httpUrl", "serverUrl"}

// entry is one server entry and what a rewrite needs to know about its place.
type entry struct {
	name string
	node *Node
	src  []byte
	lay  layout
	top  *topStash // the file's top-level stash, for hosts that refuse unknown members in an entry
	text string    // the rewritten entry, when there is one
}

func (e *entry) raw(n *Node) string { return string(e.src[n.Start:n.End]) }

// wrap returns the entry's text routed through the proxy and what to tell
// the user about it (note), or a reason to leave it alone (skip) when it
// cannot be routed faithfully.
func (e *entry) wrap(o Options) (text, kind, note, skip string) {
	n := e.node
	if n.Kind != '{' {
		return "", "", "", "not an object"
	}
	if n.Get(StashKey) != nil || e.top.of(e.name) != nil {
		return "", "", "", "already wrapped"
	}
	if o.TopStash && e.top.taken(e.name) {
		return "", "", "", "another server of this name is wrapped: the top-level stash keeps one per name"
	}
	typ := ""
	if t := n.Get("type"); t != nil {
		if t.Kind != '"' {
			return "", "", "", `"type" is not a string`
		}
		typ = t.Str
	}
	var urls []string
	for _, k := range urlMembers {
		if n.Get(k) != nil {
			urls = append(urls, k)
		}
	}
	cmd := n.Get("command")
	switch {
	case len(urls) > 1 || (cmd != nil && len(urls) > 0):
		if cmd != nil {
			urls = append([]string{"command"}, urls...)
		}
		return "", "", "", fmt.Sprintf("both %q and %q: which one the host uses is unclear", urls[0], urls[1])
	case cmd != nil:
		if typ != "" && typ != "stdio" {
			return "", "", "", fmt.Sprintf("type %q with a command", typ)
		}
		return e.wrapStdio(o)
	case len(urls) == 1:
		return e.wrapRemote(o, typ, urls[0])
	}
	return "", "", "", `neither "command" nor a url ("url", "httpUrl", "serverUrl")`
}

func (e *entry) wrapStdio(o Options) (text, kind, note, skip string) {
	n := e.node
	cmd := n.Get("command")
	if cmd.Kind != '"' || cmd.Str == "" {
		return "", "", "", `"command" is not a non-empty string`
	}
	args := n.Get("args")
	if args != nil && args.Kind != '[' {
		return "", "", "", `"args" is not an array`
	}
	if isProxy(cmd.Str, args) {
		return "", "", "", "already runs mcpdrift proxy"
	}
	// The server's command line goes in flags, not after "--": a host that
	// appends its own arguments to the entry's (the MCP Inspector CLI) would
	// otherwise have them read as the server's.
	proxyArgs := quoteAll(o.proxyArgs(e.name))
	proxyArgs = append(proxyArgs, quote("--server-command"), e.raw(cmd))
	if args != nil {
		for _, a := range args.Elems {
			if a.Kind != '"' {
				return "", "", "", `"args" holds a value that is not a string`
			}
			proxyArgs = append(proxyArgs, quote("--server-arg="+a.Str))
		}
	}
	var fields []field
	envDone := false
	for _, m := range n.Members {
		switch m.Key {
		case "command":
			fields = append(fields, field{"command", quote(o.command())})
			if args == nil {
				fields = append(fields, field{"args", array(proxyArgs)})
			}
		case "args":
			fields = append(fields, field{"args", array(proxyArgs)})
		case "env":
			env, reason := e.env(m.Value, nil, o.Env)
			if reason != "" {
				return "", "", "", reason
			}
			fields = append(fields, field{"env", env})
			envDone = true
		default:
			fields = append(fields, field{m.Key, e.raw(m.Value)})
		}
	}
	if !envDone && len(o.Env) > 0 {
		env, _ := e.env(nil, nil, o.Env)
		fields = insertAfter(fields, "args", field{"env", env})
	}
	return e.withStash(fields, o), "stdio", "", ""
}

func (e *entry) wrapRemote(o Options, typ, urlKey string) (text, kind, note, skip string) {
	n := e.node
	switch typ {
	case "", "http", "streamable-http", "streamableHttp":
		kind = "http"
	case "sse":
		kind = "sse" // the deprecated HTTP+SSE transport: the proxy is told, not left to find out
	default:
		return "", "", "", fmt.Sprintf("type %q: the proxy reaches Streamable HTTP and SSE servers", typ)
	}
	for _, k := range hostAuthMembers {
		if n.Get(k) != nil {
			return "", "", "", fmt.Sprintf("it signs in through the host (%q), which the proxy cannot do for it", k)
		}
	}
	u := n.Get(urlKey)
	if u.Kind != '"' {
		return "", "", "", fmt.Sprintf("%q is not a string", urlKey)
	}
	if !remoteURL(u.Str) {
		return "", "", "", "the url is not http(s): the proxy reaches servers over TCP"
	}
	var headers []header
	if h := n.Get("headers"); h != nil {
		if h.Kind != '{' {
			return "", "", "", `"headers" is not an object`
		}
		for _, m := range h.Members {
			if m.Value.Kind != '"' {
				return "", "", "", fmt.Sprintf("header %q is not a string", m.Key)
			}
			headers = append(headers, header{m.Key, m.Value})
		}
	}
	args := o.proxyArgs(e.name)
	var env []envVar
	if secretURL(u.Str) {
		args = append(args, "--upstream-env", UpstreamEnv)
		env = append(env, envVar{UpstreamEnv, e.raw(u)})
	} else {
		args = append(args, "--upstream", u.Str)
	}
	switch {
	case kind == "sse":
		args = append(args, "--upstream-transport", "sse")
	case urlKey == "httpUrl":
		args = append(args, "--upstream-transport", "streamable-http") // Gemini CLI's Streamable-HTTP-only member
	}
	if len(headers) == 0 {
		// No credentials of its own: the host would sign in with OAuth
		// when the server asks, so the proxy does.
		args = append(args, "--oauth")
	}
	existing := n.Get("env")
	names := headerEnvNames(headers, existing)
	for i, h := range headers {
		args = append(args, "--header-env", h.name+"="+names[i])
		env = append(env, envVar{names[i], e.raw(h.value)})
	}
	envText, reason := e.env(existing, env, o.Env)
	if reason != "" {
		return "", "", "", reason
	}
	hasEnv := len(env)+len(o.Env) > 0 || existing != nil
	var fields []field
	envDone := false
	for _, m := range n.Members {
		switch m.Key {
		case "type":
			fields = append(fields, field{"type", quote("stdio")})
		case urlKey:
			fields = append(fields, field{"command", quote(o.command())}, field{"args", array(quoteAll(args))})
		case "headers", "env":
			if hasEnv && !envDone && (m.Key == "env" || existing == nil) {
				fields = append(fields, field{"env", envText})
				envDone = true
			}
		default:
			fields = append(fields, field{m.Key, e.raw(m.Value)})
		}
	}
	if hasEnv && !envDone {
		fields = insertAfter(fields, "args", field{"env", envText})
	}
	if len(headers) == 0 {
		note = "no headers: if the server asks for OAuth, the proxy signs in (the user consents in a browser once; the token is kept in the user config dir)"
	}
	return e.withStash(fields, o), kind, note, ""
}

type header struct {
	name  string
	value *Node
}

// envVar is a variable to add to an entry's env; value is JSON text.
type envVar struct{ name, value string }

// env writes the entry's env: the members it had, then the variables wrap
// adds. A variable the entry already sets keeps the entry's value.
func (e *entry) env(existing *Node, add []envVar, extra []EnvVar) (string, string) {
	var fields []field
	have := map[string]bool{}
	if existing != nil {
		if existing.Kind != '{' {
			return "", `"env" is not an object`
		}
		for _, m := range existing.Members {
			fields = append(fields, field{m.Key, e.raw(m.Value)})
			have[m.Key] = true
		}
	}
	for _, v := range add {
		fields = append(fields, field{v.name, v.value})
		have[v.name] = true
	}
	for _, v := range extra {
		if !have[v.Name] {
			fields = append(fields, field{v.Name, quote(v.Value)})
			have[v.Name] = true
		}
	}
	return e.lay.deeper().object(fields), ""
}

// withStash writes the wrapped entry's fields followed by the stash, whose
// digest covers those fields as written; with o.TopStash the stash goes to
// the file's top-level one instead.
func (e *entry) withStash(fields []field, o Options) string {
	plain := e.lay.object(fields)
	node, _, err := Parse([]byte(plain))
	if err != nil {
		panic(fmt.Sprintf("hostconfig: wrote an entry that does not parse: %v", err)) // a bug, not input
	}
	sum := quote(digest([]byte(plain), node, ""))
	if o.TopStash && e.top != nil {
		e.top.add(e.name, sum, reindent(e.raw(e.node), e.lay.unit, true))
		return plain
	}
	stash := e.lay.deeper().object([]field{
		{"wrapped", sum},
		{"original", reindent(e.raw(e.node), e.lay.unit+e.lay.unit, true)}, // two levels deeper
	})
	return e.lay.object(append(fields, field{StashKey, stash}))
}

// unwrap returns the entry as it was before wrap, or why it cannot.
func (e *entry) unwrap(force bool) (text, skip string, refused bool) {
	n := e.node
	if n.Kind != '{' {
		return "", "not an object", false
	}
	stash, shift := n.Get(StashKey), e.lay.unit+e.lay.unit
	if stash == nil {
		if stash = e.top.of(e.name); stash != nil {
			shift = e.lay.unit
		}
	}
	if stash == nil {
		if isProxy(strValue(n.Get("command")), n.Get("args")) {
			return "", notStashed, false
		}
		return "", "not wrapped", false
	}
	orig, sum := stash.Get("original"), stash.Get("wrapped")
	if orig == nil || orig.Kind != '{' || sum == nil || sum.Kind != '"' {
		return "", fmt.Sprintf("its %q member is damaged (no original entry or digest): edit it by hand", StashKey), true
	}
	if !force && digest(e.src, n, StashKey) != sum.Str {
		return "", "it was edited after wrap, and unwrap would undo that edit: restore it by hand from its " +
			fmt.Sprintf("%q member, or run unwrap --force to restore the original anyway", StashKey), true
	}
	e.top.restored(e.name)
	return reindent(e.raw(orig), shift, false), "", false
}

// notStashed is why unwrap leaves an entry that runs the proxy but has no
// stash: edited by hand, or a host dropped the stash when it rewrote the
// file (codex mcp add does, for an inline table's).
const notStashed = "runs mcpdrift proxy but has no x-mcpdrift stash (written by hand, or dropped by a host that rewrote the file): restore it from the .mcpdrift.bak backup or by hand"

// isProxy reports whether a command line already runs mcpdrift proxy.
func isProxy(command string, args *Node) bool {
	return args != nil && len(args.Elems) > 0 && isProxyCommand(command, args.Elems[0].Str)
}

func isProxyCommand(command, first string) bool {
	return strings.TrimSuffix(filepath.Base(command), ".exe") == "mcpdrift" && first == "proxy"
}

func strValue(n *Node) string {
	if n == nil {
		return ""
	}
	return n.Str
}

func insertAfter(fields []field, key string, f field) []field {
	for i, x := range fields {
		if x.key == key {
			return append(fields[:i+1], append([]field{f}, fields[i+1:]...)...)
		}
	}
	return append(fields, f)
}

// remoteURL accepts http(s) URLs and URLs the host builds from variables
// (Claude Code's ${VAR}, Cursor's and VS Code's ${env:NAME}).
func remoteURL(u string) bool {
	l := strings.ToLower(u)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") || strings.HasPrefix(u, "${")
}

// secretURL reports whether a URL may carry a secret (user info, a query, a
// host variable): such a URL goes to the proxy through its environment.
func secretURL(u string) bool {
	return strings.ContainsAny(u, "@?") || strings.Contains(u, "${")
}

var notEnvChar = regexp.MustCompile(`[^A-Z0-9]+`)

// headerEnvNames names the variable that carries each header's value,
// MCPDRIFT_HEADER_ and the header's name in capitals, unique in the entry.
func headerEnvNames(headers []header, existing *Node) []string {
	taken := map[string]bool{UpstreamEnv: true}
	if existing != nil {
		for _, m := range existing.Members {
			taken[m.Key] = true
		}
	}
	names := make([]string, len(headers))
	for i, h := range headers {
		names[i] = uniqueEnvName(HeaderEnvPrefix+envSuffix(h.name), func(n string) bool { return taken[n] })
		taken[names[i]] = true
	}
	return names
}

// envSuffix is a header's name as it goes into a variable's: capitals,
// other characters _.
func envSuffix(name string) string {
	return strings.Trim(notEnvChar.ReplaceAllString(strings.ToUpper(name), "_"), "_")
}

// uniqueEnvName is base, or base_2, base_3… if base is taken.
func uniqueEnvName(base string, taken func(string) bool) string {
	name := base
	for n := 2; taken(name); n++ {
		name = fmt.Sprintf("%s_%d", base, n)
	}
	return name
}
