package itest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// Client is the SDK client under test, reduced to what the scenario needs.
type Client interface {
	ListTools(ctx context.Context) error
	// CallTool calls a tool; tool errors and JSON-RPC errors are not Go
	// errors here (the scenario checks them on spans).
	CallTool(ctx context.Context, name string, args map[string]any)
	// ListChanged delivers the client's tools list_changed notifications.
	ListChanged() <-chan struct{}
	// LastText is the text of the last successful result of a tool.
	LastText(tool string) string
}

// Scenario is a session against a demo server whose search tool changes.
type Scenario struct {
	Tel    *Telemetry
	Client Client
	// Change switches the server's search tool to version 2.
	Change func()
	// Raw returns the server's current raw tools/list result.
	Raw func(t testing.TB) []byte
	// ServerName is the expected mcpdrift.server.name.
	ServerName string
	// ProtocolVersion is the expected mcp.protocol.version.
	ProtocolVersion string
	// Net is the expected network.transport.
	Net string
	// NoPropagation says the server cannot see the trace context (injection
	// is off); otherwise search's result must echo the call's traceparent.
	NoPropagation bool
	// MCPSessionID says whether spans must carry mcp.session.id.
	MCPSessionID bool
}

// AgentContext is the context the scenario calls with: agent "planner"
// (id "agent-7") in conversation "conv-42".
func AgentContext() context.Context {
	ctx := interceptor.ContextWithAgent(context.Background(), interceptor.Agent{Name: "planner", ID: "agent-7"})
	return interceptor.ContextWithConversationID(ctx, "conv-42")
}

// RunDrift runs the scenario: list, call (ok, tool error, JSON-RPC error),
// the server changes search and notifies, a call before the refresh carries
// the old digest and listing_stale, a call after it the new digest.
func RunDrift(t *testing.T, sc Scenario) {
	t.Helper()
	ctx := AgentContext()
	v1, set1 := Digests(t, sc.Raw(t))

	if err := sc.Client.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	list := sc.Tel.WaitNamed(t, "tools/list", 1)
	Want(t, list[len(list)-1], map[string]any{semconv.ToolsSetDigest: set1, semconv.MCPMethodName: "tools/list"})

	sc.Client.CallTool(ctx, "search", map[string]any{"query": "otel"})
	call := sc.Tel.WaitNamed(t, "tools/call search", 1)[0]
	IsClient(t, call)
	want := map[string]any{
		semconv.MCPMethodName:       "tools/call",
		semconv.GenAIOperationName:  "execute_tool",
		semconv.GenAIToolName:       "search",
		semconv.ToolDigest:          v1["search"],
		semconv.ToolsSetDigest:      set1,
		semconv.ToolKnown:           true,
		semconv.ToolsListingStale:   false,
		semconv.GenAIAgentName:      "planner",
		semconv.GenAIAgentID:        "agent-7",
		semconv.GenAIConversationID: "conv-42",
		semconv.ServerName:          sc.ServerName,
		semconv.MCPProtocolVersion:  sc.ProtocolVersion,
		semconv.NetworkTransport:    sc.Net,
		semconv.ErrorType:           nil,
	}
	if !sc.MCPSessionID {
		want[semconv.MCPSessionID] = nil
	}
	Want(t, call, want)
	if Str(call, semconv.JSONRPCRequestID) == "" || len(Str(call, semconv.ClientSession)) != 32 {
		t.Errorf("tools/call span lacks a request id or client session: %s", sc.Tel.Dump())
	}
	if sc.MCPSessionID && Str(call, semconv.MCPSessionID) == "" {
		t.Errorf("tools/call span lacks mcp.session.id")
	}
	wantTP := "tp=00-" + call.SpanContext.TraceID().String() + "-" + call.SpanContext.SpanID().String() + "-01"
	if sc.NoPropagation {
		wantTP = "tp="
	}
	if got := sc.Client.LastText("search"); !strings.HasSuffix(got, " "+wantTP) {
		t.Errorf("search result %q: the server did not receive the call span's trace context (want %q)", got, wantTP)
	}

	sc.Client.CallTool(ctx, "fail", map[string]any{})
	failed := sc.Tel.WaitNamed(t, "tools/call fail", 1)[0]
	Want(t, failed, map[string]any{semconv.ErrorType: "tool_error", semconv.ToolDigest: v1["fail"]})
	wantError(t, failed)

	sc.Client.CallTool(ctx, "nope", map[string]any{})
	unknown := sc.Tel.WaitNamed(t, "tools/call nope", 1)[0]
	Want(t, unknown, map[string]any{semconv.ToolKnown: false, semconv.ToolDigest: nil})
	if et := Str(unknown, semconv.ErrorType); et != "tool_error" && !strings.HasPrefix(et, "-326") {
		t.Errorf("unknown tool: error.type = %q, want a JSON-RPC code or tool_error", et)
	}
	if et := Str(unknown, semconv.ErrorType); strings.HasPrefix(et, "-") {
		Want(t, unknown, map[string]any{semconv.RPCResponseStatusCode: et})
	}
	wantError(t, unknown)

	// The server changes search; the client hears of it.
	sc.Change()
	select {
	case <-sc.Client.ListChanged():
	case <-time.After(10 * time.Second):
		t.Fatal("no tools list_changed notification reached the client")
	}
	v2, set2 := Digests(t, sc.Raw(t))
	if v2["search"] == v1["search"] || set2 == set1 {
		t.Fatal("the change did not change the digests")
	}

	// Planned with the old listing, sent before the refresh.
	sc.Client.CallTool(ctx, "search", map[string]any{"query": "drift"})
	before := sc.Tel.WaitNamed(t, "tools/call search", 2)[1]
	Want(t, before, map[string]any{semconv.ToolDigest: v1["search"], semconv.ToolsSetDigest: set1, semconv.ToolsListingStale: true})

	if err := sc.Client.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	refreshed := sc.Tel.WaitNamed(t, "tools/list", 2)
	Want(t, refreshed[len(refreshed)-1], map[string]any{semconv.ToolsSetDigest: set2})

	sc.Client.CallTool(ctx, "search", map[string]any{"query": "drift", "limit": 3})
	after := sc.Tel.WaitNamed(t, "tools/call search", 3)[2]
	Want(t, after, map[string]any{semconv.ToolDigest: v2["search"], semconv.ToolsSetDigest: set2, semconv.ToolsListingStale: false, semconv.ErrorType: nil})

	if n := sc.Tel.HistogramCount(t, semconv.MetricClientOperationDuration,
		attribute.String(semconv.MCPMethodName, "tools/call"), attribute.String(semconv.GenAIToolName, "search")); n != 3 {
		t.Errorf("%s for tools/call search: %d measurements, want 3", semconv.MetricClientOperationDuration, n)
	}
	if n := sc.Tel.HistogramCount(t, semconv.MetricClientOperationDuration,
		attribute.String(semconv.GenAIToolName, "fail"), attribute.String(semconv.ErrorType, "tool_error")); n != 1 {
		t.Errorf("%s for the failing tool: %d measurements with error.type, want 1", semconv.MetricClientOperationDuration, n)
	}
	if errs := sc.Tel.Errors(); len(errs) > 0 {
		t.Errorf("interceptor reported errors: %v", errs)
	}
}

