package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// startUpstream runs a stdio → HTTP proxy in the test, its agent side on pipes.
func startUpstream(t *testing.T, cfg proxy.Config, tel *telemetry) *stdioProxy {
	t.Helper()
	p := &stdioProxy{stderr: &itest.LockedBuffer{}, sigs: make(chan os.Signal, 1), code: make(chan int, 1)}
	return p.run(t, func(io proxy.Stdio) (int, error) {
		return proxy.RunUpstream(context.Background(), cfg, tel.Telemetry, io)
	})
}

// recorder stands in front of an upstream and logs every request that
// reaches it: the proof that a refused call never arrived, and the headers
// the proxy sent. It passes everything through, streams as they flow.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	method string // HTTP
	url    string // the request's path and query
	rpc    string // the JSON-RPC method; "tools/call NAME" for a call
	id     string // the JSON-RPC id as JSON text
	header http.Header
	body   string
}

func newRecorder(t *testing.T, target string) *recorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.Out.URL.Path = pr.In.URL.Path },
		FlushInterval: -1,
		ErrorHandler:  func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) },
	}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &m)
		if m.Method == "tools/call" {
			m.Method += " " + m.Params.Name
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, recorded{method: r.Method, url: r.URL.String(), rpc: m.Method, id: string(m.ID), header: r.Header.Clone(), body: string(body)})
		rec.mu.Unlock()
		changed.notify()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.Close)
	return rec
}

// find returns the requests that match.
func (rec *recorder) find(match func(recorded) bool) []recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(rec.reqs), func(r recorded) bool { return !match(r) })
}

func (rec *recorder) rpc(name string) []recorded {
	return rec.find(func(r recorded) bool { return r.rpc == name })
}

// TestUpstreamEverything: stdio → HTTP with the real npm server-everything
// over Streamable HTTP, driven by the Go SDK client on the proxy's stdio:
// the session id from initialize goes on every later request with the
// protocol version and the configured headers, the GET stream is opened,
// SSE responses are relayed, the calls are spans stamped with the served
// definition, and the session is deleted on exit.
func TestUpstreamEverything(t *testing.T) {
	base := testservers.EverythingHTTP(t, "2025.11.25", "streamableHttp")
	rec := newRecorder(t, base)
	tel := newTelemetry(t)
	secret := "Bearer s3cr3t-token"
	p := startUpstream(t, proxy.Config{Upstream: rec.URL + "/mcp", InjectTraceContext: true,
		Header: http.Header{"Authorization": {secret}}}, tel)
	a := connectAgent(t, p)
	a.list(t)
	res := a.call(t, "echo", map[string]any{"message": "hi"})
	if tc, _ := res.Content[0].(*mcp.TextContent); tc == nil || tc.Text != "Echo: hi" {
		t.Errorf("echo answered %v", res.Content)
	}
	eventually(t, func() bool { return len(rec.find(func(r recorded) bool { return r.method == http.MethodGet })) > 0 }, "the GET stream")

	inits := rec.rpc("initialize")
	if len(inits) != 1 || inits[0].header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("initialize requests %v", inits)
	}
	call := rec.rpc("tools/call echo")[0]
	sid := call.header.Get("Mcp-Session-Id")
	if sid == "" || call.header.Get("Mcp-Protocol-Version") != "2025-11-25" || call.header.Get("Authorization") != secret {
		t.Errorf("tools/call headers %v", call.header)
	}
	for _, r := range rec.find(func(r recorded) bool { return r.rpc != "initialize" }) {
		if r.header.Get("Mcp-Session-Id") != sid {
			t.Errorf("%s %s without the session id", r.method, r.rpc)
		}
	}
	span := tel.waitNamed(t, "tools/call echo", 1)[0]
	list := tel.named("tools/list")[0]
	checkCallSpan(t, span, map[string]string{
		semconv.ServerURL:      rec.URL + "/mcp",
		semconv.ServerName:     "example-servers/everything",
		semconv.MCPSessionID:   sid,
		semconv.ToolsSetDigest: str(list, semconv.ToolsSetDigest),
		semconv.GenAIAgentName: "gate-agent",
	})
	p.hangUp(t, a)
	if del := rec.find(func(r recorded) bool { return r.method == http.MethodDelete }); len(del) != 1 || del[0].header.Get("Mcp-Session-Id") != sid {
		t.Errorf("DELETE requests %v", del)
	}
	if strings.Contains(p.stderr.String(), "s3cr3t") {
		t.Error("the header's value was written out")
	}
}

