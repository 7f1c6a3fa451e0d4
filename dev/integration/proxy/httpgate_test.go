package proxy_test

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestHTTPLockHidesUnapproved: the HTTP → HTTP proxy with --lock in front of
// a go-sdk Streamable HTTP server (JSON responses, and event streams, the
// go-sdk's default): the tool the lock does not hold is left out of
// tools/list, and a call for it is answered by the proxy (HTTP 200,
// TOOL_NOT_APPROVED) and never reaches the server, while the approved
// tool's calls pass.
func TestHTTPLockHidesUnapproved(t *testing.T) {
	t.Run("json", func(t *testing.T) { testHTTPLockHidesUnapproved(t, true) })
	t.Run("event-stream", func(t *testing.T) { testHTTPLockHidesUnapproved(t, false) })
}

func testHTTPLockHidesUnapproved(t *testing.T, jsonResponse bool) {
	tel := newTelemetry(t)
	cs, echoCalls, secretCalls := lockedSession(t, tel, proxy.LockHide, jsonResponse)
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := toolNames(lt)
	if slices.Contains(names, "secret") || !slices.Contains(names, "echo") {
		t.Errorf("listed %v: secret (not in the lock) must be hidden, echo shown", names)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "secret", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	if !res.IsError || sc["error_code"] != semconv.RefusalToolNotApproved || sc["tool"] != "secret" || sc["side_effect_started"] != false {
		t.Errorf("unapproved call: %v %v", res.IsError, res.StructuredContent)
	}
	if n := secretCalls.Load(); n != 0 {
		t.Errorf("the unapproved call reached the server %d times", n)
	}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("approved call: %v %v", err, res)
	}
	if n := echoCalls.Load(); n != 1 {
		t.Errorf("echo reached the server %d times, want 1", n)
	}
	span := tel.waitNamed(t, "tools/call secret", 1)[0]
	wantRefusalSpan(t, span, semconv.RefusalToolNotApproved, sc["current_digest"])
	if n := tel.counter(t, semconv.MetricProxyRefusals); n != 1 {
		t.Errorf("refusals counted %d, want 1", n)
	}
}

// TestHTTPRefusesStaleCall: the HTTP → HTTP proxy with --on-stale refuse
// (learning of the change by --relist-interval, or from the server's
// list_changed on the session's stream) in front of a go-sdk Streamable HTTP server (responses
// as event streams) whose tool changes mid-session: the call planned on the
// old definition is answered with STALE_TOOL_SCHEMA and never reaches the
// server, an unchanged tool's call passes, and after the agent lists again
// the changed tool's call passes.
func TestHTTPRefusesStaleCall(t *testing.T) {
	t.Run("relist-interval", func(t *testing.T) { testHTTPRefusesStaleCall(t, time.Nanosecond) })
	t.Run("list_changed", func(t *testing.T) { testHTTPRefusesStaleCall(t, 0) })
}

