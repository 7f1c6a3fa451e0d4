//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/messagesapi"
	"github.com/mcpdrift/mcpdrift/dev/quickstart"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestClaudeCodeWrapped: Claude Code as a user runs it (issue 24), in a
// scratch HOME, with servers in both of its files: server-everything over
// stdio in the project's .mcp.json, and in ~/.claude.json's section for the
// project the quickstart server over HTTP twice — directly, and through a
// listening `mcpdrift proxy` in front of it (a proxy deployed with the
// server, for every agent). `mcpdrift wrap` wraps both files (the listening
// proxy's entry is skipped: it is proxied already), so the three proxy
// modes carry Claude Code's calls: stdio -> stdio (everything), stdio ->
// HTTP (demo-tools) and HTTP -> HTTP (demo-shared). `claude mcp list`
// reports every server connected through them; one `claude -p`, its model
// scripted by the Messages API stand-in, calls one tool per mode and gets
// each answer; the spans, in otelcol-mcpdrift's output, name the agent
// claude-code; unwrap gives .mcp.json back byte for byte and
// ~/.claude.json, which Claude Code rewrote in its own format, the same
// servers.
func TestClaudeCodeWrapped(t *testing.T) {
	t.Parallel()
	began := time.Now()
	o := binaries(t)
	claude := testservers.ClaudeCode(t)
	mcpdrift := built(t, "bin/mcpdrift")
	// 2025.11.25 lists its tools at initialize; 2026.x adds them after it
	// and announces list_changed, which Claude Code may not have acted on
	// by the first turn (seen: echo missing from the tools offered).
	everything := testservers.Everything(t, "2025.11.25")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s := startV1Stack(t, ctx, o)
	shared := listeningProxy(t, ctx, mcpdrift, s, o.Dir)

	api, err := messagesapi.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	p := newClaudeProject(t, o.Dir, api.URL)
	mcpJSON, claudeJSON := filepath.Join(p.project, ".mcp.json"), filepath.Join(p.home, ".claude.json")
	mcpOrig := fmt.Sprintf(`{
  "mcpServers": {
    "everything": {"command": %q, "args": [%q, "stdio"]}
  }
}
`, testservers.Node(t), everything)
	write(t, mcpJSON, mcpOrig)
	claudeOrig := fmt.Sprintf(`{
  "projects": {
    %q: {
      "hasTrustDialogAccepted": true,
      "mcpServers": {
        "demo-tools": {"type": "http", "url": %q},
        "demo-shared": {"type": "http", "url": %q}
      }
    }
  }
}
`, p.project, s.ServerURL(), shared)
	write(t, claudeJSON, claudeOrig)
	wrapForCollector(t, mcpdrift, s, mcpJSON)
	wrapForCollector(t, mcpdrift, s, claudeJSON, "--skip", "demo-shared")

	servers := []string{"demo-shared", "demo-tools", "everything"}
	list := p.run(t, claude, "mcp", "list")
	if got := claudeConnected(list); !slices.Equal(got, servers) {
		t.Fatalf("claude mcp list: connected %v, want %v:\n%s", got, servers, list)
	}
	if n := strings.Count(list, mcpdrift+" proxy"); n != 2 {
		t.Errorf("claude mcp list shows %d servers started through mcpdrift proxy, want 2 (everything, demo-tools):\n%s", n, list)
	}

	host := p.start(t, ctx, claude, "Echo a message, search the docs, then get the weather.", "mcp__everything", "mcp__demo-tools", "mcp__demo-shared")
	calls := []struct {
		mode, tool string
		input      map[string]any
		answer     string
	}{
		{"stdio -> stdio", "mcp__everything__echo", map[string]any{"message": "through the proxy"}, "Echo: through the proxy"},
		{"stdio -> HTTP", "mcp__demo-tools__search_docs", map[string]any{"query": "proxy"}, "3 documents found"},
		{"HTTP -> HTTP", "mcp__demo-shared__get_weather", map[string]any{"city": "Lyon"}, "sunny, 21°C"},
	}
	turn := nextTurn(t, ctx, api)
	for _, c := range calls {
		if _, ok := turn.Request.Tool(c.tool); !ok {
			var offered []string
			for _, tool := range turn.Request.Tools {
				offered = append(offered, tool.Name)
			}
			t.Fatalf("%s: Claude Code does not offer %s; it offers %v", c.mode, c.tool, offered)
		}
	}
	for _, c := range calls {
		turn.Reply(toolUse(c.tool, c.input))
		turn = nextTurn(t, ctx, api)
		if r := onlyResult(t, turn.Request); r.IsError || !strings.Contains(r.Text, c.answer) {
			t.Errorf("%s: %s answered %+v, want %q", c.mode, c.tool, r, c.answer)
		}
	}
	turn.Reply(messagesapi.Reply{Text: "Done."})
	host.wait(t, servers...)

	out := eventually(t, o.Dir, "a span of each call", 60*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.ToolCalls()) >= len(calls)
	})
	for _, sp := range out.ToolCalls() {
		t.Logf("span: %s on %s, agent %q", sp.Attr(semconv.GenAIToolName), sp.ServerName(), sp.Attr(semconv.GenAIAgentName))
	}
	for _, want := range [][2]string{{"echo", "everything"}, {"search_docs", "demo-tools"}, {"get_weather", "demo-tools"}} {
		if !slices.ContainsFunc(agentCalls(out, ccAgent), func(sp quickstart.Span) bool {
			return sp.Attr(semconv.GenAIToolName) == want[0] && sp.ServerName() == want[1]
		}) {
			t.Errorf("no span of %s on %s naming the agent %s", want[0], want[1], ccAgent)
		}
	}
	if n, all := len(agentCalls(out, ccAgent)), len(out.ToolCalls()); n != all {
		t.Errorf("%d of the %d tools/call spans name the agent %s", n, all, ccAgent)
	}

	unwrapFile(t, mcpdrift, mcpJSON)
	if got := readText(t, mcpJSON); got != mcpOrig {
		t.Errorf("unwrap did not restore .mcp.json:\n%s", got)
	}
	rewritten := readText(t, claudeJSON)
	unwrapFile(t, mcpdrift, claudeJSON)
	got := readText(t, claudeJSON)
	t.Logf("Claude Code rewrote ~/.claude.json while wrapped: %v", !strings.Contains(rewritten, `"demo-shared": {"type"`))
	if strings.Contains(got, "x-mcpdrift") || strings.Contains(got, mcpdrift) {
		t.Errorf("unwrap left the proxy in ~/.claude.json:\n%s", got)
	}
	if want, have := projectServers(t, claudeOrig, p.project), projectServers(t, got, p.project); !reflect.DeepEqual(have, want) {
		t.Errorf("unwrap gave back the project's servers %v, want %v", have, want)
	}
	t.Logf("wall time: %s", time.Since(began).Round(100*time.Millisecond))
}