// TestUpstreamRestartUpgrade: a live agent session through the proxy while
// server-everything is stopped and restarted on the same port as the next
// release (2025.9.25 → 2025.11.25, which rewrote startElicitation's
// description), over Streamable HTTP and over the deprecated HTTP+SSE
// (whose session is its stream). The proxy re-initializes on the agent's
// behalf and tells the agent its tools changed; with --on-stale refuse the
// changed tool's call gets the STALE_TOOL_SCHEMA envelope and never
// reaches the server, an unchanged tool passes, and after a re-list the
// changed tool passes. No call of the agent fails for the restart.
func TestUpstreamRestartUpgrade(t *testing.T) {
	for _, tc := range []struct {
		mode, path string
		session    func(recorded) string // which upstream session a request went to
	}{
		{"streamableHttp", "/mcp", func(r recorded) string { return r.header.Get("Mcp-Session-Id") }},
		{"sse", "/sse", func(r recorded) string { return r.url }}, // the endpoint names the session
	} {
		t.Run(tc.mode, func(t *testing.T) {
			port := freePort(t)
			_, stop := testservers.EverythingHTTPAt(t, "2025.9.25", tc.mode, port)
			rec := newRecorder(t, "http://127.0.0.1:"+strconv.Itoa(port))
			tel := newTelemetry(t)
			p := startUpstream(t, proxy.Config{Upstream: rec.URL + tc.path, OnStale: proxy.OnStaleRefuse, InjectTraceContext: true}, tel)
			a := connectAgentWith(t, p, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
			}, "2025-11-25")
			a.list(t)
			a.call(t, "echo", map[string]any{"message": "before"})
			eventually(t, func() bool { return len(rec.find(func(r recorded) bool { return r.method == http.MethodGet })) > 0 }, "the GET stream")
			oldSession := tc.session(rec.rpc("tools/call echo")[0])
			drain(a.changed)

			stop()
			testservers.EverythingHTTPAt(t, "2025.11.25", tc.mode, port)
			// The dropped stream tells the proxy; it re-initializes,
			// re-lists and tells the agent.
			waitChan(t, a.changed, "notifications/tools/list_changed after the restart")

			res := a.call(t, "startElicitation", map[string]any{})
			sc, _ := res.StructuredContent.(map[string]any)
			if !res.IsError || sc["error_code"] != "STALE_TOOL_SCHEMA" || sc["tool"] != "startElicitation" || sc["side_effect_started"] != false {
				t.Fatalf("the changed tool's call: %v %v", res.Content, sc)
			}
			if n := len(rec.rpc("tools/call startElicitation")); n != 0 {
				t.Errorf("the refused call reached the server %d time(s)", n)
			}
			if res := a.call(t, "echo", map[string]any{"message": "after"}); res.IsError {
				t.Errorf("the unchanged tool was refused: %v", res.Content)
			}
			echo := rec.rpc("tools/call echo")
			if newSession := tc.session(echo[len(echo)-1]); newSession == "" || newSession == oldSession {
				t.Errorf("the call after the restart went on session %q (old %q)", newSession, oldSession)
			}
			inits := rec.rpc("initialize")
			if last := inits[len(inits)-1]; !strings.HasPrefix(last.id, `"mcpdrift-proxy-`) || tc.session(last) == oldSession {
				t.Errorf("initialize requests: %v", inits)
			}

			a.list(t)
			if res := a.call(t, "startElicitation", map[string]any{}); res.IsError {
				t.Errorf("the changed tool was refused after the agent listed again: %v", res.Content)
			}
			if n := len(rec.rpc("tools/call startElicitation")); n != 1 {
				t.Errorf("the server got startElicitation %d times, want 1", n)
			}
			ref := tel.waitNamed(t, "tools/call startElicitation", 2)[0]
			if str(ref, semconv.GuardRefusal) != semconv.RefusalStaleToolSchema {
				t.Errorf("refusal span %v", ref.Attributes)
			}
		})
	}
}