func testHTTPRefusesStaleCall(t *testing.T, relist time.Duration) {
	var searchCalls, echoCalls atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "changing", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, count(&echoCalls))
	srv.AddTool(&mcp.Tool{Name: "search", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}, count(&searchCalls))
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer up.Close()

	tel := newTelemetry(t)
	h, err := proxy.NewHandler(proxy.Config{Upstream: up.URL, Listen: "test", OnStale: proxy.OnStaleRefuse, RelistInterval: relist}, tel.Telemetry)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer func() { hs.Close(); h.Close() }()
	changed := make(chan struct{}, 1)
	opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-agent", Version: "1"}, opts).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(tool string) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	list := func() {
		t.Helper()
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	list()
	if res := call("search"); res.IsError || searchCalls.Load() != 1 {
		t.Fatalf("search before the change: %v, %d calls", res.StructuredContent, searchCalls.Load())
	}
	srv.AddTool(&mcp.Tool{Name: "search", InputSchema: map[string]any{"type": "object", "required": []string{"q", "limit"},
		"properties": map[string]any{"q": map[string]any{"type": "string"}, "limit": map[string]any{"type": "integer"}}}}, count(&searchCalls))
	if relist == 0 {
		// The proxy learns of the change from the notification on the
		// session's stream, before the agent gets it.
		waitChan(t, changed, "notifications/tools/list_changed")
	}

	res := call("search")
	sc, _ := res.StructuredContent.(map[string]any)
	if !res.IsError || sc["error_code"] != semconv.RefusalStaleToolSchema || sc["required_action"] != "refresh_tools" ||
		sc["planned_digest"] == sc["current_digest"] || sc["side_effect_started"] != false {
		t.Errorf("stale call: %v %v", res.IsError, res.StructuredContent)
	}
	if n := searchCalls.Load(); n != 1 {
		t.Errorf("the stale call reached the server: %d calls", n)
	}
	refused := tel.waitNamed(t, "tools/call search", 2)[1]
	wantRefusalSpan(t, refused, semconv.RefusalStaleToolSchema, sc["current_digest"])
	if v, _ := attr(refused, semconv.GuardStaleDefinition); !v.AsBool() || str(refused, semconv.GuardPlannedDigest) != sc["planned_digest"] {
		t.Errorf("stale refusal span: %s=%v %s=%q", semconv.GuardStaleDefinition, v, semconv.GuardPlannedDigest, str(refused, semconv.GuardPlannedDigest))
	}
	if res := call("echo"); res.IsError || echoCalls.Load() != 1 {
		t.Errorf("unchanged echo: %v, %d calls", res.StructuredContent, echoCalls.Load())
	}
	list()
	// Written for the new definition (arguments the old one also took would
	// be a stale plan: TestHTTPRefusesOldPlanAfterRelist).
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"q": "x", "limit": 1}})
	if err != nil || res.IsError || searchCalls.Load() != 2 {
		t.Errorf("search after the re-list: %v %v, %d calls", err, res, searchCalls.Load())
	}
	if n := tel.counter(t, semconv.MetricProxyRefusals); n != 1 {
		t.Errorf("refusals counted %d, want 1", n)
	}
}

// lockedSession connects a Go SDK client through the HTTP → HTTP proxy with
// --lock (approving echo only, in lockMode) to a go-sdk server serving echo
// and secret with JSON responses (or event streams); the counters count the
// calls that reach it.
func lockedSession(t *testing.T, tel *telemetry, lockMode string, jsonResponse bool) (cs *mcp.ClientSession, echoCalls, secretCalls *atomic.Int64) {
	t.Helper()
	echoCalls, secretCalls = new(atomic.Int64), new(atomic.Int64)
	srv := mcp.NewServer(&mcp.Implementation{Name: "locked", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, count(echoCalls))
	srv.AddTool(&mcp.Tool{Name: "secret", InputSchema: map[string]any{"type": "object"}}, count(secretCalls))
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))
	t.Cleanup(up.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-agent", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: lockedProxy(t, up.URL, lockMode, tel)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, echoCalls, secretCalls
}

// lockedProxy serves the HTTP → HTTP proxy to upstream with a lock that
// approves echo alone, for the test's duration; it returns its URL.
func lockedProxy(t *testing.T, upstream, lockMode string, tel *telemetry) string {
	t.Helper()
	lock := writeLock(t, map[string]string{"echo": `{"name":"echo","inputSchema":{"type":"object"}}`})
	h, err := proxy.NewHandler(proxy.Config{Upstream: upstream, Listen: "test", Lock: lock, LockMode: lockMode}, tel.Telemetry)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	return hs.URL
}

// TestHTTPLockRefuseSession: with --lock-mode refuse-session, a listing
// holding an unapproved definition fails the session: the agent gets a
// JSON-RPC error, and its later requests never reach the server.
func TestHTTPLockRefuseSession(t *testing.T) {
	t.Run("json", func(t *testing.T) { testHTTPLockRefuseSession(t, true) })
	t.Run("event-stream", func(t *testing.T) { testHTTPLockRefuseSession(t, false) })
}

