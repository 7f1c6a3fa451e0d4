package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/probe"
)

// mcpServer serves a small Go SDK server over Streamable HTTP.
func mcpServer(t *testing.T, auth string) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "cli-test", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "search", Description: "Search the catalogue",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth != "" && r.Header.Get("Authorization") != auth {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+"http://"+r.Host+`/.well-known/oauth-protected-resource"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestSnapshotToStdout(t *testing.T) {
	url := mcpServer(t, "")
	code, out, stderr := runCLI("snapshot", "--url", url, "--name", "catalogue", "--settle", "20ms")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s, err := contract.DecodeSnapshot([]byte(out))
	if err != nil {
		t.Fatalf("stdout is not a snapshot: %v", err)
	}
	if s.Server.Name != "catalogue" || s.Server.Transport != "streamable-http" || s.SpecGeneration != contract.SpecStateless2026 || len(s.Tools) != 1 {
		t.Errorf("snapshot %+v", s.Server)
	}
}

func TestSnapshotToFileWithHeader(t *testing.T) {
	const token = "Bearer cli-0123456789-token"
	url := mcpServer(t, token)
	file := filepath.Join(t.TempDir(), "lock.json")
	code, out, stderr := runCLI("snapshot", "--url", url, "-H", "Authorization: "+token, "-o", file, "--settle", "20ms")
	if code != exitOK || out != "" {
		t.Fatalf("exit %d, stdout %q: %s", code, out, stderr)
	}
	if !strings.Contains(stderr, "wrote "+file+": 1 tools") {
		t.Errorf("summary line: %s", stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("0123456789")) {
		t.Error("the header value leaked into the snapshot")
	}
	if _, err := contract.DecodeSnapshot(data); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotFailures(t *testing.T) {
	url := mcpServer(t, "Bearer right-0123456789")
	code, _, stderr := runCLI("snapshot", "--url", url, "-H", "Authorization: Bearer wrong-9876543210", "--settle", "20ms")
	if code != exitProbe || !strings.Contains(stderr, "auth_required at server/discover") ||
		!strings.Contains(stderr, "/.well-known/oauth-protected-resource") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "9876543210") {
		t.Errorf("the header value leaked: %s", stderr)
	}
	code, _, stderr = runCLI("snapshot", "--stdio", "--timeout", "5s", "--", filepath.Join(t.TempDir(), "missing-server"))
	if code != exitProbe || !strings.Contains(stderr, "unreachable at connect") {
		t.Errorf("missing command: exit %d: %s", code, stderr)
	}
}

func TestSnapshotUsage(t *testing.T) {
	for _, args := range [][]string{
		{"snapshot"},
		{"snapshot", "--url", "http://x/mcp", "--stdio", "--", "node"},
		{"snapshot", "--stdio"},
		{"snapshot", "--url", "http://x/mcp", "-H", "no colon"},
		{"snapshot", "--url", "http://x/mcp", "--client-capabilities", "[1]"},
		{"snapshot", "--url", "http://x/mcp", "--transport", "websocket"},
		{"snapshot", "--url", "http://x/mcp", "--", "node"},
		{"snapshot", "--url", "http://x/mcp", "--cert-file", "c.pem"},
	} {
		if code, _, stderr := runCLI(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitUsage, stderr)
		}
	}
}

// A header value with CR or LF would make every probe fail as unreachable:
// it is a usage error that names the header and never prints its value.
func TestSnapshotRefusesHeaderWithLineBreak(t *testing.T) {
	url := mcpServer(t, "")
	for _, v := range []string{"Bearer tok-0123456789\r\nX-Injected: 1", "Bearer tok-0123456789\nX", "tok-0123456789\rX"} {
		code, _, stderr := runCLI("snapshot", "--url", url, "-H", "Authorization: "+v, "--settle", "20ms")
		if code != exitUsage || !strings.Contains(stderr, "header Authorization") {
			t.Errorf("%q: exit %d, want %d naming the header: %s", v, code, exitUsage, stderr)
		}
		if strings.Contains(stderr, "0123456789") {
			t.Errorf("the header value was printed: %s", stderr)
		}
	}
}

// End to end over stdio against the real npm server, declaring what the
// fixtures were captured with: the tools match the fixture.
func TestSnapshotStdioServerEverything(t *testing.T) {
	t.Parallel()
	entry := testservers.Everything(t, "2025.11.25")
	code, out, stderr := runCLI("snapshot", "--settle", "200ms", "--client-capabilities", `{"roots":{},"sampling":{},"elicitation":{}}`,
		"--stdio", "--", testservers.Node(t), entry, "stdio")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s, err := contract.DecodeSnapshot([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	fixture, err := os.ReadFile(filepath.Join(testservers.RepoRoot(), "testdata", "fixtures", "server-everything", "2025.11.25", "tools-list.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := contract.ReadDocument(contract.ReadOptions{}, fixture)
	if err != nil {
		t.Fatal(err)
	}
	if s.Digests.Tools != doc.Snapshot.Digests.Tools {
		t.Errorf("tools digest %s, fixture %s", s.Digests.Tools, doc.Snapshot.Digests.Tools)
	}
}

// statelessServer is a 2026-07-28 server answering tools/list with what
// tools returns (a JSON array), and every other method with -32601.
func statelessServer(t *testing.T, tools func() string) string {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, method, ok := testservers.ReadRequest(w, r)
		if !ok {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch method {
		case "server/discover":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"odd","version":"1"}}}}`, id)
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":%s}}`, id, tools())
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, id)
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// --settle 0 lists once (as settle: 0s does in the receiver); a negative
// settle is a usage error. The server adds a tool on every listing, so
// settling sees two listings that differ.
func TestSnapshotSettleZeroListsOnce(t *testing.T) {
	var listings atomic.Int32
	url := statelessServer(t, func() string {
		n := listings.Add(1)
		tools := make([]string, n)
		for i := range tools {
			tools[i] = fmt.Sprintf(`{"name":"t%d","inputSchema":{"type":"object"}}`, i)
		}
		return "[" + strings.Join(tools, ",") + "]"
	})
	code, out, stderr := runCLI("snapshot", "--url", url, "--settle", "0")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s, err := contract.DecodeSnapshot([]byte(out))
	if err != nil || len(s.Tools) != 1 || listings.Load() != 1 {
		t.Fatalf("--settle 0: %d tools after %d listings (%v), want one listing", len(s.Tools), listings.Load(), err)
	}
	if strings.Contains(stderr, "still changing") {
		t.Errorf("--settle 0 warns about settling: %s", stderr)
	}
	if code, _, stderr := runCLI("snapshot", "--url", url, "--settle", "-1s"); code != exitUsage || !strings.Contains(stderr, "0 lists once") {
		t.Errorf("--settle -1s: exit %d, %s", code, stderr)
	}
}

