package interceptor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// wire drives a Session with raw frames, as the taps do.
type wire struct {
	t    *testing.T
	tel  *itest.Telemetry
	sess *interceptor.Session
	ctx  context.Context
}

func newWire(t *testing.T, opts ...interceptor.Option) *wire {
	tel := itest.NewTelemetry(t)
	ic := interceptor.New(tel.Options(opts...)...)
	return &wire{t: t, tel: tel, sess: ic.NewSession(interceptor.Endpoint{Command: []string{"demo-server", "--stdio"}}), ctx: context.Background()}
}

func (w *wire) send(frame string) string { return string(w.sess.SendFrame(w.ctx, []byte(frame))) }
func (w *wire) recv(frame string)        { w.sess.ReceiveFrame([]byte(frame)) }

func (w *wire) initialize() {
	w.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	w.recv(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"files","version":"2"}}}`)
}

const (
	toolA  = `{"name":"a","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}`
	toolA2 = `{"name":"a","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q","n"]}}`
	toolB  = `{"name":"b","inputSchema":{"type":"object"}}`
)

func listResult(next string, tools ...string) string {
	r := `{"tools":[` + strings.Join(tools, ",") + `]`
	if next != "" {
		r += `,"nextCursor":"` + next + `"`
	}
	return r + `}`
}

func (w *wire) list(id int, cursor string, result string) {
	params := `{}`
	if cursor != "" {
		params = `{"cursor":"` + cursor + `"}`
	}
	w.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":%s}`, id, params))
	w.recv(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%s}`, id, result))
}

func (w *wire) call(id int, tool, args string) {
	w.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
	w.recv(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, id))
}

// last returns the last ended span with this name.
func (w *wire) last(name string) itestSpan {
	w.t.Helper()
	spans := w.tel.Named(name)
	if len(spans) == 0 {
		w.t.Fatalf("no span %q; spans:\n%s", name, w.tel.Dump())
	}
	return itestSpan(spans[len(spans)-1])
}

func digestsOf(t *testing.T, result string) (map[string]string, string) {
	return itest.Digests(t, []byte(result))
}

func TestIdentityFromInitialize(t *testing.T) {
	w := newWire(t)
	w.initialize()
	w.call(1, "a", `{}`)
	s := w.last("tools/call a")
	s.want(t, map[string]any{
		semconv.ServerName:         "files", // serverInfo.name, nothing configured
		semconv.ServerURL:          "stdio:demo-server --stdio",
		semconv.MCPProtocolVersion: "2025-11-25",
		semconv.NetworkTransport:   "pipe",
		semconv.ToolKnown:          false, // no listing yet
		semconv.ToolsListingStale:  false,
		semconv.JSONRPCRequestID:   "1",
	})
	init := w.last("initialize")
	init.want(t, map[string]any{semconv.ServerName: "files", semconv.MCPProtocolVersion: "2025-11-25"})

	w2 := newWire(t, interceptor.WithServerName("configured"), interceptor.WithServerURL("https://files.example/mcp"))
	w2.initialize()
	w2.call(1, "a", `{}`)
	w2.last("tools/call a").want(t, map[string]any{semconv.ServerName: "configured", semconv.ServerURL: "https://files.example/mcp"})
}

func TestIdentityFrom2026Meta(t *testing.T) {
	w := newWire(t)
	w.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	w.recv(`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"weather","version":"3"}},"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{}}}`)
	if !w.sess.Established() {
		t.Fatal("discover did not establish the session")
	}
	w.call(2, "a", `{}`)
	w.last("tools/call a").want(t, map[string]any{semconv.ServerName: "weather", semconv.MCPProtocolVersion: "2026-07-28", semconv.MCPSessionID: nil})

	// A session that missed the handshake learns the version from a
	// request's _meta and the server from a result's _meta.
	w2 := newWire(t)
	w2.send(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	w2.recv(`{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"late"}},"tools":[]}}`)
	w2.call(8, "a", `{}`)
	w2.last("tools/call a").want(t, map[string]any{semconv.ServerName: "late", semconv.MCPProtocolVersion: "2026-07-28"})
}