// listeningProxy starts `mcpdrift proxy --listen` in front of the stack's
// server, exporting to its collector, and returns its MCP endpoint.
func listeningProxy(t *testing.T, ctx context.Context, mcpdrift string, s *quickstart.Stack, dir string) string {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testservers.FreePort(t))
	log, err := os.Create(filepath.Join(dir, "listening-proxy.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, mcpdrift, "proxy", "--listen", addr, "--upstream", s.ServerURL())
	cmd.Env = append(withoutEnv(os.Environ(), "OTEL_"), collectorEnv(s)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); log.Close() })
	url := "http://" + addr + "/mcp"
	waitListening(t, "the listening proxy", url)
	return url
}

// projectServers decodes the servers of a ~/.claude.json's project section.
func projectServers(t *testing.T, text, project string) any {
	t.Helper()
	var f struct {
		Projects map[string]struct {
			MCPServers any `json:"mcpServers"`
		} `json:"projects"`
	}
	if err := json.Unmarshal([]byte(text), &f); err != nil {
		t.Fatalf("~/.claude.json: %v\n%s", err, text)
	}
	return f.Projects[project].MCPServers
}

// collectorEnv is what a proxy needs to export its spans to the stack's
// collector promptly.
func collectorEnv(s *quickstart.Stack) []string {
	return []string{
		fmt.Sprintf("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:%d", s.Ports.OTLPHTTP),
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_BSP_SCHEDULE_DELAY=200",
	}
}

// wrapForCollector runs mcpdrift wrap on path, the proxies it starts
// exporting to the stack's collector.
func wrapForCollector(t *testing.T, mcpdrift string, s *quickstart.Stack, path string, flags ...string) {
	t.Helper()
	args := append([]string{"wrap"}, flags...)
	for _, kv := range collectorEnv(s) {
		args = append(args, "--env", kv)
	}
	if b, err := exec.Command(mcpdrift, append(args, path)...).CombinedOutput(); err != nil {
		t.Fatalf("mcpdrift wrap %s: %v\n%s", path, err, b)
	}
}