// A server whose tool names differ only in an unpaired surrogate: the
// snapshot keeps both keys exactly, and reads back with both.
func TestSnapshotSurrogateNames(t *testing.T) {
	url := statelessServer(t, func() string {
		return `[{"name":"a\udfff","inputSchema":{"type":"object"}},{"name":"a\ud800","inputSchema":{"type":"object"}}]`
	})
	code, out, stderr := runCLI("snapshot", "--url", url, "--settle", "20ms")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, `"key": "a\ud800"`) || !strings.Contains(out, `"key": "a\udfff"`) {
		t.Errorf("snapshot keys:\n%s", out)
	}
	s, err := contract.DecodeSnapshot([]byte(out))
	if err != nil || len(s.Tools) != 2 || s.Tools[0].Key == s.Tools[1].Key {
		t.Fatalf("snapshot read back: %v %q", err, s.Tools.Keys())
	}
	f := filepath.Join(t.TempDir(), "snap.json")
	if err := os.WriteFile(f, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI("hash", f); code != exitOK || !strings.Contains(out, `a\u{D800}`+"\t") || !strings.Contains(out, `a\u{DFFF}`+"\t") {
		t.Errorf("hash of the snapshot: %s", out)
	}
	if code, out, _ := runCLI("diff", f, f); code != exitOK || out != "mcpdrift: no changes\n" {
		t.Errorf("self diff: %d %s", code, out)
	}
}

// The progress line names the target by its server identity: no secrets,
// and an @ in the path is not user info.
func TestDescribeTarget(t *testing.T) {
	for _, c := range []struct {
		t    probe.Target
		want string
	}{
		{probe.Target{URL: "https://user:pw@mcp.example.com/mcp?token=abc#f"}, "https://mcp.example.com/mcp"},
		{probe.Target{URL: "https://mcp.example.com/users/@me/mcp?token=abc"}, "https://mcp.example.com/users/@me/mcp"},
		{probe.Target{Command: "/usr/bin/node", Args: []string{"server.js"}}, "stdio:node"},
	} {
		if got := describeTarget(c.t); got != c.want {
			t.Errorf("describeTarget(%+v) = %q, want %q", c.t, got, c.want)
		}
	}
}
