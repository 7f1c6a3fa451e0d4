package proxy_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// httpProxy serves the HTTP → HTTP proxy to upstream in the test.
func httpProxy(t *testing.T, upstream string, tel *telemetry) *httptest.Server {
	t.Helper()
	return httpProxyWith(t, proxy.Config{Upstream: upstream, Listen: "test", InjectTraceContext: true}, tel)
}

// httpProxyWith serves the HTTP → HTTP proxy configured by cfg in the test.
func httpProxyWith(t *testing.T, cfg proxy.Config, tel *telemetry) *httptest.Server {
	t.Helper()
	h, err := proxy.NewHandler(cfg, tel.Telemetry)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	return hs
}

// TestEverythingOverHTTP: the real npm server-everything behind the HTTP →
// HTTP proxy, driven by the Go SDK client (Streamable HTTP, a 2025 session
// with Mcp-Session-Id and SSE responses): calls work and are spans stamped
// with the served definition; a request on an unknown session gets the
// server's own 404.
func TestEverythingOverHTTP(t *testing.T) {
	base := testservers.EverythingHTTP(t, "2025.11.25", "streamableHttp")
	tel := newTelemetry(t)
	hs := httpProxy(t, base+"/mcp", tel)
	c := mcp.NewClient(&mcp.Implementation{Name: "http-agent", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %v", err, res)
	}
	call := tel.waitNamed(t, "tools/call echo", 1)[0]
	list := tel.named("tools/list")[0]
	for key, want := range map[string]string{
		semconv.ServerURL:      base + "/mcp",
		semconv.ServerName:     "example-servers/everything",
		semconv.ClientSession:  str(list, semconv.ClientSession),
		semconv.ToolsSetDigest: str(list, semconv.ToolsSetDigest),
	} {
		if got := str(call, key); got != want || got == "" {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if str(call, semconv.MCPSessionID) == "" || len(str(call, semconv.ToolDigest)) != 64 {
		t.Errorf("session id %q, digest %q", str(call, semconv.MCPSessionID), str(call, semconv.ToolDigest))
	}

	// An unknown session's answer reaches the client as the server sent it
	// (server-everything says 400; a server that lost a session says 404,
	// TestHTTPPassesStatus).
	status := func(url string) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", "gone")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if direct, proxied := status(base+"/mcp"), status(hs.URL+"/mcp"); direct != proxied || direct < 400 {
		t.Errorf("unknown session: direct %d, through the proxy %d", direct, proxied)
	}
}

// TestHTTPPassesStatus: a 404 for a lost session, and its body, pass
// through; the proxy does not re-initialize in HTTP → HTTP mode.
func TestHTTPPassesStatus(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "session not found", http.StatusNotFound)
	}))
	defer up.Close()
	hs := httpProxy(t, up.URL+"/mcp", newTelemetry(t))
	req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Session-Id", "gone")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || string(b) != "session not found\n" {
		t.Errorf("got %d %q", resp.StatusCode, b)
	}
}

// TestHTTPUpstreamDown: an unreachable upstream is a 502 naming it, never a hang.
func TestHTTPUpstreamDown(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	hs := httpProxy(t, down.URL+"/mcp", newTelemetry(t))
	req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d, want 502", resp.StatusCode)
	}
}

// TestHTTPConcurrentSessions: sessions whose handshakes cross the proxy at
// the same time are told apart: each Mcp-Session-Id is one
// mcpdrift.client.session, and each of its calls carries its own.
func TestHTTPConcurrentSessions(t *testing.T) {
	const n = 20
	s := mcp.NewServer(&mcp.Implementation{Name: "concurrent", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer up.Close()
	tel := newTelemetry(t)
	hs := httpProxy(t, up.URL, tel)
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Error(err)
				return
			}
			defer cs.Close()
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	bySession := map[string]string{} // mcp.session.id -> mcpdrift.client.session
	clients := map[string]bool{}
	for _, sp := range tel.waitNamed(t, "tools/call echo", n) {
		sid, client := str(sp, semconv.MCPSessionID), str(sp, semconv.ClientSession)
		if prev, ok := bySession[sid]; (ok && prev != client) || sid == "" {
			t.Errorf("session %q: client sessions %q and %q", sid, prev, client)
		}
		bySession[sid] = client
		clients[client] = true
	}
	if len(bySession) != n || len(clients) != n {
		t.Errorf("%d sessions through the proxy: %d Mcp-Session-Ids, %d client sessions", n, len(bySession), len(clients))
	}
}

// TestHTTPUpstreamQuery: an upstream URL's query (where hosted servers take
// an API key) goes with every request to the upstream's endpoint, over the
// client's parameters of the same name; the client's others go too.
func TestHTTPUpstreamQuery(t *testing.T) {
	queries := make(chan string, 2)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries <- r.URL.RawQuery
		w.WriteHeader(http.StatusAccepted)
	}))
	defer up.Close()
	hs := httpProxy(t, up.URL+"/mcp?api_key=k1", newTelemetry(t))
	for _, path := range []string{"/", "/mcp?api_key=other&profile=p"} {
		req, _ := http.NewRequest(http.MethodPost, hs.URL+path, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if a, b := <-queries, <-queries; a != "api_key=k1" || b != "api_key=k1&profile=p" {
		t.Errorf("the upstream got queries %q and %q", a, b)
	}
}