func wantError(t testing.TB, s tracetest.SpanStub) {
	t.Helper()
	if s.Status.Code != codes.Error {
		t.Errorf("span %q status %v, want Error", s.Name, s.Status)
	}
}

// CheckEverything runs a short session against the real server-everything
// and checks the spans against what the server sent, as results (the
// recorded responses whose result has a given member) shows it.
func CheckEverything(t *testing.T, tel *Telemetry, c Client, results func(member string) []json.RawMessage) {
	t.Helper()
	ctx := AgentContext()
	if err := c.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	lists := results("tools")
	if len(lists) == 0 {
		t.Fatal("no tools/list result recorded")
	}
	digests, set := Digests(t, lists[len(lists)-1])
	if digests["echo"] == "" {
		t.Fatalf("server-everything lists no echo tool: %v", digests)
	}
	list := tel.WaitNamed(t, "tools/list", 1)
	Want(t, list[len(list)-1], map[string]any{semconv.ToolsSetDigest: set, semconv.ToolsCount: len(digests)})

	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
	}
	inits := results("serverInfo")
	if len(inits) == 0 || json.Unmarshal(inits[0], &init) != nil || init.ServerInfo.Name == "" {
		t.Fatalf("no initialize result recorded: %s", inits)
	}
	c.CallTool(ctx, "echo", map[string]any{"message": "drift"})
	call := tel.WaitNamed(t, "tools/call echo", 1)[0]
	IsClient(t, call)
	Want(t, call, map[string]any{
		semconv.ToolDigest:         digests["echo"],
		semconv.ToolsSetDigest:     set,
		semconv.ToolKnown:          true,
		semconv.ErrorType:          nil,
		semconv.ServerName:         init.ServerInfo.Name,
		semconv.MCPProtocolVersion: init.ProtocolVersion,
		semconv.GenAIAgentName:     "planner",
	})
	if !strings.Contains(c.LastText("echo"), "drift") {
		t.Errorf("echo answered %q", c.LastText("echo"))
	}
	if errs := tel.Errors(); len(errs) > 0 {
		t.Errorf("interceptor reported errors: %v", errs)
	}
}

// WantSession checks the interceptor session a front-end hands the
// application: it is the one behind every span tel recorded (their
// mcpdrift.client.session), it learnt the server's name, and it saw the
// handshake.
func WantSession(t testing.TB, tel *Telemetry, sess *interceptor.Session, serverName string) {
	t.Helper()
	if sess == nil {
		t.Fatal("the front-end returned no session")
	}
	if sess.ServerName() != serverName || !sess.Established() {
		t.Errorf("session: server name %q established %v, want %q and true", sess.ServerName(), sess.Established(), serverName)
	}
	for _, s := range tel.Spans() {
		if got := Str(s, semconv.ClientSession); got != sess.ClientSessionID() {
			t.Errorf("span %q: %s %q, want the session's %q", s.Name, semconv.ClientSession, got, sess.ClientSessionID())
		}
	}
}