// claudeProject is a scratch HOME and a project directory in it for Claude
// Code, as a user has them: the project's servers enabled, the model's API
// at a stand-in, any API key, the servers connected before a prompt runs
// (MCP_CONNECTION_NONBLOCKING=0, and MCP_CONNECT_TIMEOUT_MS because that
// wait is 5 s by default, which a loaded machine's server start outruns),
// every tool offered with its schema (ENABLE_TOOL_SEARCH=false).
type claudeProject struct {
	hostEnv
	logs string
}

func newClaudeProject(t testing.TB, logs, apiURL string) claudeProject {
	t.Helper()
	home := filepath.Join(logs, "home")
	p := claudeProject{hostEnv: hostEnv{home: home, project: filepath.Join(home, "project")}, logs: logs}
	if err := os.MkdirAll(filepath.Join(p.project, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeText(t, filepath.Join(p.project, ".claude", "settings.json"), `{"enableAllProjectMcpServers": true}`+"\n")
	p.env = append(withoutEnv(os.Environ(), "ANTHROPIC_", "CLAUDE_", "OTEL_"),
		"HOME="+home, "ANTHROPIC_BASE_URL="+apiURL, "ANTHROPIC_API_KEY=sk-ant-e2e-stand-in",
		"MCP_CONNECTION_NONBLOCKING=0", "MCP_CONNECT_TIMEOUT_MS=60000", "ENABLE_TOOL_SEARCH=false",
		"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")
	return p
}

// claudeConnected returns the servers `claude mcp list` reports connected.
func claudeConnected(out string) []string {
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if name, _, ok := strings.Cut(line, ": "); ok && strings.HasSuffix(line, "✔ Connected") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// claudeHost is a running `claude -p`.
type claudeHost struct {
	cmd    *exec.Cmd
	stdout string
	done   chan error
}

// start starts `claude -p prompt` in the project, the tools of the allowed
// servers allowed.
func (p claudeProject) start(t testing.TB, ctx context.Context, claude, prompt string, allowed ...string) *claudeHost {
	t.Helper()
	stdout := filepath.Join(p.logs, "claude-stdout.log")
	f, err := os.Create(stdout)
	if err != nil {
		t.Fatal(err)
	}
	debug := filepath.Join(p.logs, "claude-debug.log")
	cmd := exec.CommandContext(ctx, claude, "-p", prompt,
		"--output-format", "stream-json", "--verbose",
		"--allowedTools", strings.Join(allowed, ","),
		"--debug-file", debug)
	cmd.Dir, cmd.Env = p.project, p.env
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &claudeHost{cmd: cmd, stdout: stdout, done: make(chan error, 1)}
	go func() { h.done <- cmd.Wait(); f.Close() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-h.done
		if t.Failed() {
			logMCPDebug(t, debug)
		}
	})
	return h
}

// wait waits for Claude Code to finish its prompt and checks it ran with
// these servers (sorted) connected.
func (h *claudeHost) wait(t testing.TB, servers ...string) {
	t.Helper()
	select {
	case err := <-h.done:
		h.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("claude exited: %v (output in %s)", err, h.stdout)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("claude did not exit after its last turn (output in %s)", h.stdout)
	}
	raw, err := os.ReadFile(h.stdout)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Type, Subtype string
			MCPServers    []struct{ Name, Status string } `json:"mcp_servers"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type != "system" || ev.Subtype != "init" {
			continue
		}
		var connected []string
		for _, s := range ev.MCPServers {
			if s.Status == "connected" {
				connected = append(connected, s.Name)
			}
		}
		slices.Sort(connected)
		if !slices.Equal(connected, servers) {
			t.Errorf("Claude Code's MCP servers at start: %+v, want %v connected", ev.MCPServers, servers)
		}
		return
	}
	t.Errorf("no init event in Claude Code's output (%s)", h.stdout)
}

// logMCPDebug logs what Claude Code's debug log says about its MCP servers
// (their connection, the proxies' stderr, list_changed).
func logMCPDebug(t testing.TB, path string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Logf("Claude Code's debug log: %v", err)
		return
	}
	var lines []string
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.Contains(l, `MCP server "`) {
			lines = append(lines, l)
		}
	}
	if len(lines) > 80 {
		lines = lines[len(lines)-80:]
	}
	t.Logf("Claude Code's debug log on the servers:\n%s", strings.Join(lines, "\n"))
}