func testHTTPLockRefuseSession(t *testing.T, jsonResponse bool) {
	tel := newTelemetry(t)
	cs, echoCalls, _ := lockedSession(t, tel, proxy.LockRefuseSession, jsonResponse)
	if _, err := cs.ListTools(context.Background(), nil); err == nil || !strings.Contains(err.Error(), semconv.RefusalToolNotApproved) {
		t.Fatalf("listing with an unapproved definition: %v", err)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err == nil {
		t.Error("a call on the failed session was answered")
	}
	if n := echoCalls.Load(); n != 0 {
		t.Errorf("a request of the failed session reached the server: %d calls", n)
	}
}

// wantRefusalSpan checks a refused call's span is the one the stdio modes
// make: error.type refused, the refusal code and the current digest.
func wantRefusalSpan(t *testing.T, span tracetest.SpanStub, code string, current any) {
	t.Helper()
	if got := str(span, semconv.ErrorType); got != semconv.ErrorTypeRefused {
		t.Errorf("refused span: %s = %q, want %q", semconv.ErrorType, got, semconv.ErrorTypeRefused)
	}
	if got := str(span, semconv.GuardRefusal); got != code {
		t.Errorf("refused span: %s = %q, want %q", semconv.GuardRefusal, got, code)
	}
	if got, ok := attr(span, semconv.GuardCurrentDigest); !ok || got.AsString() != current {
		t.Errorf("refused span: %s = %q (set %v), want %q", semconv.GuardCurrentDigest, got.AsString(), ok, current)
	}
}

// count is a tool handler that counts the calls reaching the server.
func count(n *atomic.Int64) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
	}
}

// TestHTTPLockFiltersEventStream: --lock hide on a tools/list answered as
// an event stream rewrites only the event carrying the result (its id and
// event fields kept, data split over lines and CRLF-framed on the wire);
// the events around it reach the client byte for byte, and the one before
// it arrives while the server still holds the listing back (nothing is
// buffered beyond the current event).
func TestHTTPLockFiltersEventStream(t *testing.T) {
	before := ": keep-alive\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"before\"}}\n\n"
	listing := []string{
		"id: 2\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"tools\":[\r\ndata: {\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},\r\n",
		"data: {\"name\":\"secret\",\"inputSchema\":{\"type\":\"object\"}}]}}\r\n\r\n",
	}
	after := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"after\"}}\r\r"
	seen := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, before)
		w.(http.Flusher).Flush()
		select {
		case <-seen:
		case <-time.After(30 * time.Second):
			return
		}
		for _, part := range listing {
			io.WriteString(w, part)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, after)
	}))
	defer up.Close()
	req, _ := http.NewRequest(http.MethodPost, lockedProxy(t, up.URL, "", newTelemetry(t)), strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, len(before))
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != before {
		t.Fatalf("the event before the listing: %q, %v; want %q", first, err, before)
	}
	close(seen)
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	want := "id: 2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}]}}\n\n" + after
	if string(rest) != want {
		t.Errorf("after the first event:\n got %q\nwant %q", rest, want)
	}
}

// TestHTTPStatelessPerClient: two agents of a 2026-07-28 stateless server
// (no session id) through one HTTP → HTTP proxy are two sessions — told
// apart by the clientInfo their requests carry, not by TCP connection (the
// Go SDK lists on one pooled connection and calls on another): their spans
// carry their own client session and their own clientInfo name, and the
// gate judges each on the listing it was served — agent A listed before
// the server changed search, agent B after: A's call is refused as stale,
// B's passes.
func TestHTTPStatelessPerClient(t *testing.T) {
	var searchCalls atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "stateless", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "search", InputSchema: map[string]any{"type": "object"}}, count(&searchCalls))
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer up.Close()
	tel := newTelemetry(t)
	h, err := proxy.NewHandler(proxy.Config{Upstream: up.URL, Listen: "test", OnStale: proxy.OnStaleRefuse, RelistInterval: time.Nanosecond}, tel.Telemetry)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer func() { hs.Close(); h.Close() }()
	connect := func(name string) *mcp.ClientSession {
		tr := http.DefaultTransport.(*http.Transport).Clone() // connections of its own
		t.Cleanup(tr.CloseIdleConnections)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).
			Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: tr}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		return cs
	}
	a := connect("agent-a")
	srv.AddTool(&mcp.Tool{Name: "search", InputSchema: map[string]any{"type": "object", "required": []string{"q"},
		"properties": map[string]any{"q": map[string]any{"type": "string"}}}}, count(&searchCalls))
	b := connect("agent-b")

	resA, err := a.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if sc, _ := resA.StructuredContent.(map[string]any); !resA.IsError || sc["error_code"] != semconv.RefusalStaleToolSchema {
		t.Errorf("agent A's call planned on the old definition: %v", resA.StructuredContent)
	}
	resB, err := b.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"q": "x"}})
	if err != nil || resB.IsError {
		t.Fatalf("agent B's call planned on the new definition: %v %v", err, resB)
	}
	if n := searchCalls.Load(); n != 1 {
		t.Errorf("search reached the server %d times, want 1 (B's)", n)
	}
	spans := tel.waitNamed(t, "tools/call search", 2)
	byAgent := map[string]string{}
	for _, s := range spans {
		byAgent[str(s, semconv.GenAIAgentName)] = str(s, semconv.ClientSession)
	}
	if len(byAgent) != 2 || byAgent["agent-a"] == "" || byAgent["agent-b"] == "" || byAgent["agent-a"] == byAgent["agent-b"] {
		t.Errorf("agents and their client sessions: %v", byAgent)
	}
}

