package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpdrift/mcpdrift/semconv"
)

type lookupIn struct {
	City string `json:"city"`
	Unit string `json:"unit" jsonschema:"celsius or fahrenheit"`
}

// demoServer serves lookup (and, after change, a lookup that needs a unit
// too) over Streamable HTTP.
func demoServer(t *testing.T) (url string, change func()) { return demoServerWith(t, nil) }

// demoServerWith is demoServer with its HTTP handler wrapped by wrap.
func demoServerWith(t *testing.T, wrap func(http.Handler) http.Handler) (url string, change func()) {
	s := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1"}, nil)
	handler := func(_ context.Context, _ *mcp.CallToolRequest, in lookupIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + in.City}}}, nil, nil
	}
	s.AddTool(&mcp.Tool{Name: "lookup", Description: "Weather for a city.", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
		func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny"}}}, nil
		})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	if wrap != nil {
		h = wrap(h)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL, func() {
		mcp.AddTool(s, &mcp.Tool{Name: "lookup", Description: "Weather for a city, in a unit."}, handler)
	}
}

// recorded is the agent's config from flags, with telemetry recorded in
// memory (spans in exp).
func recorded(t *testing.T, flags ...string) (exp *tracetest.InMemoryExporter, tel telemetry, cfg config) {
	t.Helper()
	exp = tracetest.NewInMemoryExporter()
	tel = telemetry{tp: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)), mp: sdkmetric.NewMeterProvider(), res: resource.Empty(),
		shutdown: func(context.Context) error { return nil }}
	cfg, err := parseFlags(flags)
	if err != nil {
		t.Fatal(err)
	}
	return exp, tel, cfg
}