// TestUpstreamSessionLostOnPost: when no stream tells it first, the
// request that finds the session gone (404) is retried once on a new
// session, the proxy having re-initialized with the agent's initialize —
// unless the tool it calls changed meanwhile: then the gate refuses it.
func TestUpstreamSessionLostOnPost(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "restarting", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
		})
	var (
		mu    sync.Mutex
		inner http.Handler
		sids  []string
	)
	restart := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, sid := range sids { // end the old process's sessions (goroutines in the SDK)
			req := httptest.NewRequest(http.MethodDelete, "/mcp", nil)
			req.Header.Set("Mcp-Session-Id", sid)
			inner.ServeHTTP(httptest.NewRecorder(), req)
		}
		// A new handler forgets every session, as a restarted process does.
		inner = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	}
	restart()
	t.Cleanup(restart)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed) // no GET stream: only a request can find out
			return
		}
		mu.Lock()
		cur := inner
		mu.Unlock()
		cur.ServeHTTP(w, r)
		if sid := w.Header().Get("Mcp-Session-Id"); sid != "" {
			mu.Lock()
			sids = append(sids, sid)
			mu.Unlock()
		}
	}))
	t.Cleanup(hs.Close) // after the proxy's cleanup: it ends its streams first
	rec := newRecorder(t, hs.URL)
	p := startUpstream(t, proxy.Config{Upstream: rec.URL + "/mcp", OnStale: proxy.OnStaleRefuse}, newTelemetry(t))
	a := connectAgent(t, p)
	a.list(t)
	a.call(t, "echo", nil)
	restart()
	if res := a.call(t, "echo", nil); res.IsError {
		t.Fatalf("the call after the restart: %v", res.Content)
	}
	calls := rec.rpc("tools/call echo")
	if len(calls) != 3 || calls[1].header.Get("Mcp-Session-Id") == calls[2].header.Get("Mcp-Session-Id") {
		t.Errorf("want the call once on the old session and retried once on a new one, got %d", len(calls))
	}
	if n := len(rec.rpc("notifications/initialized")); n != 2 {
		t.Errorf("%d notifications/initialized, want the agent's and the proxy's", n)
	}

	// Restarted with a changed echo: the call that finds the session gone
	// is judged again on the new listing, and refused, not retried.
	restart()
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	res := a.call(t, "echo", nil)
	if sc, _ := res.StructuredContent.(map[string]any); !res.IsError || sc["error_code"] != "STALE_TOOL_SCHEMA" {
		t.Errorf("the call for the changed tool after the restart: %v", res.Content)
	}
	if n := len(rec.rpc("tools/call echo")); n != 4 {
		t.Errorf("%d echo calls reached a server, want 4 (the refused one only on the dead session)", n)
	}
}

