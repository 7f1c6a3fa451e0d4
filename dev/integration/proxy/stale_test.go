package proxy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// wantArgumentRefusal checks the agent got the STALE_TOOL_SCHEMA envelope
// on argument evidence, its witness naming arg.
func wantArgumentRefusal(t *testing.T, res *mcp.CallToolResult, arg string) {
	t.Helper()
	sc, _ := res.StructuredContent.(map[string]any)
	w, _ := sc["witness"].(map[string]any)
	if !res.IsError || sc["error_code"] != semconv.RefusalStaleToolSchema || sc["basis"] != "arguments" || sc["side_effect_started"] != false ||
		w["argument"] != arg || sc["planned_digest"] == sc["current_digest"] {
		t.Fatalf("result %v %v", res.IsError, res.StructuredContent)
	}
}

// TestGateRefusesOldPlanAfterRelist: the agent lists the tools again as
// soon as the server announces the change (as Claude Code does) but calls
// with its old plan: the stdio proxy's gate still refuses the call, on its
// arguments (its digest is the new one), with the witness; the server never
// sees it; the call written for the new definition passes.
func TestGateRefusesOldPlanAfterRelist(t *testing.T) {
	tel := newTelemetry(t)
	p := startStdio(t, proxy.Config{OnStale: proxy.OnStaleRefuse}, tel, "sdk")
	a := connectAgent(t, p)
	a.list(t)
	a.call(t, "search", map[string]any{"q": "x"})
	a.call(t, "upgrade", nil)
	<-a.changed
	a.list(t)

	wantArgumentRefusal(t, a.call(t, "search", map[string]any{"q": "x"}), "limit")
	if n := p.calls(t, "search"); n != 1 {
		t.Errorf("the server ran search %d times, want 1 (the refused call must not reach it)", n)
	}
	ref := tel.waitNamed(t, "tools/call search", 2)[1]
	if str(ref, semconv.ErrorType) != semconv.ErrorTypeRefused || str(ref, semconv.GuardStaleBasis) != semconv.StaleBasisArguments ||
		str(ref, semconv.GuardWitnessArgument) != "limit" || str(ref, semconv.GuardPlannedDigest) == str(ref, semconv.ToolDigest) {
		t.Errorf("refusal span attributes %v", ref.Attributes)
	}
	if res := a.call(t, "search", map[string]any{"q": "x", "limit": 1}); res.IsError {
		t.Fatalf("the call written for the new definition was refused: %v", res.StructuredContent)
	}
	if n := p.calls(t, "search"); n != 2 {
		t.Errorf("the server ran search %d times, want 2", n)
	}
}

// TestHTTPRefusesOldPlanAfterRelist: the same through the HTTP → HTTP
// proxy, a session on a go-sdk Streamable HTTP server.
func TestHTTPRefusesOldPlanAfterRelist(t *testing.T) {
	var searchCalls atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "changing", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "search", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}, count(&searchCalls))
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer up.Close()
	hs := httpProxyWith(t, proxy.Config{Upstream: up.URL, Listen: "test", OnStale: proxy.OnStaleRefuse}, newTelemetry(t))
	changed := make(chan struct{}, 1)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-agent", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}}).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx := context.Background()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	srv.AddTool(&mcp.Tool{Name: "search", InputSchema: map[string]any{"type": "object", "required": []string{"q", "limit"},
		"properties": map[string]any{"q": map[string]any{"type": "string"}, "limit": map[string]any{"type": "integer"}}}}, count(&searchCalls))
	waitChan(t, changed, "notifications/tools/list_changed")
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"q": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	wantArgumentRefusal(t, res, "limit")
	if n := searchCalls.Load(); n != 0 {
		t.Errorf("the refused call reached the server (%d calls)", n)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"q": "x", "limit": 1}}); err != nil || res.IsError {
		t.Fatalf("the call written for the new definition: %v %v", err, res)
	}
}
