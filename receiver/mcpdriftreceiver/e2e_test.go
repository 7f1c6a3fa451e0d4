package mcpdriftreceiver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/semconv"
)

// The tests in this file run the receiver with the real probe against
// in-process Go SDK servers over Streamable HTTP, and change what the servers
// serve while the receiver runs.

func sdkTool(name, desc string, required ...string) *mcp.Tool {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"query":   map[string]any{"type": "string"},
		"filters": map[string]any{"type": "object"},
	}}
	if len(required) > 0 {
		schema["required"] = required
	}
	raw, _ := json.Marshal(schema)
	return &mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(raw)}
}

func noop(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

func newSDKServer(name string, tools ...*mcp.Tool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil)
	for _, t := range tools {
		s.AddTool(t, noop)
	}
	return s
}

// endSessions closes, when the test ends, every session srv still holds: a
// stateful server keeps a goroutine per session until the client's DELETE,
// which may reach another backend behind a balancer, or never come from a
// probe cut short; goleak reported one under load.
func endSessions(tb testing.TB, srv *mcp.Server) {
	tb.Cleanup(func() {
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
}

// serveSDK serves whatever server pick returns, per request, over Streamable HTTP.
func serveSDK(t testing.TB, pick func() *mcp.Server) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return pick() }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// onMethod calls seen before next serves each request whose JSON-RPC body
// names method.
func onMethod(next http.Handler, method string, seen func()) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"method":"`+method+`"`)) {
			seen()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

func httpTarget(name, endpoint string) TargetConfig {
	tc := NewTargetConfig(name)
	tc.Endpoint = endpoint
	return tc
}

func e2eConfig(targets ...TargetConfig) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.CollectionInterval = 50 * time.Millisecond
	cfg.Timeout = 5 * time.Second
	cfg.Settle = 0 // these servers do not change while probed: list once
	cfg.ConfirmAfter = 2
	cfg.Targets = targets
	return cfg
}

func TestE2EDriftFromALiveServer(t *testing.T) {
	srv := newSDKServer("search", sdkTool("search", "Search the web"), sdkTool("fetch", "Fetch a page"))
	url := serveSDK(t, func() *mcp.Server { return srv })
	cfg := e2eConfig(httpTarget("search-mcp", url))
	r, logs, _ := runReceiver(t, cfg, newProber(cfg), &storageHost{})
	defer func() { _ = r.Shutdown(context.Background()) }()
	waitFor(t, "baseline", func() bool { return len(eventsNamed(logs, semconv.EventSnapshot)) == 1 })

	// v2: fetch removed (breaking), search requires filters (breaking), a
	// new tool with a schema of its own (an equal schema would be a rename).
	srv.RemoveTools("fetch")
	srv.AddTool(sdkTool("search", "Search the web", "filters"), noop)
	srv.AddTool(&mcp.Tool{Name: "summarize", Description: "Summarize a page",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","format":"uri"}},"required":["url"]}`)}, noop)
	waitFor(t, "drift", func() bool { return len(eventsNamed(logs, semconv.EventDrift)) == 1 })
	d := eventsNamed(logs, semconv.EventDrift)[0]
	if d.SeverityText() != "breaking" {
		t.Errorf("severity %s", d.SeverityText())
	}
	body := d.Body().Str()
	if !strings.HasPrefix(body, "removed 1 tool (fetch)") || !strings.Contains(body, "filters") {
		t.Errorf("one-line description, worst first: %q", body)
	}
	changes, _ := d.Attributes().Get(semconv.DriftChanges)
	rules := map[string]bool{}
	for i := 0; i < changes.Slice().Len(); i++ {
		m := changes.Slice().At(i).Map()
		rule, _ := m.Get(semconv.ChangeRule)
		rules[rule.Str()] = true
	}
	for _, want := range []string{"tool.removed", "tool.added"} {
		if !rules[want] {
			t.Errorf("missing rule %s in %v", want, rules)
		}
	}
	// Nothing more happens while the server stays on v2.
	n := r.targets[0].probes.Load()
	waitFor(t, "more probes", func() bool { return r.targets[0].probes.Load() >= n+4 })
	if got := len(eventsNamed(logs, semconv.EventDrift)); got != 1 {
		t.Errorf("drift repeated: %d", got)
	}
}

