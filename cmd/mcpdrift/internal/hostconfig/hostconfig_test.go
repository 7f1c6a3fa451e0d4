package hostconfig

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden wrapped files in testdata/hosts")

// testOptions are the options the golden files were written with.
var testOptions = Options{
	Command:    "mcpdrift",
	ProxyFlags: []string{"--on-stale", "refuse"},
	Env:        []EnvVar{{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318"}},
}

// hosts are the sample configurations (testdata/hosts/README.md says what
// each is taken from) and what wrap does to each server.
var hosts = []struct {
	file  string
	jsonc bool
	want  map[string]Action
}{
	{"claude_desktop_config.json", false, map[string]Action{"filesystem": Wrapped, "github": Wrapped, "memory": Wrapped}},
	{"mcp.json", false, map[string]Action{"everything": Wrapped, "notion": Wrapped, "api": Wrapped, "asana": Wrapped, "slack": Skipped}},
	{"cursor-mcp.json", false, map[string]Action{"server-name": Wrapped, "userjot": Wrapped, "core": Wrapped, "no-transport": Skipped}},
	{"vscode-mcp.json", true, map[string]Action{"perplexity": Wrapped, "context7": Wrapped, "memory": Wrapped, "local-socket": Skipped}},
	{"docs-example.json", false, map[string]Action{"everything": Wrapped, "search": Wrapped}}, // shown in docs/wrapping.md
	{"claude.json", false, map[string]Action{"everything": Wrapped, "quickstart": Wrapped}},
	{"gemini-settings.json", false, map[string]Action{"everything": Wrapped, "quickstart": Wrapped, "events": Wrapped, "typed": Wrapped, "gcp": Skipped}},
	{"codex-config.toml", false, map[string]Action{"everything": Wrapped, "figma": Wrapped, "notion": Wrapped, "scoped": Skipped, "inline": Wrapped, "memory": Wrapped}},
	{"windsurf-mcp_config.json", false, map[string]Action{"github": Wrapped, "remote-http": Wrapped, "figma": Wrapped}},
	{"zed-settings.json", true, map[string]Action{"everything": Wrapped, "remote": Wrapped, "context7": Skipped}},
	{"cline_mcp_settings.json", false, map[string]Action{"local-server": Wrapped, "remote-server": Wrapped, "legacy-sse": Wrapped}},
}

func readHost(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "hosts", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every host's sample: wrap matches the golden file, wrapping again changes
// nothing, and unwrap gives back the original byte for byte.
func TestWrapRoundTripHosts(t *testing.T) {
	for _, h := range hosts {
		t.Run(h.file, func(t *testing.T) {
			src := readHost(t, h.file)
			format := FormatOf(h.file)
			opts := testOptions
			opts.TopStash = h.file == "gemini-settings.json"
			res, err := format.Wrap(src, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.JSONC != h.jsonc {
				t.Errorf("JSONC = %v", res.JSONC)
			}
			got := map[string]Action{}
			for _, o := range res.Servers {
				got[o.Server] = o.Action
			}
			if !mapsEqual(got, h.want) {
				t.Errorf("outcomes %v, want %v", res.Servers, h.want)
			}
			ext := filepath.Ext(h.file)
			golden := filepath.Join("testdata", "hosts", strings.TrimSuffix(h.file, ext)+".wrapped"+ext)
			if *update {
				if err := os.WriteFile(golden, res.Out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want, _ := os.ReadFile(golden); string(res.Out) != string(want) {
				t.Errorf("wrapped file differs from %s (go test -update rewrites it):\n%s", golden, res.Out)
			}
			if format == JSON && !h.jsonc && !json.Valid(res.Out) {
				t.Errorf("the wrapped file is not JSON:\n%s", res.Out)
			}
			again, err := format.Wrap(res.Out, opts)
			if err != nil || again.Changed() {
				t.Errorf("wrapping twice changed the file (%v):\n%s", err, again.Diff("a", "b"))
			}
			back, err := format.Unwrap(res.Out, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			if string(back.Out) != string(src) {
				t.Errorf("unwrap did not restore the original:\n%s", back.Out)
			}
			if back.Count(Unwrapped) != res.Count(Wrapped) {
				t.Errorf("unwrapped %d, wrapped %d", back.Count(Unwrapped), res.Count(Wrapped))
			}
		})
	}
}

func mapsEqual(a, b map[string]Action) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

type entryJSON struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Stash   *struct {
		Wrapped  string          `json:"wrapped"`
		Original json.RawMessage `json:"original"`
	} `json:"x-mcpdrift"`
}

func wrappedEntries(t *testing.T, file string) map[string]entryJSON {
	t.Helper()
	res, err := Wrap(readHost(t, file), testOptions)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		MCPServers map[string]entryJSON `json:"mcpServers"`
	}
	if err := json.Unmarshal(res.Out, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.MCPServers
}

// What the host runs: the proxy with the server's command line in
// --server-command and --server-arg (no "--", so arguments a host appends
// stay the host's), the entry's env kept, the options' flags and env added.
func TestWrapStdioEntry(t *testing.T) {
	e := wrappedEntries(t, "claude_desktop_config.json")["github"]
	wantArgs := []string{"proxy", "--server-name", "github", "--on-stale", "refuse", "--server-command", "docker",
		"--server-arg=run", "--server-arg=-i", "--server-arg=--rm", "--server-arg=-e", "--server-arg=GITHUB_PERSONAL_ACCESS_TOKEN", "--server-arg=ghcr.io/github/github-mcp-server"}
	if e.Command != "mcpdrift" || !slices.Equal(e.Args, wantArgs) {
		t.Errorf("command %q args %q", e.Command, e.Args)
	}
	if e.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "ghp_example0123456789" || e.Env["OTEL_EXPORTER_OTLP_ENDPOINT"] != "http://localhost:4318" {
		t.Errorf("env %v", e.Env)
	}
	if e.Stash == nil || !strings.HasPrefix(e.Stash.Wrapped, "sha256:") || !strings.Contains(string(e.Stash.Original), `"command": "docker"`) {
		t.Errorf("stash %+v", e.Stash)
	}
}

// A remote entry becomes a stdio one; its header values (secrets) move to
// env, and only header and variable names reach argv.
func TestWrapRemoteEntry(t *testing.T) {
	entries := wrappedEntries(t, "mcp.json")
	api := entries["api"]
	wantArgs := []string{"proxy", "--server-name", "api", "--on-stale", "refuse",
		"--upstream-env", UpstreamEnv,
		"--header-env", "Authorization=MCPDRIFT_HEADER_AUTHORIZATION",
		"--header-env", "X-Team=MCPDRIFT_HEADER_X_TEAM"}
	if api.Type != "stdio" || api.URL != "" || !slices.Equal(api.Args, wantArgs) {
		t.Errorf("api: type %q url %q args %q", api.Type, api.URL, api.Args)
	}
	wantEnv := map[string]string{
		UpstreamEnv:                     "${API_BASE_URL:-https://api.example.com}/mcp",
		"MCPDRIFT_HEADER_AUTHORIZATION": "Bearer ${API_KEY}",
		"MCPDRIFT_HEADER_X_TEAM":        "drift",
		"OTEL_EXPORTER_OTLP_ENDPOINT":   "http://localhost:4318",
	}
	if len(api.Env) != len(wantEnv) {
		t.Errorf("api env %v", api.Env)
	}
	for k, v := range wantEnv {
		if api.Env[k] != v {
			t.Errorf("api env %s = %q, want %q", k, api.Env[k], v)
		}
	}
	for _, a := range api.Args {
		if strings.Contains(a, "Bearer") || strings.Contains(a, "drift") && a != "X-Team=MCPDRIFT_HEADER_X_TEAM" {
			t.Errorf("a header value reached argv: %q", a)
		}
	}
	// A legacy HTTP+SSE server is reached over that transport, its
	// header moved to env like any other.
	if asana := entries["asana"]; !slices.Contains(asana.Args, "https://mcp.asana.com/sse") ||
		!strings.Contains(strings.Join(asana.Args, " "), "--upstream-transport sse") || asana.Env["MCPDRIFT_HEADER_X_API_KEY"] != "${ASANA_KEY}" {
		t.Errorf("asana (type sse) wrapped as %q %q %v", asana.Command, asana.Args, asana.Env)
	}
	// One with no headers signs in with OAuth if the server asks, as the
	// host would have; one with headers has its credentials.
	if notion := entries["notion"]; !slices.Contains(notion.Args, "https://mcp.notion.com/mcp") || !slices.Contains(notion.Args, "--oauth") {
		t.Errorf("notion args %q", notion.Args)
	}
	if slices.Contains(api.Args, "--oauth") {
		t.Errorf("api (with headers) args %q", api.Args)
	}
}

// Header names that spell the same variable get distinct ones, and a
// variable the entry already has is not reused.
func TestHeaderEnvNames(t *testing.T) {
	src := []byte(`{"mcpServers": {"x": {"url": "https://h/mcp", "headers": {"X-Key": "a", "x_key": "b"}, "env": {"MCPDRIFT_HEADER_X_KEY": "mine"}}}}`)
	res, err := Wrap(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ MCPServers map[string]entryJSON }
	if err := json.Unmarshal(res.Out, &doc); err != nil {
		t.Fatal(err)
	}
	e := doc.MCPServers["x"]
	if e.Env["MCPDRIFT_HEADER_X_KEY"] != "mine" || e.Env["MCPDRIFT_HEADER_X_KEY_2"] != "a" || e.Env["MCPDRIFT_HEADER_X_KEY_3"] != "b" {
		t.Errorf("env %v args %q", e.Env, e.Args)
	}
}

// An entry edited after wrap is not silently reverted: unwrap leaves it
// (Refused) unless forced.
func TestUnwrapEdited(t *testing.T) {
	src := readHost(t, "claude_desktop_config.json")
	res, err := Wrap(src, Options{Command: "mcpdrift"})
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(res.Out), `"--server-name", "memory", "--server-command"`, `"--server-name", "memory", "--on-stale", "refuse", "--server-command"`, 1)
	if edited == string(res.Out) {
		t.Fatal("the edit did not apply")
	}
	back, err := Unwrap([]byte(edited), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if back.Count(Refused) != 1 || back.Count(Unwrapped) != 2 || !strings.Contains(string(back.Out), `"--on-stale", "refuse"`) {
		t.Errorf("outcomes %v\n%s", back.Servers, back.Out)
	}
	// Formatting and comments are not edits.
	reformatted := strings.Replace(string(res.Out), `"args": ["proxy", "--server-name", "memory"`, `"args":   [ "proxy","--server-name",  "memory"`, 1)
	if back, _ := Unwrap([]byte(reformatted), nil, false); back.Count(Refused) != 0 {
		t.Errorf("a reformatted entry was taken for an edit: %v", back.Servers)
	}
	forced, err := Unwrap([]byte(edited), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if string(forced.Out) != string(src) {
		t.Errorf("--force did not restore the original:\n%s", forced.Out)
	}
}

func TestWrapSkipsAndRefusals(t *testing.T) {
	for _, c := range []struct {
		name, entry, reason string
	}{
		{"already proxied", `{"command": "/opt/bin/mcpdrift", "args": ["proxy", "--", "x"]}`, "already runs mcpdrift proxy"},
		{"websocket", `{"type": "ws", "url": "wss://h/mcp"}`, `type "ws"`},
		{"both", `{"command": "x", "url": "https://h"}`, "both"},
		{"headersHelper", `{"type": "http", "url": "https://h", "headersHelper": "get-token.sh"}`, "signs in through the host"},
		{"cursor auth", `{"url": "https://h", "auth": {"CLIENT_ID": "x"}}`, "signs in through the host"},
		{"number header", `{"url": "https://h", "headers": {"X-N": 1}}`, `header "X-N" is not a string`},
		{"not an object", `"npx server"`, "not an object"},
		{"empty command", `{"command": ""}`, "non-empty string"},
		{"stdio type with url", `{"type": "stdio", "command": "x", "args": "y"}`, `"args" is not an array`},
		{"number arg", `{"command": "x", "args": ["a", 1]}`, `not a string`},
		{"gemini url and httpUrl", `{"url": "https://h/sse", "httpUrl": "https://h/mcp"}`, `both "url" and "httpUrl"`},
		{"command and serverUrl", `{"command": "x", "serverUrl": "https://h/mcp"}`, `both "command" and "serverUrl"`},
		{"gemini google credentials", `{"httpUrl": "https://h/mcp", "authProviderType": "google_credentials"}`, "signs in through the host"},
		{"zed extension", `{"source": "extension", "settings": {}}`, "neither"},
	} {
		src := []byte(`{"mcpServers": {"s": ` + c.entry + `}}`)
		res, err := Wrap(src, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Changed() || len(res.Servers) != 1 || res.Servers[0].Action != Skipped || !strings.Contains(res.Servers[0].Reason, c.reason) {
			t.Errorf("%s: %+v", c.name, res.Servers)
		}
	}
	res, err := Wrap(readHost(t, "claude_desktop_config.json"), Options{Skip: []string{"github"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Count(Wrapped) != 2 || strings.Contains(string(res.Out), `"--server-name", "github"`) {
		t.Errorf("--skip github: %v", res.Servers)
	}
}

// Files that are not what a host reads are refused with their position.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		src, want string
	}{
		{`{"mcpServers": {"a": {"command": "x"}}`, "line 1, column 39: unexpected end of file, expected ',' or '}'"},
		{"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n    \"b\": {}\n  }\n}", "line 4, column 5: unexpected '\"', expected ',' or '}'"},
		{`{"mcpServers": {"a": {"command": "x}}}`, "line 1, column 34: a string that never ends"},
		{"{\"mcpServers\": {}} x", "line 1, column 20: unexpected 'x' after the end of the document"},
		{`{"mcpServers": {"a": {}, "a": {}}}`, `line 1, column 26: server "a" appears twice in "mcpServers"`},
		{`{"mcpServers": {}, "mcpServers": {}}`, `line 1, column 20: "mcpServers" appears twice`},
		{`{"mcpServers": []}`, `line 1, column 16: "mcpServers" is not an object`},
		{`[]`, "line 1, column 1: the file is not a JSON object"},
		{`{"servers": {"a": {"args": [01]}}}`, "line 1, column 30: unexpected '1', expected ',' or ']'"},
		{"{\"a\": \"\xff\"}", "line 1, column 8: the file is not UTF-8"},
		{`{"a": /* never closed }`, "line 1, column 7: a comment that never ends"},
		{`{"a": "tab	inside"}`, "line 1, column 11: a control character inside a string"},
		{`{"a": tru}`, "line 1, column 7: unexpected 't', expected a value"},
		{`{"other": 1}`, "not an MCP client configuration"},
		{strings.Repeat("[", 100) + strings.Repeat("]", 100), "nested deeper than 64 levels"},
		{``, "unexpected end of file, expected a value"},
	} {
		_, err := Wrap([]byte(c.src), Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}

// JSONC as VS Code writes it: comments and trailing commas anywhere, a byte
// order mark; all of it kept.
func TestWrapJSONC(t *testing.T) {
	src := "\uFEFF// servers\n{\n  \"servers\": {\n    // the memory server\n    \"m\": {\"command\": \"npx\", /* keep */ \"args\": [\"a\",],},\n  },\n}\n"
	res, err := Wrap([]byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.JSONC || res.Count(Wrapped) != 1 || !strings.HasPrefix(string(res.Out), "\uFEFF// servers\n{\n  \"servers\": {\n    // the memory server\n") {
		t.Errorf("%v\n%s", res.Servers, res.Out)
	}
	back, err := Unwrap(res.Out, nil, false)
	if err != nil || string(back.Out) != src {
		t.Errorf("unwrap: %v\n%s", err, back.Out)
	}
}

// A file written on Windows keeps its CRLF line breaks.
func TestWrapCRLF(t *testing.T) {
	src := strings.ReplaceAll(string(readHost(t, "docs-example.json")), "\n", "\r\n")
	res, err := Wrap([]byte(src), testOptions)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(res.Out), "\n"); n != strings.Count(string(res.Out), "\r\n") || n < 30 {
		t.Errorf("line breaks:\n%q", res.Out)
	}
	if back, err := Unwrap(res.Out, nil, false); err != nil || string(back.Out) != src {
		t.Errorf("unwrap: %v\n%q", err, back.Out)
	}
}

// The dry-run diff applies to the original and gives the rewritten file.
func TestDiffHunks(t *testing.T) {
	src := readHost(t, "claude_desktop_config.json")
	res, err := Wrap(src, Options{Command: "mcpdrift"})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Diff("a/f", "b/f")
	if got := applyUnified(t, string(src), d); got != string(res.Out) {
		t.Errorf("the diff does not give the wrapped file:\n%s\ngot:\n%s", d, got)
	}
	if !strings.Contains(d, "@@ -1,21 +1,38 @@") || !strings.Contains(d, "-      \"command\": \"npx\",") {
		t.Errorf("diff:\n%s", d)
	}
}

// applyUnified applies a unified diff made by Diff (no fuzz).
func applyUnified(t *testing.T, src, diff string) string {
	t.Helper()
	old := strings.SplitAfter(src, "\n")
	var out []string
	next := 0
	for _, l := range strings.SplitAfter(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "+++ "), l == "":
		case strings.HasPrefix(l, "@@"):
			var o, on, n, nn int
			if _, err := fmt.Sscanf(l, "@@ -%d,%d +%d,%d @@", &o, &on, &n, &nn); err != nil {
				t.Fatalf("hunk header %q: %v", l, err)
			}
			start := o - 1
			if on == 0 {
				start = o
			}
			out = append(out, old[next:start]...)
			next = start
		case strings.HasPrefix(l, " "), strings.HasPrefix(l, "-"):
			if old[next] != l[1:] {
				t.Fatalf("context %q does not match %q", l, old[next])
			}
			if l[0] == ' ' {
				out = append(out, l[1:])
			}
			next++
		case strings.HasPrefix(l, "+"):
			out = append(out, l[1:])
		}
	}
	out = append(out, old[next:]...)
	return strings.Join(out, "")
}

// A host that rewrites the wrapped file in its own format (Claude Code
// writes ~/.claude.json with JSON.stringify(…, null, 2)) does not stop
// unwrap: the result is the original JSON, in the host's bytes.
func TestUnwrapAfterHostReformat(t *testing.T) {
	for _, file := range []string{"claude.json", "gemini-settings.json"} {
		src := readHost(t, file)
		res, err := Wrap(src, Options{Command: "mcpdrift", TopStash: file == "gemini-settings.json"})
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(res.Out, &doc); err != nil {
			t.Fatal(err)
		}
		reformatted, err := json.MarshalIndent(doc, "", "  ") // keys sorted, arrays one element a line
		if err != nil {
			t.Fatal(err)
		}
		back, err := Unwrap(reformatted, nil, false)
		if err != nil || back.Count(Refused) > 0 || back.Count(Unwrapped) != res.Count(Wrapped) {
			t.Fatalf("%s: unwrap after a reformat: %v %v", file, err, back.Servers)
		}
		var got, want any
		if err := json.Unmarshal(back.Out, &got); err != nil {
			t.Fatalf("%s: the unwrapped file is not JSON: %v\n%s", file, err, back.Out)
		}
		_ = json.Unmarshal(src, &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: unwrap after a reformat gave\n%s", file, back.Out)
		}
	}
}
