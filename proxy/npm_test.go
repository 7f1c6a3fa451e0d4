package proxy_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/internal/dev/testkit/testservers"
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
// launches the proxy as its server, which launches server-everything.
func TestNodeAgentOverStdio(t *testing.T) {
	node, entry := testservers.Node(t), testservers.Everything(t, "2025.11.25")
	testservers.MarkProcesses(t) // the agent, the proxy, the server: none outlives the test
	// The TypeScript SDK the pinned traceloop install brings (testdata/npm).
	sdk := filepath.Join(filepath.Dir(testservers.NPMPackage(t, "traceloop-mcp-0.27", "@modelcontextprotocol/sdk/dist/esm/client/index.js")), "..", "..", "..")
	server, _ := json.Marshal([]string{node, entry, "stdio"})
	cmd := exec.Command(node, "testdata/agent.mjs", os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SDK_DIR="+sdk, "MCPDRIFT_PROXY_TEST_CHILD=proxy", "MCPDRIFT_PROXY_TEST_SERVER="+string(server))
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
