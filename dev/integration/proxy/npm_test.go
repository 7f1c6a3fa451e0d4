package proxy_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestEverythingOverStdio: the real npm server-everything through the
// proxy, driven by the Go SDK client: its calls are spans stamped with the
// definition the session was served, the agent named by its clientInfo.
func TestEverythingOverStdio(t *testing.T) {
	node, entry := testservers.Node(t), testservers.Everything(t, "2025.11.25")
	tel := newTelemetry(t)
	p := startStdio(t, proxy.Config{Command: []string{node, entry, "stdio"}, InjectTraceContext: true, ShutdownGrace: 1}, tel, "")
	a := connectAgent(t, p)
	lt, err := a.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(lt.Tools, func(tool *mcp.Tool) bool { return tool.Name == "echo" }) {
		t.Fatalf("no echo tool in %d tools", len(lt.Tools))
	}
	res := a.call(t, "echo", map[string]any{"message": "hi"})
	if tc, _ := res.Content[0].(*mcp.TextContent); tc == nil || tc.Text != "Echo: hi" {
		t.Errorf("echo answered %v", res.Content)
	}
	list := tel.waitNamed(t, "tools/list", 1)[0]
	call := tel.waitNamed(t, "tools/call echo", 1)[0]
	for key, want := range map[string]string{
		semconv.ServerName:         "example-servers/everything",
		semconv.ServerURL:          "stdio:" + node + " " + entry + " stdio",
		semconv.GenAIAgentName:     "gate-agent",
		semconv.MCPProtocolVersion: "2025-11-25",
		semconv.ToolsSetDigest:     str(list, semconv.ToolsSetDigest),
		semconv.ClientSession:      str(list, semconv.ClientSession),
	} {
		if got := str(call, key); got != want || got == "" {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if d := str(call, semconv.ToolDigest); len(d) != 64 {
		t.Errorf("%s = %q", semconv.ToolDigest, d)
	}
	if got := str(tel.waitNamed(t, "initialize", 1)[0], semconv.GenAIAgentName); got != "gate-agent" {
		t.Errorf("initialize span: %s = %q, want the clientInfo name it carries", semconv.GenAIAgentName, got)
	}
}

// TestNodeAgentOverStdio: a TypeScript SDK agent (no Go in the agent)
// launches the proxy as its server, which launches server-everything — or,
// stdio → HTTP, reaches it over Streamable HTTP and over the deprecated
// HTTP+SSE.
func TestNodeAgentOverStdio(t *testing.T) {
	node, entry := testservers.Node(t), testservers.Everything(t, "2025.11.25")
	testservers.MarkProcesses(t) // the agent, the proxy, the server: none outlives the test
	server, _ := json.Marshal([]string{node, entry, "stdio"})
	for name, env := range map[string]string{
		"stdio":           "MCPDRIFT_PROXY_TEST_SERVER=" + string(server),
		"streamable-http": "MCPDRIFT_PROXY_TEST_UPSTREAM=" + testservers.EverythingHTTP(t, "2025.11.25", "streamableHttp") + "/mcp",
		"sse":             "MCPDRIFT_PROXY_TEST_UPSTREAM=" + testservers.EverythingHTTP(t, "2025.11.25", "sse") + "/sse",
	} {
		t.Run(name, func(t *testing.T) {
			runNodeAgent(t, []string{os.Args[0], "-test.run=^$"}, "MCPDRIFT_PROXY_TEST_CHILD=proxy", env)
		})
	}
}

// TestNodeAgentThroughHTTP: a TypeScript SDK agent reaches server-everything
// through the HTTP → HTTP proxy over Streamable HTTP: its calls are spans
// stamped with the definition its session was served, and named by its
// clientInfo.
func TestNodeAgentThroughHTTP(t *testing.T) {
	upstream := testservers.EverythingHTTP(t, "2025.11.25", "streamableHttp") + "/mcp"
	tel := newTelemetry(t)
	h, err := proxy.NewHandler(proxy.Config{Upstream: upstream, Listen: "test", InjectTraceContext: true}, tel.Telemetry)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	runNodeAgent(t, []string{hs.URL + "/mcp"})
	list := tel.waitNamed(t, "tools/list", 1)[0]
	checkCallSpan(t, tel.waitNamed(t, "tools/call echo", 1)[0], map[string]string{
		semconv.ServerURL:      upstream,
		semconv.ServerName:     "example-servers/everything",
		semconv.ToolsSetDigest: str(list, semconv.ToolsSetDigest),
		semconv.ClientSession:  str(list, semconv.ClientSession),
		semconv.GenAIAgentName: "node-agent", // its initialize clientInfo: the proxy names no agent itself
	})
}

// runNodeAgent runs testdata/agent.mjs against target (a command and its
// arguments, or a URL) and checks it listed echo and got its answer.
func runNodeAgent(t *testing.T, target []string, env ...string) {
	t.Helper()
	// The TypeScript SDK the pinned traceloop install brings (testdata/npm).
	sdk := filepath.Join(filepath.Dir(testservers.NPMPackage(t, "traceloop-mcp-0.27", "@modelcontextprotocol/sdk/dist/esm/client/index.js")), "..", "..", "..")
	cmd := exec.Command(testservers.Node(t), append([]string{"testdata/agent.mjs"}, target...)...)
	cmd.Env = append(append(os.Environ(), "SDK_DIR="+sdk), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node agent: %v\n%s", err, out)
	}
	var got struct {
		Tools []string
		Text  string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node agent printed %q: %v", out, err)
	}
	if got.Text != "Echo: from node" || !slices.Contains(got.Tools, "echo") {
		t.Errorf("node agent saw %+v", got)
	}
}