// TestHTTPLockGatesBatches: a 2025-03-26 client's JSON-RPC batch through
// the HTTP → HTTP proxy with --lock, answered as JSON and as an event
// stream: the unapproved call in it is answered by the proxy with
// TOOL_NOT_APPROVED and never reaches the server; the approved call in the
// same batch does, and both answers come back in the one response; a batch
// of unapproved calls only is answered by the proxy alone.
func TestHTTPLockGatesBatches(t *testing.T) {
	for _, jsonResponse := range []bool{true, false} {
		t.Run(map[bool]string{true: "json", false: "event-stream"}[jsonResponse], func(t *testing.T) {
			var echoCalls, secretCalls atomic.Int64
			srv := mcp.NewServer(&mcp.Implementation{Name: "locked", Version: "1"}, nil)
			srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, count(&echoCalls))
			srv.AddTool(&mcp.Tool{Name: "secret", InputSchema: map[string]any{"type": "object"}}, count(&secretCalls))
			up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))
			defer up.Close()
			lock := writeLock(t, map[string]string{"echo": `{"name":"echo","inputSchema":{"type":"object"}}`})
			tel := newTelemetry(t)
			h, err := proxy.NewHandler(proxy.Config{Upstream: up.URL, Listen: "test", Lock: lock}, tel.Telemetry)
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(h)
			defer func() { hs.Close(); h.Close() }()

			sid := ""
			post := func(body string) string {
				t.Helper()
				req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if sid != "" {
					req.Header.Set("Mcp-Session-Id", sid)
					req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
					sid = s
				}
				b, _ := io.ReadAll(resp.Body)
				return string(b)
			}
			post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"batcher","version":"1"}}}`)
			post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			got := post(`[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"secret","arguments":{}}},` +
				`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{}}}]`)
			if !strings.Contains(got, `"TOOL_NOT_APPROVED"`) || !strings.Contains(got, `"id":4`) || !strings.Contains(got, `"ran"`) {
				t.Errorf("the batch was answered %s", got)
			}
			if secretCalls.Load() != 0 || echoCalls.Load() != 1 {
				t.Errorf("server ran secret %d times and echo %d times, want 0 and 1", secretCalls.Load(), echoCalls.Load())
			}
			alone := post(`[{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"secret","arguments":{}}}]`)
			if !strings.HasPrefix(alone, "[") || !strings.Contains(alone, `"TOOL_NOT_APPROVED"`) || secretCalls.Load() != 0 {
				t.Errorf("a batch of an unapproved call only was answered %s", alone)
			}
			del, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
			del.Header.Set("Mcp-Session-Id", sid)
			if resp, err := http.DefaultClient.Do(del); err == nil {
				resp.Body.Close() // the server's session ends (goleak)
			}
			spans := tel.waitNamed(t, "tools/call secret", 2)
			for _, s := range spans {
				if str(s, semconv.GuardRefusal) != semconv.RefusalToolNotApproved || str(s, semconv.ErrorType) != semconv.ErrorTypeRefused {
					t.Errorf("refusal span %v", s.Attributes)
				}
			}
		})
	}
}

// TestHTTPLockCompressedAnswers: an agent asking for gzip (as Node's fetch
// and Python's httpx do) must not get around --lock hide because the
// proxy could not read a compressed listing: the proxy does not pass the
// agent's Accept-Encoding on, and undoes a gzip the upstream uses unasked.
// Either way the agent gets a listing it can read, without the unapproved
// tool.
func TestHTTPLockCompressedAnswers(t *testing.T) {
	for _, always := range []bool{false, true} {
		t.Run(map[bool]string{false: "as asked", true: "unasked"}[always], func(t *testing.T) {
			srv := mcp.NewServer(&mcp.Implementation{Name: "locked", Version: "1"}, nil)
			srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, count(new(atomic.Int64)))
			srv.AddTool(&mcp.Tool{Name: "secret", InputSchema: map[string]any{"type": "object"}}, count(new(atomic.Int64)))
			var asked atomic.Int32
			up := httptest.NewServer(gzipping(always, &asked, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
			defer up.Close()
			agent := &http.Client{Transport: acceptGzip{&http.Transport{DisableCompression: true}}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "gzip-agent", Version: "1"}, nil).
				Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: lockedProxy(t, up.URL, "", newTelemetry(t)), HTTPClient: agent}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			lt, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if names := toolNames(lt); slices.Contains(names, "secret") || !slices.Contains(names, "echo") {
				t.Errorf("listed %v: secret (not in the lock) must be hidden", names)
			}
			if n := asked.Load(); n != 0 {
				t.Errorf("the upstream was asked for gzip %d times", n)
			}
		})
	}
}

// acceptGzip asks for gzip on every request and undoes it in answers, as
// fetch and httpx do.
type acceptGzip struct{ base http.RoundTripper }

func (a acceptGzip) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Accept-Encoding", "gzip")
	res, err := a.base.RoundTrip(r)
	if err != nil || res.Header.Get("Content-Encoding") != "gzip" {
		return res, err
	}
	zr, err := gzip.NewReader(res.Body)
	if err != nil {
		res.Body.Close()
		return nil, err
	}
	res.Header.Del("Content-Encoding")
	res.Body = struct {
		io.Reader
		io.Closer
	}{zr, res.Body}
	return res, nil
}

// gzipping compresses h's answers with gzip: when asked (counted in
// asked), or always.
func gzipping(always bool, asked *atomic.Int32, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wants := strings.Contains(r.Header.Get("Accept-Encoding"), "gzip")
		if wants {
			asked.Add(1)
		}
		if !wants && !always {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		defer zw.Close()
		h.ServeHTTP(gzipWriter{w, zw}, r)
	})
}

type gzipWriter struct {
	http.ResponseWriter
	zw *gzip.Writer
}

func (g gzipWriter) Write(p []byte) (int, error) { return g.zw.Write(p) }

func (g gzipWriter) Flush() {
	_ = g.zw.Flush()
	g.ResponseWriter.(http.Flusher).Flush()
}

// TestHTTPSessionIDsBounded: session ids as long as a server (every answer
// naming a new one) or a client (every request naming its own, to a server
// that does not check them) likes do not fill the proxy's memory: the tap
// and the gate keep, and spans record, a digest of an id over
// mcpwire.MaxSessionIDBytes (before, 40 ids of 256 KiB each way held 50 MB).
func TestHTTPSessionIDsBounded(t *testing.T) {
	const n, size = 40, 256 << 10
	long := func(i int) string { return strconv.Itoa(i) + strings.Repeat("s", size) }
	var answered atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Header.Get("Mcp-Session-Id") == "" {
			w.Header().Set("Mcp-Session-Id", long(int(answered.Add(1))))
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer up.Close()
	tel := newTelemetry(t)
	h, err := proxy.NewHandler(proxy.Config{Upstream: up.URL, Listen: "test", OnStale: proxy.OnStaleRefuse}, tel.Telemetry)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer func() { hs.Close(); h.Close() }()
	before := liveBytes()
	for i := range 2 * n {
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		req.Header.Set("Content-Type", "application/json")
		if i >= n {
			req.Header.Set("Mcp-Session-Id", long(-i)) // the client's own
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if grown := int64(liveBytes()) - int64(before); grown > n*size/4 {
		t.Errorf("the heap grew by %d bytes for %d session ids of %d bytes", grown, 2*n, size)
	}
	for _, s := range tel.named("initialize") {
		if id := str(s, semconv.MCPSessionID); len(id) > mcpwire.MaxSessionIDBytes {
			t.Fatalf("a span records a session id of %d bytes", len(id))
		}
	}
}