func TestPagesReplaceAndMerge(t *testing.T) {
	w := newWire(t)
	w.initialize()
	w.list(1, "", listResult("p2", toolA))
	w.list(2, "p2", listResult("", toolB))
	all, set := digestsOf(t, listResult("", toolA, toolB))
	w.last("tools/list").want(t, map[string]any{semconv.ToolsSetDigest: set, semconv.ToolsCount: 2})
	w.call(3, "b", `{}`)
	w.last("tools/call b").want(t, map[string]any{semconv.ToolDigest: all["b"], semconv.ToolsSetDigest: set, semconv.ToolKnown: true})

	// A new first page replaces the whole listing: b is gone.
	w.list(4, "", listResult("", toolA2))
	only, set2 := digestsOf(t, listResult("", toolA2))
	w.call(5, "b", `{}`)
	w.last("tools/call b").want(t, map[string]any{semconv.ToolKnown: false, semconv.ToolDigest: nil, semconv.ToolsSetDigest: set2})
	w.call(6, "a", `{}`)
	w.last("tools/call a").want(t, map[string]any{semconv.ToolDigest: only["a"]})
}

func TestListChangedGenerations(t *testing.T) {
	w := newWire(t)
	w.initialize()
	w.list(1, "", listResult("", toolA))
	w.call(2, "a", `{}`)
	w.last("tools/call a").want(t, map[string]any{semconv.ToolsListingStale: false})

	w.recv(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	w.call(3, "a", `{}`)
	w.last("tools/call a").want(t, map[string]any{semconv.ToolsListingStale: true})

	// A notification that arrives while the refresh is in flight keeps the
	// refreshed listing stale.
	w.send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	w.recv(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	w.recv(`{"jsonrpc":"2.0","id":4,"result":` + listResult("", toolA2) + `}`)
	w.call(5, "a", `{}`)
	w.last("tools/call a").want(t, map[string]any{semconv.ToolsListingStale: true})

	w.list(6, "", listResult("", toolA2))
	w.call(7, "a", `{}`)
	w.last("tools/call a").want(t, map[string]any{semconv.ToolsListingStale: false})

	// A notification between pages makes the merged listing stale too.
	w.send(`{"jsonrpc":"2.0","id":8,"method":"tools/list"}`)
	w.recv(`{"jsonrpc":"2.0","id":8,"result":` + listResult("p2", toolA) + `}`)
	w.recv(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	w.list(9, "p2", listResult("", toolB))
	w.call(10, "b", `{}`)
	w.last("tools/call b").want(t, map[string]any{semconv.ToolsListingStale: true})
}

func TestBatchesAndDirections(t *testing.T) {
	w := newWire(t)
	w.initialize()
	// A batch of two requests; the server's own request uses id 5 too.
	w.send(`[{"jsonrpc":"2.0","id":5,"method":"tools/list"},{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a"}}]`)
	w.recv(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	w.send(`{"jsonrpc":"2.0","id":5,"result":{}}`) // our answer to the server's ping: not a response to our id 5
	if len(w.tel.Named("tools/list")) != 0 {
		t.Fatal("an outgoing response ended the client's request with the same id")
	}
	w.recv(`[{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"bad"}},{"jsonrpc":"2.0","id":5,"result":` + listResult("", toolA) + `}]`)
	w.last("tools/list")
	call := w.last("tools/call a")
	call.want(t, map[string]any{semconv.JSONRPCRequestID: "x", semconv.ErrorType: "-32602", semconv.RPCResponseStatusCode: "-32602"})
	if call.Status.Code != codes.Error || call.Status.Description != "bad" {
		t.Errorf("status %v", call.Status)
	}
	// An integer id and a string id that read alike are different requests.
	w.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"n"}}`)
	w.recv(`{"jsonrpc":"2.0","id":"9","result":{}}`)
	if len(w.tel.Named("tools/call n")) != 0 {
		t.Fatal(`response to id "9" ended request 9`)
	}
	w.recv(`{"jsonrpc":"2.0","id":9,"result":{"isError":true,"content":[]}}`)
	w.last("tools/call n").want(t, map[string]any{semconv.ErrorType: "tool_error", semconv.RPCResponseStatusCode: nil})
}

func TestInjectionChangesOnlyMeta(t *testing.T) {
	w := newWire(t)
	req := `{"jsonrpc":"2.0", "id":1 ,"method":"tools/call","params":{"name":"a","arguments":{"x":[1, 2.50,"\u00e9"]}}}`
	out := w.send(req)
	var got, want map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	meta := got["params"].(map[string]any)["_meta"].(map[string]any)
	tp, _ := meta["traceparent"].(string)
	span := w.tel.Named("tools/call a")
	if len(span) != 0 {
		t.Fatal("span ended before the response")
	}
	if !strings.HasPrefix(tp, "00-") || !strings.Contains(out, `"arguments":{"x":[1, 2.50,"\u00e9"]}`) || !strings.HasPrefix(out, `{"jsonrpc":"2.0", "id":1 ,"method":"tools/call","params":{"_meta":{"traceparent":`) {
		t.Errorf("injected frame: %s", out)
	}
	w.recv(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	s := w.last("tools/call a")
	if want := "00-" + s.SpanContext.TraceID().String() + "-" + s.SpanContext.SpanID().String() + "-01"; tp != want {
		t.Errorf("traceparent %s, want the span's %s", tp, want)
	}
	_ = want

	// A request without params gains them; a notification is injected too.
	if out := w.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); !strings.HasPrefix(out, `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"traceparent":"00-`) {
		t.Errorf("ping: %s", out)
	}
	if out := w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); !strings.Contains(out, `"params":{"_meta":{"traceparent"`) {
		t.Errorf("notification: %s", out)
	}
	w.last("notifications/initialized")

	off := newWire(t, interceptor.WithTraceContextInjection(false))
	if out := off.send(req); out != req {
		t.Errorf("with injection off the frame changed:\n%s\n%s", req, out)
	}
}

func TestCancellationAndClose(t *testing.T) {
	w := newWire(t)
	ctx, cancel := context.WithCancel(context.Background())
	w.ctx = ctx
	w.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)
	cancel()
	s := w.tel.WaitNamed(t, "tools/call slow", 1)[0]
	itestSpan(s).want(t, map[string]any{semconv.ErrorType: "cancelled"})
	w.recv(`{"jsonrpc":"2.0","id":1,"result":{}}`) // late response: ignored
	if n := len(w.tel.Named("tools/call slow")); n != 1 {
		t.Fatalf("%d spans", n)
	}

	w.ctx = context.Background()
	w.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}`)
	w.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user gave up"}}`)
	b := w.last("tools/call b")
	b.want(t, map[string]any{semconv.ErrorType: "cancelled"})
	if b.Status.Description != "user gave up" {
		t.Errorf("status %q", b.Status.Description)
	}

	w.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"c"}}`)
	w.sess.Fail(interceptor.IntID(3), errors.New("broken pipe"))
	w.last("tools/call c").want(t, map[string]any{semconv.ErrorType: "transport_error"})

	w.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"d"}}`)
	w.sess.Close()
	w.last("tools/call d").want(t, map[string]any{semconv.ErrorType: "connection_closed"})
	w.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"e"}}`)
	w.last("tools/call e").want(t, map[string]any{semconv.ErrorType: "connection_closed"})
}

func TestUnhashableDefinition(t *testing.T) {
	w := newWire(t)
	bad := `{"name":"dup","description":"x","description":"y"}`
	w.list(1, "", listResult("", toolA, bad))
	digests, _ := digestsOf(t, listResult("", toolA))
	w.last("tools/list").want(t, map[string]any{semconv.ToolsSetDigest: nil, semconv.ToolsCount: 2})
	w.call(2, "a", `{}`)
	w.last("tools/call a").want(t, map[string]any{semconv.ToolDigest: digests["a"], semconv.ToolsSetDigest: nil})
	w.call(3, "dup", `{}`)
	w.last("tools/call dup").want(t, map[string]any{semconv.ToolKnown: true, semconv.ToolDigest: nil})
	errs := w.tel.Errors()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "repeated member name") {
		t.Errorf("reported errors: %v", errs)
	}
	// Garbage from the server is reported, not fatal.
	w.recv(`{"jsonrpc":"2.0","id":`)
	if len(w.tel.Errors()) != 2 {
		t.Errorf("malformed frame not reported: %v", w.tel.Errors())
	}
}

func TestContentCapture(t *testing.T) {
	off := newWire(t)
	off.call(1, "a", `{"secret":"s3cr3t"}`)
	off.last("tools/call a").want(t, map[string]any{semconv.GenAIToolCallArguments: nil, semconv.GenAIToolCallResult: nil})

	on := newWire(t, interceptor.WithContentCapture(true))
	on.call(1, "a", `{"q":"x"}`)
	on.last("tools/call a").want(t, map[string]any{semconv.GenAIToolCallArguments: `{"q":"x"}`, semconv.GenAIToolCallResult: `{"content":[]}`})
}

func TestIDReuseAndPendingBound(t *testing.T) {
	w := newWire(t)
	w.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`)
	w.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"b"}}`)
	w.last("tools/call a").want(t, map[string]any{semconv.ErrorType: "_OTHER"})
	w.recv(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	w.last("tools/call b").want(t, map[string]any{semconv.ErrorType: nil})

	// A server that never answers cannot grow the session without bound.
	for i := range 4097 {
		w.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 100+i))
	}
	if n := len(w.tel.Named("ping")); n != 1 {
		t.Fatalf("%d ping spans ended, want the one over the bound", n)
	}
	w.last("ping").want(t, map[string]any{semconv.ErrorType: "_OTHER", semconv.JSONRPCRequestID: "4196"})
}

type itestSpan tracetest.SpanStub

func (s itestSpan) want(t *testing.T, m map[string]any) {
	t.Helper()
	itest.Want(t, tracetest.SpanStub(s), m)
}

// Tools whose names differ only in an unpaired surrogate are two tools: each
// call carries its own tool's digest. Telemetry strings must be UTF-8, so the
// name on the span is the recipe's UTF-8 form (U+FFFD).
func TestSurrogateToolNames(t *testing.T) {
	w := newWire(t)
	w.initialize()
	high := `{"name":"a\ud800","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}`
	low := `{"name":"a\udfff","inputSchema":{"type":"object","properties":{"y":{"type":"string"}}}}`
	result := listResult("", high, low)
	w.list(1, "", result)
	page, err := contract.DefaultLimits().ParsePage([]byte(result))
	if err != nil {
		t.Fatal(err)
	}
	defs := contract.Listing(page.Definitions[contract.KindTool]) // as received: high, low
	w.last("tools/list").want(t, map[string]any{semconv.ToolsSetDigest: defs.SetDigest(), semconv.ToolsCount: 2})
	for i, name := range []string{`a\ud800`, `a\udfff`} {
		w.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":{}}}`, 10+i, name))
		w.recv(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, 10+i))
		w.last("tools/call a\uFFFD").want(t, map[string]any{semconv.ToolDigest: defs[i].Digest, semconv.GenAIToolName: "a\uFFFD", semconv.ToolKnown: true})
	}
}

