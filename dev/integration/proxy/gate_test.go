package proxy_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// agent is a go-sdk client connected to a stdio proxy over its pipes.
type agent struct {
	cs      *mcp.ClientSession
	changed chan struct{}
}

func connectAgent(t *testing.T, p *stdioProxy) *agent {
	t.Helper()
	return connectAgentWith(t, p, &mcp.ClientOptions{}, "2025-11-25")
}

// connectAgentWith connects with these options (a list_changed handler is
// added) and protocol version ("" the SDK's default).
func connectAgentWith(t *testing.T, p *stdioProxy, opts *mcp.ClientOptions, version string) *agent {
	t.Helper()
	a := &agent{changed: make(chan struct{}, 16)}
	opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case a.changed <- struct{}{}:
		default:
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "gate-agent", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: io.NopCloser(p.out), Writer: p.in},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	a.cs = cs
	t.Cleanup(func() { cs.Close() })
	return a
}

func (a *agent) call(t *testing.T, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	return res
}

func (a *agent) list(t *testing.T) {
	t.Helper()
	if _, err := a.cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

func (p *stdioProxy) calls(t *testing.T, tool string) int {
	return len(slices.DeleteFunc(p.serverLog(t), func(l string) bool { return l != "tools/call "+tool }))
}

// TestGateRefusesStaleCall: with --on-stale refuse, a call planned against
// a definition the server changed never reaches the server and gets the
// STALE_TOOL_SCHEMA tool error; other tools pass; after the agent lists
// again the call passes. The refusal is a span and a count.
func TestGateRefusesStaleCall(t *testing.T) {
	tel := newTelemetry(t)
	p := startStdio(t, proxy.Config{OnStale: proxy.OnStaleRefuse}, tel, "sdk")
	a := connectAgent(t, p)
	a.list(t)
	if res := a.call(t, "search", map[string]any{"q": "x"}); res.IsError {
		t.Fatal("search refused before any change")
	}
	planned := str(tel.waitNamed(t, "tools/call search", 1)[0], semconv.ToolDigest)
	a.call(t, "upgrade", nil)
	<-a.changed

	res := a.call(t, "search", map[string]any{"q": "x"})
	if !res.IsError {
		t.Fatal("the stale call passed")
	}
	sc, _ := res.StructuredContent.(map[string]any)
	if sc["error_code"] != "STALE_TOOL_SCHEMA" || sc["tool"] != "search" || sc["required_action"] != "refresh_tools" ||
		sc["side_effect_started"] != false || sc["planned_digest"] != planned || sc["current_digest"] == "" || sc["current_digest"] == planned {
		t.Errorf("structuredContent %v", sc)
	}
	if n := p.calls(t, "search"); n != 1 {
		t.Errorf("the server ran search %d times, want 1 (the refused call must not reach it)", n)
	}
	if res := a.call(t, "echo", nil); res.IsError {
		t.Error("an unchanged tool was refused")
	}
	spans := tel.waitNamed(t, "tools/call search", 2)
	ref := spans[1]
	if str(ref, semconv.ErrorType) != semconv.ErrorTypeRefused || str(ref, semconv.GuardRefusal) != semconv.RefusalStaleToolSchema ||
		str(ref, semconv.ToolDigest) != planned || str(ref, semconv.GuardCurrentDigest) != sc["current_digest"] {
		t.Errorf("refusal span attributes %v", ref.Attributes)
	}
	if n := tel.counter(t, semconv.MetricProxyRefusals, attribute.String(semconv.GuardRefusal, semconv.RefusalStaleToolSchema)); n != 1 {
		t.Errorf("%s = %d, want 1", semconv.MetricProxyRefusals, n)
	}

	a.list(t)
	if res := a.call(t, "search", map[string]any{"q": "x", "limit": 1}); res.IsError {
		t.Error("the call was refused after the agent listed again")
	}
	if n := p.calls(t, "search"); n != 2 {
		t.Errorf("the server ran search %d times, want 2", n)
	}
}

// TestGateObserve: by default the stale call is forwarded and only recorded.
func TestGateObserve(t *testing.T) {
	tel := newTelemetry(t)
	p := startStdio(t, proxy.Config{}, tel, "sdk")
	a := connectAgent(t, p)
	a.list(t)
	a.call(t, "upgrade", nil)
	<-a.changed
	if res := a.call(t, "search", map[string]any{"q": "x"}); res.IsError {
		t.Error("observe mode refused")
	}
	s := tel.waitNamed(t, "tools/call search", 1)[0]
	if v, _ := attr(s, semconv.ToolsListingStale); !v.AsBool() {
		t.Errorf("%s not set on a call after list_changed", semconv.ToolsListingStale)
	}
	if p.calls(t, "search") != 1 {
		t.Error("observe mode did not forward")
	}
}

// TestLockHidesUnapproved: with --lock, a definition the lock does not hold
// is left out of tools/list and its calls are refused (TOOL_NOT_APPROVED);
// with refuse-session the listing itself fails and so does every request.
func TestLockHidesUnapproved(t *testing.T) {
	lock := writeLock(t, map[string]string{"echo": `{"name":"echo","inputSchema":{"type":"object"}}`,
		"upgrade": `{"name":"upgrade","inputSchema":{"type":"object"}}`,
		"search":  `{"name":"search","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}},"required":["q","limit"]}}`})
	t.Run("hide", func(t *testing.T) {
		tel := newTelemetry(t)
		p := startStdio(t, proxy.Config{Lock: lock}, tel, "sdk")
		a := connectAgent(t, p)
		lt, err := a.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		names := toolNames(lt)
		if slices.Contains(names, "search") || !slices.Contains(names, "echo") {
			t.Errorf("listed %v: search (v1, not in the lock) must be hidden, echo shown", names)
		}
		res := a.call(t, "search", map[string]any{"q": "x"})
		if sc, _ := res.StructuredContent.(map[string]any); !res.IsError || sc["error_code"] != "TOOL_NOT_APPROVED" {
			t.Errorf("unapproved call: %v", res.StructuredContent)
		}
		if p.calls(t, "search") != 0 {
			t.Error("the unapproved call reached the server")
		}
		// The approved (v2) definition appears once the server serves it.
		a.call(t, "upgrade", nil)
		<-a.changed
		if res := a.call(t, "search", map[string]any{"q": "x", "limit": 1}); res.IsError {
			t.Errorf("the approved definition was refused: %v", res.StructuredContent)
		}
	})
	t.Run("refuse-session", func(t *testing.T) {
		p := startStdio(t, proxy.Config{Lock: lock, LockMode: proxy.LockRefuseSession}, newTelemetry(t), "sdk")
		a := connectAgent(t, p)
		if _, err := a.cs.ListTools(context.Background(), nil); err == nil {
			t.Error("a listing with an unapproved definition passed")
		}
		if _, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}); err == nil {
			t.Error("the failed session still forwards calls")
		}
		if p.calls(t, "echo") != 0 {
			t.Error("a call of the failed session reached the server")
		}
	})
}