func TestAgentSessionsAndDrift(t *testing.T) {
	url, change := demoServer(t)
	exp, tel, cfg := recorded(t, "-server", url, "-agents", "planner, researcher", "-sessions", "2", "-rate", "40", "-replan-after", "5", "-server-name", "weather-prod")
	// The server changes once every session has called it, and the run ends
	// once every session has made its stale calls and seen the new
	// definition: conditions, not durations, so a loaded machine only makes
	// the test slower (the deadline is a backstop).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		defer cancel()
		changed := false
		for ctx.Err() == nil {
			calls, stale, digests := lookupCalls(exp.GetSpans())
			if !changed && len(calls) == 4 {
				change()
				changed = true
			}
			if changed && stale >= 4*5 && digests == 2 {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	st, err := run(ctx, cfg, tel, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	sessions := map[string]string{} // client session -> agent
	conversations := map[string]bool{}
	digests := map[string]bool{}
	stale := 0
	for _, s := range exp.GetSpans() {
		if s.Name != "tools/call lookup" {
			continue
		}
		a := attrs(s.Attributes)
		if a[semconv.ServerName] != "weather-prod" {
			t.Fatalf("server name %q", a[semconv.ServerName])
		}
		sessions[a[semconv.ClientSession]] = a[semconv.GenAIAgentName]
		conversations[a[semconv.GenAIConversationID]] = true
		digests[a[semconv.ToolDigest]] = true
		if a[semconv.ToolsListingStale] == "true" {
			stale++
		}
	}
	if len(sessions) != 4 || len(conversations) != 4 {
		t.Errorf("%d client sessions, %d conversations; want 4 each", len(sessions), len(conversations))
	}
	byAgent := map[string]int{}
	for _, a := range sessions {
		byAgent[a]++
	}
	if byAgent["planner"] != 2 || byAgent["researcher"] != 2 {
		t.Errorf("sessions per agent: %v", byAgent)
	}
	if len(digests) != 2 {
		t.Errorf("tool digests seen: %v; want the old and the new", digests)
	}
	// Each session makes -replan-after calls on its old plan after the
	// change (at least that many: the notification may race a call).
	if stale < 4*5 {
		t.Errorf("%d calls made against a stale listing, want at least 20", stale)
	}
	if st.byAgent["planner"].calls.Load() == 0 || st.byAgent["researcher"].calls.Load() == 0 {
		t.Errorf("stats: %s", st)
	}
}

// TestAgentRefusesStaleAfterRelist: the agent lists the tools again as
// soon as the server announces the change (as Claude Code does) but keeps
// calling with its old plan; the interceptor's guard refuses those calls
// (their digests are already the new ones: only their arguments show the
// plan is stale), none reaches the server, their spans say stale, and once
// the agent re-plans its calls go through.
func TestAgentRefusesStaleAfterRelist(t *testing.T) {
	var changedAt, relisted atomic.Bool
	var oldPlansReceived atomic.Int64
	url, change := demoServerWith(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			switch {
			case changedAt.Load() && bytes.Contains(body, []byte(`"tools/list"`)):
				relisted.Store(true)
			case relisted.Load() && bytes.Contains(body, []byte(`"tools/call"`)) && !bytes.Contains(body, []byte(`"unit"`)):
				// A call on the old plan after the agent listed v2 (one
				// racing the announcement is not the guard's to catch).
				oldPlansReceived.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	})
	exp, tel, cfg := recorded(t, "-server", url, "-agents", "planner", "-sessions", "1", "-rate", "40", "-replan-after", "3", "-relist", "-refuse-stale")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		defer cancel()
		for ctx.Err() == nil {
			refused, passedAfter := refusedLookups(exp.GetSpans())
			if !changedAt.Load() && len(exp.GetSpans()) > 0 && passedAfter > 0 {
				changedAt.Store(true)
				change()
			}
			if changedAt.Load() && refused >= 3 && passedAfter > 1 {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	if _, err := run(ctx, cfg, tel, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, s := range exp.GetSpans() {
		a := attrs(s.Attributes)
		if s.Name != "tools/call lookup" || a[semconv.ErrorType] != semconv.ErrorTypeRefused {
			continue
		}
		refused++
		if a[semconv.ToolStale] != "true" || a[semconv.GuardStaleBasis] != semconv.StaleBasisArguments || a[semconv.GuardWitnessArgument] != "unit" ||
			a[semconv.ToolsListingStale] != "false" {
			t.Errorf("refused span %v", a)
		}
	}
	if refused < 3 {
		t.Fatalf("%d calls refused, want the 3 made on the old plan after the re-list", refused)
	}
	if n := oldPlansReceived.Load(); n != 0 {
		t.Fatalf("the server received %d calls planned on the old definition", n)
	}
}

// refusedLookups counts the lookup calls the guard refused, and the ones
// that passed after the last refusal (or at all, before any).
func refusedLookups(spans tracetest.SpanStubs) (refused, passedAfter int) {
	for _, s := range spans {
		if s.Name != "tools/call lookup" {
			continue
		}
		if attrs(s.Attributes)[semconv.ErrorType] == semconv.ErrorTypeRefused {
			refused++
			passedAfter = 0
			continue
		}
		passedAfter++
	}
	return refused, passedAfter
}

// lookupCalls counts the lookup calls so far: per client session, those
// made against a stale listing, and the distinct digests they carried.
func lookupCalls(spans tracetest.SpanStubs) (sessions map[string]int, stale, digests int) {
	sessions = map[string]int{}
	seen := map[string]bool{}
	for _, s := range spans {
		if s.Name != "tools/call lookup" {
			continue
		}
		a := attrs(s.Attributes)
		sessions[a[semconv.ClientSession]]++
		seen[a[semconv.ToolDigest]] = true
		if a[semconv.ToolsListingStale] == "true" {
			stale++
		}
	}
	return sessions, stale, len(seen)
}

func attrs(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// TestOTLPExport checks spans reach an OTLP/HTTP endpoint.
func TestOTLPExport(t *testing.T) {
	var traces, metrics atomic.Int64
	var mu sync.Mutex
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/v1/traces":
			traces.Add(1)
		case "/v1/metrics":
			metrics.Add(1)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	runExporting(t, "-otlp-endpoint", collector.URL)
	if traces.Load() == 0 || metrics.Load() == 0 {
		t.Errorf("OTLP requests: %d traces, %d metrics", traces.Load(), metrics.Load())
	}
}

func TestFlags(t *testing.T) {
	for _, bad := range [][]string{
		{},
		{"-server", "http://x", "-command", "node s.js"},
		{"-server", "http://x", "-transport", "stdio"},
		{"-command", "node s.js", "-transport", "sse"},
		{"-server", "http://x", "-rate", "0"},
		{"-server", "http://x", "-agents", " , "},
		{"-server", "http://x", "-otlp-protocol", "thrift"},
	} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		}
	}
	cfg, err := parseFlags([]string{"-command", "node server.js stdio", "-tools", "echo,add"})
	if err != nil || cfg.transport != "stdio" || len(cfg.command) != 3 || len(cfg.tools) != 2 {
		t.Errorf("cfg %+v, %v", cfg, err)
	}
}

func TestArgumentsFor(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer","minimum":3},"mode":{"enum":["fast","slow"]},"tags":{"type":"array","items":{"type":"string"},"minItems":1},"opt":{"type":"boolean"}},"required":["q","n","mode","tags"]}`)
	got, _ := json.Marshal(argumentsFor(schema))
	if string(got) != `{"mode":"fast","n":3,"q":"example","tags":["example"]}` {
		t.Errorf("arguments %s", got)
	}
}

// runExporting runs one short session against the demo server, exporting
// with the given flags, and flushes the telemetry.
func runExporting(t *testing.T, flags ...string) {
	t.Helper()
	url, _ := demoServer(t)
	cfg, err := parseFlags(append([]string{"-server", url, "-agents", "a", "-sessions", "1", "-rate", "20", "-duration", "500ms"}, flags...))
	if err != nil {
		t.Fatal(err)
	}
	tel, err := setupTelemetry(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(context.Background(), cfg, tel, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	if err := tel.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
