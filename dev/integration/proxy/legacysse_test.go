package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestUpstreamLegacySSE: stdio → HTTP to the real npm server-everything
// over the deprecated HTTP+SSE transport, found on its own (auto: the
// initialize POST is refused, the proxy opens the event stream) and by
// configuration. Messages are posted to the endpoint the stream named,
// with the configured headers; answers come back on the stream; calls are
// spans stamped with the served definition, under the configured URL and
// the endpoint's session id. A server→client request (elicitation) goes
// through both ways.
func TestUpstreamLegacySSE(t *testing.T) {
	base := testservers.EverythingHTTP(t, "2025.11.25", "sse")
	for _, transport := range []string{proxy.TransportAuto, proxy.TransportSSE} {
		t.Run(transport, func(t *testing.T) {
			rec := newRecorder(t, base)
			tel := newTelemetry(t)
			secret := "Bearer s3cr3t-legacy"
			p := startUpstream(t, proxy.Config{Upstream: rec.URL + "/sse", UpstreamTransport: transport, InjectTraceContext: true,
				Header: http.Header{"Authorization": {secret}}}, tel)
			var elicited atomic.Int32
			a := connectAgentWith(t, p, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					elicited.Add(1)
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
			}, "2025-06-18")
			a.list(t)
			res := a.call(t, "echo", map[string]any{"message": "hi"})
			if tc, _ := res.Content[0].(*mcp.TextContent); tc == nil || tc.Text != "Echo: hi" {
				t.Errorf("echo answered %v", res.Content)
			}
			if res := a.call(t, "startElicitation", map[string]any{}); res.IsError || elicited.Load() != 1 {
				t.Errorf("startElicitation: %v, elicited %d times", res.Content, elicited.Load())
			}

			call := rec.rpc("tools/call echo")
			if len(call) != 1 || call[0].method != http.MethodPost || call[0].header.Get("Authorization") != secret {
				t.Fatalf("tools/call requests %v", call)
			}
			streams := rec.find(func(r recorded) bool { return r.method == http.MethodGet })
			if len(streams) != 1 || streams[0].header.Get("Authorization") != secret {
				t.Errorf("GET streams %v", streams)
			}
			if n := len(rec.find(func(r recorded) bool { return r.method == http.MethodPost && r.rpc == "initialize" })); transport == proxy.TransportAuto && n != 2 {
				t.Errorf("auto: %d initialize POSTs, want the refused Streamable HTTP one and the one to the endpoint", n)
			}
			span := tel.waitNamed(t, "tools/call echo", 1)[0]
			list := tel.named("tools/list")[0]
			checkCallSpan(t, span, map[string]string{
				semconv.ServerURL:      rec.URL + "/sse",
				semconv.ServerName:     "example-servers/everything",
				semconv.ToolsSetDigest: str(list, semconv.ToolsSetDigest),
			})
			if sid := str(span, semconv.MCPSessionID); sid == "" || !strings.Contains(call[0].url, "sessionId="+sid) {
				t.Errorf("%s = %q; the endpoint was %s", semconv.MCPSessionID, sid, call[0].url)
			}
			p.hangUp(t, a)
			if strings.Contains(p.stderr.String(), "s3cr3t") {
				t.Error("the header's value was written out")
			}
		})
	}
}

// TestUpstreamLegacySSEOffOrigin: an endpoint event that points to
// another origin is refused (the configured headers, secrets, would go
// there); the agent's initialize gets an error naming the upstream and
// nothing is posted anywhere.
func TestUpstreamLegacySSEOffOrigin(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	t.Cleanup(other.Close)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s/message?sessionId=1\n\n", other.URL)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(hs.Close)
	p := startUpstream(t, proxy.Config{Upstream: hs.URL + "/sse", Header: http.Header{"Authorization": {"Bearer x"}}}, newTelemetry(t))
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`)
	got := p.recvID(t, "1")
	if !strings.Contains(got, `"error"`) || !strings.Contains(got, "endpoint") || !strings.Contains(got, hs.URL) {
		t.Errorf("initialize answered %s", got)
	}
	if elsewhere.Load() != 0 {
		t.Error("a request went to the other origin")
	}
}

// TestUpstreamLegacySSESessionLostOnPost: a go-sdk HTTP+SSE server that
// forgot the session (404 from the message endpoint) while its stream
// still stands: the proxy opens a new stream, re-initializes with the
// agent's initialize and retries the call once there; the agent sees no
// error.
func TestUpstreamLegacySSESessionLostOnPost(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	var ran atomic.Int32
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ran.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
		})
	sdk := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var forgotten sync.Map // sessionId -> true
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if _, gone := forgotten.Load(r.URL.Query().Get("sessionid")); gone {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
		}
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	rec := newRecorder(t, hs.URL)
	p := startUpstream(t, proxy.Config{Upstream: rec.URL + "/sse", UpstreamTransport: proxy.TransportSSE}, newTelemetry(t))
	a := connectAgent(t, p)
	a.list(t)
	a.call(t, "echo", nil)
	first := rec.rpc("tools/call echo")[0].url
	u, _ := url.Parse(first)
	forgotten.Store(u.Query().Get("sessionid"), true)

	if res := a.call(t, "echo", nil); res.IsError {
		t.Fatalf("the call after the session was lost: %v", res.Content)
	}
	calls := rec.rpc("tools/call echo")
	if len(calls) != 3 || calls[1].url != first || calls[2].url == first {
		t.Errorf("want the call once on the old session and retried once on a new one, got %v", calls)
	}
	if ran.Load() != 2 {
		t.Errorf("the tool ran %d times, want 2", ran.Load())
	}
	if n := len(rec.find(func(r recorded) bool { return r.method == http.MethodGet })); n != 2 {
		t.Errorf("%d streams opened, want 2", n)
	}
}

// TestUpstreamAutoKeepsRefusal: a Streamable HTTP server that refuses
// initialize with 400 and its own JSON-RPC error (and has no SSE stream)
// is not taken for a legacy one: the agent reads the server's error, code
// and message intact.
func TestUpstreamAutoKeepsRefusal(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"Unsupported protocol version"}}`)
	}))
	t.Cleanup(hs.Close)
	p := startUpstream(t, proxy.Config{Upstream: hs.URL + "/mcp"}, newTelemetry(t))
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`)
	got := p.recvID(t, "1")
	if !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, "Unsupported protocol version") {
		t.Errorf("initialize answered %s", got)
	}
}