// TestUpstreamStateless: a go-sdk server on protocol 2026-07-28 (no
// initialize, no session): the Go SDK agent's requests go through with the
// version and the standard Mcp-Method/Mcp-Name headers and no session id;
// the proxy's own relist carries the agent's protocol _meta, learns a
// changed definition, and the gate refuses the stale call.
func TestUpstreamStateless(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "stateless", Version: "1"}, nil)
	ran := make(chan string, 16)
	handler := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ran <- req.Params.Name
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "search", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}, handler)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	rec := newRecorder(t, hs.URL)
	tel := newTelemetry(t)
	p := startUpstream(t, proxy.Config{Upstream: rec.URL + "/mcp", OnStale: proxy.OnStaleRefuse, RelistInterval: 20 * time.Millisecond}, tel)
	a := connectAgentWith(t, p, &mcp.ClientOptions{}, "")
	a.list(t)
	a.call(t, "search", map[string]any{"q": "x"})
	<-ran
	call := rec.rpc("tools/call search")[0]
	if call.header.Get("Mcp-Protocol-Version") != "2026-07-28" || call.header.Get("Mcp-Method") != "tools/call" ||
		call.header.Get("Mcp-Name") != "search" {
		t.Errorf("tools/call headers %v", call.header)
	}
	if len(rec.find(func(r recorded) bool { return r.header.Get("Mcp-Session-Id") != "" })) > 0 {
		t.Error("a request carried a session id to a stateless server")
	}
	if len(rec.rpc("initialize")) > 0 {
		t.Error("initialize sent to a 2026-07-28 server")
	}
	s := tel.waitNamed(t, "tools/call search", 1)[0]
	if str(s, semconv.MCPProtocolVersion) != "2026-07-28" || len(str(s, semconv.ToolDigest)) != 64 {
		t.Errorf("span %v", s.Attributes)
	}

	// The server changes search; the proxy's relist (its own ids, the
	// agent's protocol _meta) finds it and tells the agent.
	drain(a.changed)
	srv.AddTool(&mcp.Tool{Name: "search", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}},"required":["q","limit"]}`)}, handler)
	waitChan(t, a.changed, "notifications/tools/list_changed from the proxy's relist")
	// The notification reaches the agent at once; the proxy's relist may
	// still be on its way.
	isOwnList := func(r recorded) bool { return r.rpc == "tools/list" && strings.HasPrefix(r.id, `"mcpdrift-proxy-`) }
	eventually(t, func() bool { return len(rec.find(isOwnList)) > 0 }, "the proxy's own tools/list")
	own := rec.find(isOwnList)
	if len(own) == 0 || !strings.Contains(own[0].body, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`) {
		t.Fatalf("the proxy's own tools/list: %v", own)
	}
	res := a.call(t, "search", map[string]any{"q": "x"})
	if sc, _ := res.StructuredContent.(map[string]any); !res.IsError || sc["error_code"] != "STALE_TOOL_SCHEMA" {
		t.Errorf("the stale call: %v", res.Content)
	}
	if len(rec.rpc("tools/call search")) != 1 {
		t.Error("the stale call reached the server")
	}
}

// TestUpstreamDownOrGarbage: an upstream that is down, answers what is not
// JSON, an event stream of garbage, or nothing within --upstream-timeout:
// each request gets a JSON-RPC error naming the upstream (never a hang),
// and nothing that is not a JSON-RPC frame reaches the agent.
func TestUpstreamDownOrGarbage(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	hang := make(chan struct{})
	defer close(hang)
	for name, upstream := range map[string]string{
		"down": down.URL + "/mcp?token=s3cr3t",
		"html": serve(t, "text/html", "<html>\n<body>oops</body>\n</html>"),
		"json": serve(t, "application/json", "{not json\n"),
		"sse":  serve(t, "text/event-stream", "data: {garbage\n\ndata: more garbage\n\n"),
		"502":  serve(t, "", ""),
		"hang": hangs(t, hang),
	} {
		t.Run(name, func(t *testing.T) {
			p := startUpstream(t, proxy.Config{Upstream: upstream, UpstreamTimeout: 500 * time.Millisecond}, newTelemetry(t))
			p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`)
			line := p.recv(t)
			var resp struct {
				ID    int `json:"id"`
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(line), &resp); err != nil || resp.ID != 1 || resp.Error.Code == 0 {
				t.Fatalf("the agent got %q", line)
			}
			named := strings.SplitN(upstream, "?", 2)[0]
			if !strings.HasPrefix(resp.Error.Message, "mcpdrift proxy: upstream "+named+": ") || strings.Contains(line, "s3cr3t") {
				t.Errorf("error %q does not name the upstream %s (or shows its secret)", resp.Error.Message, named)
			}
			t.Log(resp.Error.Message)
		})
	}
}