func TestE2EMixedFleet(t *testing.T) {
	a := newSDKServer("svc", sdkTool("search", "Search v1"))
	b := newSDKServer("svc", sdkTool("search", "Search v1"), sdkTool("extra", "Only on the canary"))
	// A load balancer over two replicas that disagree, choosing a replica
	// for each probe (at its first request, server/discover).
	var n atomic.Int64
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if n.Load()%2 == 0 {
			return a
		}
		return b
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	ts := httptest.NewServer(onMethod(h, "server/discover", func() { n.Add(1) }))
	defer ts.Close()
	url := ts.URL + "/mcp"
	cfg := e2eConfig(httpTarget("svc", url))
	cfg.ConfirmAfter = 3
	r, logs, _ := runReceiver(t, cfg, newProber(cfg), &storageHost{})
	defer func() { _ = r.Shutdown(context.Background()) }()
	waitFor(t, "mixed contract", func() bool { return len(eventsNamed(logs, semconv.EventMixedContract)) == 1 })
	n0 := r.targets[0].probes.Load()
	waitFor(t, "more probes", func() bool { return r.targets[0].probes.Load() >= n0+6 })
	if d := len(eventsNamed(logs, semconv.EventDrift)); d != 0 {
		t.Fatalf("a mixed fleet emitted %d drifts", d)
	}
	m := eventsNamed(logs, semconv.EventMixedContract)[0]
	vs, _ := m.Attributes().Get(semconv.MixedVariants)
	if vs.Slice().Len() != 2 {
		t.Errorf("variants: %v", vs.AsRaw())
	}
}

// TestE2EManyTargetsSomeFailing: 200 targets, 10% failing in different ways
// (refused, hanging, HTTP 500, garbage); the healthy ones keep being probed
// at their interval and never drift; no failure is drift.
func TestE2EManyTargetsSomeFailing(t *testing.T) {
	if testing.Short() {
		t.Skip("200 targets")
	}
	srv := newSDKServer("fleet", sdkTool("search", "Search"), sdkTool("fetch", "Fetch"))
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux := http.NewServeMux()
	mux.Handle("/ok/", sdk)
	mux.HandleFunc("/hang/", func(w http.ResponseWriter, r *http.Request) {
		// Read the request first: only then does the server notice the
		// client hanging up, which ends this handler.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	})
	mux.HandleFunc("/500/", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) })
	mux.HandleFunc("/garbage/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "{not json")
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	defer ts.CloseClientConnections()
	refused := closedPort(t)

	var targets []TargetConfig
	kinds := map[string]string{}
	for i := range 200 {
		name := fmt.Sprintf("t%03d", i)
		var url string
		switch {
		case i < 5:
			url, kinds[name] = refused, "unreachable"
		case i < 10:
			url, kinds[name] = ts.URL+"/hang/"+name, "timeout"
		case i < 15:
			url, kinds[name] = ts.URL+"/500/"+name, "http_status"
		case i < 20:
			url, kinds[name] = ts.URL+"/garbage/"+name, "protocol_error"
		default:
			url = ts.URL + "/ok/" + name
		}
		tc := httpTarget(name, url)
		tc.Transport = TransportStreamableHTTP
		targets = append(targets, tc)
	}
	cfg := e2eConfig(targets...)
	cfg.CollectionInterval = 300 * time.Millisecond
	cfg.Timeout = 2 * time.Second // the hanging targets hold a slot this long
	cfg.MaxConcurrentProbes = 16
	r, logs, _ := runReceiver(t, cfg, newProber(cfg), &storageHost{})
	defer func() { _ = r.Shutdown(context.Background()) }()
	waitFor(t, "180 baselines", func() bool { return len(eventsNamed(logs, semconv.EventSnapshot)) == 180 })
	// Every healthy target keeps probing while the hanging ones time out
	// (TestHungTargetsDoNotStarveHealthyOnes measures the fairness exactly).
	before := map[string]int64{}
	for _, tg := range r.targets {
		before[tg.name] = tg.probes.Load()
	}
	waitFor(t, "two more probes of every healthy target", func() bool {
		for _, tg := range r.targets {
			if kinds[tg.name] == "" && tg.probes.Load() < before[tg.name]+2 {
				return false
			}
		}
		return true
	})
	if d := len(eventsNamed(logs, semconv.EventDrift)); d != 0 {
		t.Fatalf("%d drifts from an unchanged fleet", d)
	}
	waitFor(t, "every failing target's error class", func() bool {
		for _, tg := range r.targets {
			if want := kinds[tg.name]; want != "" && tg.lastErrorClass() != want {
				return false
			}
		}
		return true
	})
}

// closedPort returns a URL on which nothing listens.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/mcp"
}
