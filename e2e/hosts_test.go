//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/mcpdrift/mcpdrift/dev/testkit/benchutil"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// The agent hosts on npm (pinned in testdata/npm), each with a scratch
// HOME, run against server-everything over stdio and over Streamable HTTP
// with their configuration wrapped by `mcpdrift wrap`, the proxies
// exporting to a local OTLP sink (docs/wrapping.md, issue 24).

// hostEnv is a scratch home for a host: HOME, a project directory in it,
// and the environment to run the host with.
type hostEnv struct {
	home, project string
	env           []string
}

func newHostEnv(t testing.TB) hostEnv {
	home := t.TempDir()
	project := filepath.Join(home, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=dumb", "NO_COLOR=1"}
	return hostEnv{home: home, project: project, env: env}
}

// run runs a host's command in the project directory and returns its
// output (stdout and stderr), failing the test on a non-zero exit.
func (h hostEnv) run(t testing.TB, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = h.project, h.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out)
}

func writeText(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readText(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// everythingHTTP starts server-everything over Streamable HTTP and returns
// its endpoint.
func everythingHTTP(t testing.TB) string {
	port := testservers.FreePort(t)
	cmd := exec.Command(testservers.Node(t), testservers.Everything(t, "2026.1.26"), "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	waitListening(t, "server-everything over HTTP", url)
	return url
}

// waitListening waits until url answers HTTP.
func waitListening(t testing.TB, what, url string) {
	waitUntil(t, context.Background(), what+" listening", 60*time.Second, func() (bool, string) {
		res, err := http.Get(url)
		if err != nil {
			return false, err.Error()
		}
		res.Body.Close()
		return true, ""
	})
}

// agentSink is an OTLP/HTTP endpoint that keeps the agent names of the
// spans the proxies export.
type agentSink struct {
	URL   string
	mu    sync.Mutex
	names map[string]int
}

func newAgentSink(t testing.TB) *agentSink {
	s := &agentSink{names: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/traces" {
			w.WriteHeader(http.StatusOK)
			return
		}
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rss := req.Traces().ResourceSpans()
		s.mu.Lock()
		for i := 0; i < rss.Len(); i++ {
			for j := 0; j < rss.At(i).ScopeSpans().Len(); j++ {
				spans := rss.At(i).ScopeSpans().At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					if v, ok := spans.At(k).Attributes().Get(semconv.GenAIAgentName); ok {
						s.names[v.AsString()]++
					}
				}
			}
		}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// agents returns the agent names seen so far.
func (s *agentSink) agents() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for n := range s.names {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// waitAgents waits until the sink has seen spans (the proxies export as
// they exit), and returns their agents.
func (s *agentSink) waitAgents(t testing.TB) []string {
	waitUntil(t, context.Background(), "spans", 30*time.Second, func() (bool, string) { return len(s.agents()) > 0, "none" })
	return s.agents()
}

// wrapFile runs mcpdrift wrap on path, the proxies exporting to sink.
func wrapFile(t testing.TB, mcpdrift string, sink *agentSink, path string) {
	t.Helper()
	out, err := exec.Command(mcpdrift, "wrap", "--env", "OTEL_EXPORTER_OTLP_ENDPOINT="+sink.URL, "--env", "OTEL_METRICS_EXPORTER=none", path).CombinedOutput()
	if err != nil {
		t.Fatalf("wrap %s: %v\n%s", path, err, out)
	}
}

func unwrapFile(t testing.TB, mcpdrift, path string) {
	t.Helper()
	if out, err := exec.Command(mcpdrift, "unwrap", path).CombinedOutput(); err != nil {
		t.Fatalf("unwrap %s: %v\n%s", path, err, out)
	}
}

// connected returns the servers `gemini mcp list` reports connected.
func geminiConnected(out string) []string {
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "✓ "), ": "); ok && strings.HasSuffix(rest, "- Connected") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Gemini CLI: every kind of entry (stdio, httpUrl, url, type http) still
// connects when wrapped, with no warning about the file; the spans name
// the agent gemini-cli, not the clientInfo of Gemini's health check
// (mcp-test-client); unwrap gives the file back byte for byte.
func TestGeminiCLIWrapped(t *testing.T) {
	t.Parallel()
	gemini := testservers.NPMPackage(t, "gemini-cli-0.61.0", ".bin/gemini")
	mcpdrift := built(t, "bin/mcpdrift")
	h := newHostEnv(t)
	url := everythingHTTP(t)
	settings := filepath.Join(h.home, ".gemini", "settings.json")
	writeText(t, filepath.Join(h.home, ".gemini", "trustedFolders.json"), fmt.Sprintf(`{%q: "TRUST_FOLDER"}`, h.project))
	orig := fmt.Sprintf(`{
  "mcpServers": {
    "stdio": {"command": %q, "args": [%q], "timeout": 30000},
    "streamable": {"httpUrl": %q, "timeout": 30000},
    "auto": {"url": %q},
    "typed": {"type": "http", "url": %q}
  }
}
`, testservers.Node(t), testservers.Everything(t, "2026.1.26"), url, url, url)
	writeText(t, settings, orig)
	want := []string{"auto", "stdio", "streamable", "typed"}
	if out := h.run(t, gemini, "mcp", "list"); !slices.Equal(geminiConnected(out), want) {
		t.Fatalf("unwrapped: connected %v, want %v:\n%s", geminiConnected(out), want, out)
	}

	sink := newAgentSink(t)
	wrapFile(t, mcpdrift, sink, settings)
	out := h.run(t, gemini, "mcp", "list")
	if got := geminiConnected(out); !slices.Equal(got, want) || strings.Count(out, "mcpdrift proxy") != len(want) {
		t.Errorf("wrapped: connected %v, want %v through the proxy:\n%s", got, want, out)
	}
	if strings.Contains(out, "Invalid configuration") {
		t.Errorf("Gemini CLI finds the wrapped file invalid:\n%s", out)
	}
	if agents := sink.waitAgents(t); !slices.Equal(agents, []string{"gemini-cli"}) {
		t.Errorf("spans name the agents %v, want [gemini-cli]", agents)
	}
	unwrapFile(t, mcpdrift, settings)
	if got := readText(t, settings); got != orig {
		t.Errorf("unwrap did not restore the file:\n%s", got)
	}
}

// Codex CLI: the wrapped config.toml is Codex's to read (codex mcp get
// shows the proxied entries, whether written as tables, an inline table or
// dotted keys); unwrap restores the bytes; and after Codex rewrote the file
// (codex mcp add, which drops keys it does not know from mcp_servers and
// writes dotted keys as tables), unwrap gives every server back as Codex
// read it before the wrap, with no backup and no gap where the stash was.
func TestCodexCLIWrapped(t *testing.T) {
	t.Parallel()
	codex := testservers.NPMPackage(t, "codex-0.171.0", ".bin/codex")
	mcpdrift := built(t, "bin/mcpdrift")
	h := newHostEnv(t)
	config := filepath.Join(h.home, ".codex", "config.toml")
	sample, err := os.ReadFile(filepath.Join(testservers.RepoRoot(), "cmd", "mcpdrift", "internal", "hostconfig", "testdata", "hosts", "codex-config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	writeText(t, config, string(sample))
	servers := []string{"everything", "figma", "notion", "scoped", "inline", "memory"}
	before := map[string]string{}
	for _, name := range servers {
		before[name] = h.run(t, codex, "mcp", "get", name, "--json")
	}
	sink := newAgentSink(t)
	wrapFile(t, mcpdrift, sink, config)

	for name, want := range map[string]string{
		"everything": "--server-command npx --server-arg=-y --server-arg=@modelcontextprotocol/server-everything",
		"figma":      "--upstream https://mcp.figma.com/mcp --header-env X-Figma-Region=MCPDRIFT_HEADER_X_FIGMA_REGION --header-env X-Team=FIGMA_TEAM --bearer-token-env FIGMA_OAUTH_TOKEN",
		"inline":     "--server-command uvx --server-arg=mcp-server-time",
		"memory":     "--server-command npx --server-arg=-y --server-arg=@modelcontextprotocol/server-memory",
	} {
		var got struct {
			Transport struct {
				Command string            `json:"command"`
				Args    []string          `json:"args"`
				Env     map[string]string `json:"env"`
				EnvVars []string          `json:"env_vars"`
			} `json:"transport"`
		}
		out := h.run(t, codex, "mcp", "get", name, "--json")
		if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &got); err != nil {
			t.Fatalf("codex mcp get %s: %v\n%s", name, err, out)
		}
		args := strings.Join(got.Transport.Args, " ")
		if got.Transport.Command != mcpdrift || !strings.Contains(args, "--agent-name codex") || !strings.HasSuffix(args, want) || got.Transport.Env["OTEL_EXPORTER_OTLP_ENDPOINT"] != sink.URL {
			t.Errorf("codex reads %s as %+v", name, got.Transport)
		}
		if name == "figma" && !slices.Equal(got.Transport.EnvVars, []string{"FIGMA_TEAM", "FIGMA_OAUTH_TOKEN"}) {
			t.Errorf("figma's env_vars %v: Codex would not pass the proxy its token", got.Transport.EnvVars)
		}
		if name == "memory" && got.Transport.Env["MEMORY_FILE_PATH"] != "/home/dev/memory.jsonl" {
			t.Errorf("memory's env %v: the dotted env key is lost", got.Transport.Env)
		}
	}
	if out := h.run(t, codex, "mcp", "list"); strings.Count(out, mcpdrift) != 5 {
		t.Errorf("codex mcp list shows %d proxied servers, want 5:\n%s", strings.Count(out, mcpdrift), out)
	}
	unwrapFile(t, mcpdrift, config)
	if readText(t, config) != string(sample) {
		t.Errorf("unwrap did not restore the bytes:\n%s", readText(t, config))
	}

	wrapFile(t, mcpdrift, sink, config)
	h.run(t, codex, "mcp", "add", "added", "--", "npx", "added-server")
	rewritten := readText(t, config)
	if !strings.Contains(rewritten, "startup_timeout_sec = 20.0") || !strings.Contains(rewritten, "[mcp_servers.memory]") {
		t.Fatalf("codex mcp add did not rewrite the server tables (20 as 20.0, dotted keys as a table): the test no longer shows a host's rewrite:\n%s", rewritten)
	}
	if err := os.Remove(config + ".mcpdrift.bak"); err != nil { // unwrap must not need it
		t.Fatal(err)
	}
	unwrapFile(t, mcpdrift, config)
	after := readText(t, config)
	if strings.Contains(after, "x-mcpdrift") || strings.Contains(after, mcpdrift) || strings.Contains(after, "\n\n\n") {
		t.Errorf("after codex's rewrite, unwrap left a stash, a proxy or a gap:\n%s", after)
	}
	for _, name := range servers {
		if got := h.run(t, codex, "mcp", "get", name, "--json"); got != before[name] {
			t.Errorf("after codex's rewrite and unwrap, codex reads %s as\n%s\nwant, as before the wrap,\n%s", name, got, before[name])
		}
	}
	if !strings.Contains(after, "[mcp_servers.everything]\ncommand = \"npx\" # found on PATH\n") {
		t.Errorf("unwrap did not put back everything's original lines:\n%s", after)
	}
}

// The MCP Inspector CLI appends its own flags after an entry's args: a
// wrapped entry answers tools/list and tools/call as the unwrapped one does,
// in every mode: stdio -> stdio and stdio -> HTTP from --config (the
// Inspector's --config reads only command entries, so the url entry is
// compared with the Inspector reaching the URL itself), and HTTP -> HTTP
// through a listening proxy.
func TestInspectorCLIWrapped(t *testing.T) {
	t.Parallel()
	inspector := testservers.NPMPackage(t, "inspector-0.15.0", ".bin/mcp-inspector")
	mcpdrift := built(t, "bin/mcpdrift")
	h := newHostEnv(t)
	config := filepath.Join(h.project, ".mcp.json")
	url := everythingHTTP(t)
	writeText(t, config, fmt.Sprintf(`{"mcpServers": {"everything": {"command": %q, "args": [%q]}, "remote": {"type": "http", "url": %q}}}`, testservers.Node(t), testservers.Everything(t, "2026.1.26"), url))
	methods := [][]string{
		{"--method", "tools/list"},
		{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=through"},
	}
	ask := func(target ...string) []string {
		var answers []string
		for _, m := range methods {
			answers = append(answers, h.run(t, append(append([]string{inspector, "--cli"}, target...), m...)...))
		}
		return answers
	}
	direct := ask("--config", config, "--server", "everything")
	if !strings.Contains(direct[1], "Echo: through") {
		t.Fatalf("unwrapped tools/call: %s", direct[1])
	}
	sink := newAgentSink(t)
	wrapFile(t, mcpdrift, sink, config)
	if got := ask("--config", config, "--server", "everything"); !slices.Equal(got, direct) {
		t.Errorf("stdio -> stdio: wrapped answers differ:\n%s\nwant\n%s", got, direct)
	}
	viaHTTP := ask(url)
	if got := ask("--config", config, "--server", "remote"); !slices.Equal(got, viaHTTP) {
		t.Errorf("stdio -> HTTP: wrapped answers differ:\n%s\nwant\n%s", got, viaHTTP)
	}

	port := testservers.FreePort(t)
	proxy := exec.Command(mcpdrift, "proxy", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--upstream", url)
	proxy.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+sink.URL, "OTEL_METRICS_EXPORTER=none")
	if err := proxy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Process.Kill(); _ = proxy.Wait() })
	proxied := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	waitListening(t, "the HTTP -> HTTP proxy", proxied)
	if got := ask(proxied); !slices.Equal(got, viaHTTP) {
		t.Errorf("HTTP -> HTTP: answers through the proxy differ:\n%s\nwant\n%s", got, viaHTTP)
	}
	if agents := sink.waitAgents(t); !slices.Contains(agents, "claude-code") {
		t.Errorf("spans name the agents %v: the .mcp.json entry should name claude-code", agents)
	}
}

// BenchmarkHostFirstToolList: how long a host takes to reach its server
// and list its tools, through the wrapped entry and the plain one, run
// alternately (a scratch HOME each): `gemini mcp list`, which connects to
// every server, `claude mcp list`, which connects to every server and
// lists its tools, and the Inspector CLI's tools/list, all on
// server-everything over stdio. The host's own start-up dominates, so both
// medians are reported, and their ratio. Run with -benchtime 10x.
func BenchmarkHostFirstToolList(b *testing.B) {
	mcpdrift := built(b, "bin/mcpdrift")
	server := fmt.Sprintf(`{"command": %q, "args": [%q], "timeout": 60000}`, testservers.Node(b), testservers.Everything(b, "2026.1.26"))
	sink := newAgentSink(b)
	b.Run("gemini-cli", func(b *testing.B) {
		gemini := testservers.NPMPackage(b, "gemini-cli-0.61.0", ".bin/gemini")
		homes := make([]hostEnv, 2)
		for i := range homes {
			homes[i] = newHostEnv(b)
			writeText(b, filepath.Join(homes[i].home, ".gemini", "trustedFolders.json"), fmt.Sprintf(`{%q: "TRUST_FOLDER"}`, homes[i].project))
			settings := filepath.Join(homes[i].home, ".gemini", "settings.json")
			writeText(b, settings, `{"mcpServers": {"everything": `+server+`}}`)
			if i == 1 {
				wrapFile(b, mcpdrift, sink, settings)
			}
		}
		firstList(b, homes, func(h hostEnv) {
			if out := h.run(b, gemini, "mcp", "list"); len(geminiConnected(out)) != 1 {
				b.Fatalf("not connected:\n%s", out)
			}
		})
	})
	b.Run("inspector-cli", func(b *testing.B) {
		inspector := testservers.NPMPackage(b, "inspector-0.15.0", ".bin/mcp-inspector")
		homes := make([]hostEnv, 2)
		for i := range homes {
			homes[i] = newHostEnv(b)
			config := filepath.Join(homes[i].project, ".mcp.json")
			writeText(b, config, `{"mcpServers": {"everything": `+server+`}}`)
			if i == 1 {
				wrapFile(b, mcpdrift, sink, config)
			}
		}
		firstList(b, homes, func(h hostEnv) {
			if out := h.run(b, inspector, "--cli", "--config", ".mcp.json", "--server", "everything", "--method", "tools/list"); !strings.Contains(out, `"echo"`) {
				b.Fatalf("no tools:\n%s", out)
			}
		})
	})
	b.Run("claude-code", func(b *testing.B) {
		claude := testservers.ClaudeCode(b)
		homes := make([]claudeProject, 2)
		for i := range homes {
			homes[i] = newClaudeProject(b, b.TempDir(), "http://127.0.0.1:9") // no model is asked
			// claude mcp list connects to a project's servers once its folder is trusted.
			writeText(b, filepath.Join(homes[i].home, ".claude.json"), fmt.Sprintf(`{"projects": {%q: {"hasTrustDialogAccepted": true}}}`, homes[i].project))
			config := filepath.Join(homes[i].project, ".mcp.json")
			writeText(b, config, `{"mcpServers": {"everything": `+server+`}}`)
			if i == 1 {
				wrapFile(b, mcpdrift, sink, config)
			}
		}
		firstList(b, homes, func(p claudeProject) {
			if out := p.run(b, claude, "mcp", "list"); !slices.Equal(claudeConnected(out), []string{"everything"}) {
				b.Fatalf("not connected:\n%s", out)
			}
		})
	})
}

// firstList times list in homes[0] (plain) and homes[1] (wrapped) in turn,
// b.N times each, and reports both medians and their ratio.
func firstList[H any](b *testing.B, homes []H, list func(H)) {
	var plain, wrapped benchutil.Latencies
	for b.Loop() {
		plain.Time(func() { list(homes[0]) })
		wrapped.Time(func() { list(homes[1]) })
	}
	p, w := plain.P50(), wrapped.P50()
	b.ReportMetric(p.Seconds()*1000, "unwrapped-ms")
	b.ReportMetric(w.Seconds()*1000, "wrapped-ms")
	b.ReportMetric(w.Seconds()/p.Seconds(), "wrapped/unwrapped")
}