// serve is an upstream answering every request with this body (status 502
// without a body).
func serve(t *testing.T, contentType, body string) string {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if contentType == "" {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, body)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// hangs is an upstream that never answers (until the test ends).
func hangs(t *testing.T, release chan struct{}) string {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitChan waits (generously) for a value on ch.
func waitChan(t testing.TB, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(60 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func drain(ch chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// TestUpstreamPipelinedAfterInitialize: an agent that writes initialize,
// notifications/initialized and a request at once gets its request served
// on the session initialize opened (frames after initialize wait for it).
func TestUpstreamPipelinedAfterInitialize(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "pipelined", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	p := startUpstream(t, proxy.Config{Upstream: hs.URL}, newTelemetry(t))
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if got := p.recvID(t, "2"); !strings.Contains(got, `"name":"echo"`) {
		t.Errorf("tools/list right after initialize: %s", got)
	}
}

// TestUpstreamKeepAliveAndGzip: the stdio → HTTP proxy's sequential calls
// go over kept-alive connections (its own client, not http.Transport, since
// 5 December), and it asks for gzip as http.Transport did by itself, undoing
// the answers (event streams, the standing GET stream's included) so the
// agent reads them as sent.
func TestUpstreamKeepAliveAndGzip(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "gzip", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "unzipped"}}}, nil
		})
	var asked, conns atomic.Int32
	hs := httptest.NewUnstartedServer(gzipping(false, &asked, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	hs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	hs.Start()
	t.Cleanup(hs.Close)
	a := connectAgent(t, startUpstream(t, proxy.Config{Upstream: hs.URL}, newTelemetry(t)))
	const calls = 20
	for range calls {
		res := a.call(t, "echo", nil)
		if tc, _ := res.Content[0].(*mcp.TextContent); res.IsError || tc == nil || tc.Text != "unzipped" {
			t.Fatalf("the call answered %v", res.Content)
		}
	}
	if asked.Load() < calls {
		t.Errorf("%d requests asked for gzip, fewer than the %d calls", asked.Load(), calls)
	}
	// One for the calls, one for the standing GET stream; a third if a
	// notification's 202 and a call overlapped.
	if n := conns.Load(); n > 3 {
		t.Errorf("%d connections for %d sequential calls: not kept alive", n, calls)
	}
}

// TestUpstreamResumesPostStream: a go-sdk server (2025-11-25, with an
// event store) that closes a tool call's event stream before answering,
// asking the client to come back (SEP-1699): the proxy resumes it with a
// GET carrying Last-Event-ID after the stream's retry time, and the agent
// gets the result as if the stream had never closed.
func TestUpstreamResumesPostStream(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "polling", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 20 * time.Millisecond})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done late"}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}))
	t.Cleanup(hs.Close)
	rec := newRecorder(t, hs.URL)
	p := startUpstream(t, proxy.Config{Upstream: rec.URL + "/mcp"}, newTelemetry(t))
	a := connectAgent(t, p)
	res := a.call(t, "slow", nil)
	if tc, _ := res.Content[0].(*mcp.TextContent); res.IsError || tc == nil || tc.Text != "done late" {
		t.Fatalf("the call answered %v", res.Content)
	}
	if resumed := rec.find(func(r recorded) bool { return r.method == http.MethodGet && r.header.Get("Last-Event-ID") != "" }); len(resumed) == 0 {
		t.Error("no GET with Last-Event-ID: the result did not come by resumption")
	}
}

// TestUpstreamDiscoverThenInitialize: Claude Code 2.1 first sends
// server/discover (2026-07-28); a stateful server's answer leaves that
// version out, and the agent falls back to initialize (2025-11-25). The
// proxy forwards that initialize as the handshake it is, without the
// MCP-Protocol-Version 2026-07-28 its discover carried (the go-sdk server
// refuses an initialize saying 2026-07-28 with -32022, and the host then
// has no tools at all), and the session works.
func TestUpstreamDiscoverThenInitialize(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "stateful", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "search", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	rec := newRecorder(t, hs.URL)
	p := startUpstream(t, proxy.Config{Upstream: rec.URL + "/mcp"}, newTelemetry(t))

	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.332"},"io.modelcontextprotocol/clientCapabilities":{}}`
	p.send(t, `{"jsonrpc":"2.0","id":"server-discover-probe-1","method":"server/discover","params":{`+meta+`}}`)
	if got := p.recvID(t, `"server-discover-probe-1"`); !strings.Contains(got, `"supportedVersions"`) || strings.Contains(got, `"2026-07-28"`) {
		t.Fatalf("discover: %s", got)
	}
	p.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1.332"}}}`)
	if got := p.recvID(t, "0"); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize after discover: %s", got)
	}
	if init := rec.rpc("initialize"); len(init) != 1 || init[0].header.Get("Mcp-Protocol-Version") != "" {
		t.Errorf("the initialize upstream: %+v", init)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{}}}`)
	if got := p.recvID(t, "1"); !strings.Contains(got, `"ran"`) {
		t.Fatalf("tools/call: %s", got)
	}
	if call := rec.rpc("tools/call search"); len(call) != 1 || call[0].header.Get("Mcp-Protocol-Version") != "2025-11-25" {
		t.Errorf("the call upstream: %+v", call)
	}
}