// TestTraceContextContinuation: with continuation on, a traceparent already
// in _meta becomes the span's parent and is replaced by the span's own.
func TestTraceContextContinuation(t *testing.T) {
	const theirs = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"` + theirs + `"},"name":"a"}}`
	off := newWire(t)
	if got := off.send(req); got != req {
		t.Errorf("without continuation the agent's traceparent must win: %s", got)
	}
	w := newWire(t, interceptor.WithTraceContextContinuation(true))
	out := w.send(req)
	w.recv(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	s := w.last("tools/call a")
	if got := s.Parent.TraceID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" || s.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("parent %v, want the agent's span", s.Parent)
	}
	want := fmt.Sprintf(`"traceparent":"00-%s-%s-01"`, s.SpanContext.TraceID(), s.SpanContext.SpanID())
	if !strings.Contains(out, want) || strings.Contains(out, theirs) {
		t.Errorf("forwarded %s, want %s in place of the agent's", out, want)
	}
}

// TestToolDigestAndRefusalAttributes: ToolDigest is what the session was
// served; Fail with an error carrying SpanAttributes puts them on the span.
func TestToolDigestAndRefusalAttributes(t *testing.T) {
	w := newWire(t)
	w.initialize()
	if _, listed := w.sess.ToolDigest("a"); listed {
		t.Error("a listed before any listing")
	}
	w.list(1, "", listResult("", toolA))
	digests, _ := digestsOf(t, listResult("", toolA))
	if d, listed := w.sess.ToolDigest("a"); !listed || d != digests["a"] {
		t.Errorf("ToolDigest(a) = %q, %v; want %q", d, listed, digests["a"])
	}
	if _, listed := w.sess.ToolDigest("b"); listed {
		t.Error("b listed")
	}
	w.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`)
	w.sess.Fail(interceptor.IntID(2), refusal{})
	w.last("tools/call a").want(t, map[string]any{semconv.ErrorType: "refused_here", semconv.GuardPlannedDigest: "p"})
}

type refusal struct{}

func (refusal) Error() string     { return "refused" }
func (refusal) ErrorType() string { return "refused_here" }
func (refusal) SpanAttributes() []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String(semconv.GuardPlannedDigest, "p")}
}