// writeLock writes a lock (a sealed snapshot) holding these tool definitions.
func writeLock(t testing.TB, tools map[string]string) string {
	t.Helper()
	var raws []json.RawMessage
	for _, def := range tools {
		raws = append(raws, json.RawMessage(def))
	}
	s := &contract.Snapshot{}
	l, err := contract.DefaultLimits().HashDefinitions(contract.KindTool, raws)
	if err != nil {
		t.Fatal(err)
	}
	s.SetListing(contract.KindTool, l)
	if err := s.Seal(); err != nil {
		t.Fatal(err)
	}
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mcp.lock.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// toolNames are the names of a listing's tools.
func toolNames(lt *mcp.ListToolsResult) []string {
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// TestLockGatesBatches: a JSON-RPC batch (2025-03-26) is no way around the
// gate: its unapproved call is answered on its own with TOOL_NOT_APPROVED
// and left out of the batch the server gets; the rest goes through.
func TestLockGatesBatches(t *testing.T) {
	lock := writeLock(t, map[string]string{"echo": `{"name":"echo","inputSchema":{"type":"object"}}`,
		"upgrade": `{"name":"upgrade","inputSchema":{"type":"object"}}`})
	tel := newTelemetry(t)
	p := startStdio(t, proxy.Config{Lock: lock}, tel, "sdk")
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"batcher","version":"1"}}}`)
	p.recvID(t, "1")
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	p.recvID(t, "2")
	p.send(t, `[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"q":"x"}}},`+
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{}}}]`)
	refused := p.recvID(t, "3")
	if !strings.Contains(refused, `"TOOL_NOT_APPROVED"`) || !strings.Contains(refused, `"isError":true`) {
		t.Errorf("the unapproved call in the batch answered %s", refused)
	}
	p.recvID(t, "4") // the server logs a call before it answers it
	if p.calls(t, "echo") != 1 {
		t.Error("the approved call of the batch did not reach the server")
	}
	if p.calls(t, "search") != 0 {
		t.Error("the unapproved call in the batch reached the server")
	}
	if s := tel.waitNamed(t, "tools/call search", 1)[0]; str(s, semconv.GuardRefusal) != semconv.RefusalToolNotApproved {
		t.Errorf("refusal span %v", s.Attributes)
	}
}
