package httptap_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/interceptor/httptap"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// recorder is an HTTP server that records request bodies and answers with
// a fixed status, content type and body.
type recorder struct {
	mu     sync.Mutex
	bodies []string
	status int
	ctype  string
	body   string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	if req.ContentLength != int64(len(b)) {
		http.Error(w, "content length mismatch", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, string(b))
	r.mu.Unlock()
	if r.ctype != "" {
		w.Header().Set("Content-Type", r.ctype)
	}
	w.WriteHeader(r.status)
	io.WriteString(w, r.body)
}

func post(t *testing.T, c *http.Client, url, ctype, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func TestRequestBytesUnchangedButMeta(t *testing.T) {
	rec := &recorder{status: 200, ctype: "application/json", body: `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	tel := itest.NewTelemetry(t)
	on := httptap.Client(nil, tel.Options()...)
	off := httptap.Client(nil, tel.Options(interceptor.WithTraceContextInjection(false))...)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"n":1.50, "s":"<&>"}}}`

	_, got := post(t, off, hs.URL, "application/json", body)
	if got != rec.body {
		t.Fatalf("response body changed: %s", got)
	}
	post(t, on, hs.URL, "application/json; charset=utf-8", body)
	post(t, on, hs.URL, "text/plain", body) // not JSON: not MCP, untouched
	if rec.bodies[0] != body {
		t.Errorf("injection off: server got\n%s\nwant\n%s", rec.bodies[0], body)
	}
	injected := rec.bodies[1]
	if !strings.HasPrefix(injected, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"00-`) ||
		!strings.HasSuffix(injected, `},"name":"a","arguments":{"n":1.50, "s":"<&>"}}}`) {
		t.Errorf("injection on: server got %s", injected)
	}
	if rec.bodies[2] != body {
		t.Errorf("non-JSON body changed: %s", rec.bodies[2])
	}
	spans := tel.Named("tools/call a")
	if len(spans) != 2 {
		t.Fatalf("%d spans:\n%s", len(spans), tel.Dump())
	}
	itest.Want(t, spans[0], map[string]any{semconv.ServerAddress: "127.0.0.1", semconv.NetworkTransport: "tcp", semconv.ErrorType: nil})
	if itest.Str(spans[0], semconv.ServerURL) != hs.URL {
		t.Errorf("%s = %q", semconv.ServerURL, itest.Str(spans[0], semconv.ServerURL))
	}
}

func TestHTTPErrorsEndCalls(t *testing.T) {
	rec := &recorder{status: 503, ctype: "text/plain", body: "overloaded"}
	hs := httptest.NewServer(rec)
	tel := itest.NewTelemetry(t)
	c := httptap.Client(nil, tel.Options()...)
	post(t, c, hs.URL, "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`)
	itest.Want(t, tel.WaitNamed(t, "tools/call a", 1)[0], map[string]any{semconv.ErrorType: "503"})

	// A JSON-RPC error in an HTTP error response is the better answer.
	rec.status, rec.ctype, rec.body = 400, "application/json", `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no such method"}}`
	post(t, c, hs.URL, "application/json", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}`)
	itest.Want(t, tel.WaitNamed(t, "tools/call b", 1)[0], map[string]any{semconv.ErrorType: "-32601"})

	hs.Close() // now the exchange itself fails
	req, _ := http.NewRequest(http.MethodPost, hs.URL, bytes.NewBufferString(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"c"}}`))
	req.Header.Set("Content-Type", "application/json")
	if _, err := c.Do(req); err == nil {
		t.Fatal("expected a transport error")
	}
	itest.Want(t, tel.WaitNamed(t, "tools/call c", 1)[0], map[string]any{semconv.ErrorType: "transport_error"})
}

// TestStaleToolHookOverHTTP: the tap runs the stale-tool hook before it
// forwards a tools/call; a refusal fails the request without sending it.
func TestStaleToolHookOverHTTP(t *testing.T) {
	rec := &recorder{status: 200, ctype: "text/event-stream", body: "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"a\",\"inputSchema\":{\"type\":\"object\"}}]}}\n\n"}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	tel := itest.NewTelemetry(t)
	var hooked []interceptor.StaleToolCall
	c := httptap.Client(nil, tel.Options(interceptor.WithStaleToolHook(func(_ context.Context, call interceptor.StaleToolCall) error {
		hooked = append(hooked, call)
		return errors.New("re-plan first")
	}))...)
	post(t, c, hs.URL, "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`))
	req.Header.Set("Content-Type", "application/json")
	_, err := c.Do(req)
	if !errors.Is(err, interceptor.ErrRefused) {
		t.Fatalf("error %v, want ErrRefused", err)
	}
	if len(hooked) != 1 || hooked[0].Tool != "a" || hooked[0].Digest == "" {
		t.Errorf("hook calls %+v", hooked)
	}
	if len(rec.bodies) != 1 {
		t.Errorf("the refused call reached the server: %q", rec.bodies)
	}
}

// TestStaleRefusalOverHTTP: after the agent listed the changed tool, a
// call planned on the old one is answered by the tap (200, the
// STALE_TOOL_SCHEMA tool error for the request's id) and never reaches the
// server.
func TestStaleRefusalOverHTTP(t *testing.T) {
	listing := func(schema string) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":` + schema + `}]}}`
	}
	rec := &recorder{status: 200, ctype: "application/json", body: listing(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	tel := itest.NewTelemetry(t)
	c := httptap.Client(nil, tel.Options(interceptor.WithStaleRefusal(true))...)
	post(t, c, hs.URL, "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	rec.mu.Lock()
	rec.body = listing(`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q","n"]}`)
	rec.mu.Unlock()
	post(t, c, hs.URL, "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)

	resp, body := post(t, c, hs.URL, "application/json", `{"jsonrpc":"2.0","id":"c-7","method":"tools/call","params":{"name":"a","arguments":{"q":"x"}}}`)
	var answer struct {
		ID     string `json:"id"`
		Result struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &answer); err != nil || resp.StatusCode != 200 || answer.ID != "c-7" || !answer.Result.IsError ||
		answer.Result.StructuredContent["error_code"] != semconv.RefusalStaleToolSchema || answer.Result.StructuredContent["side_effect_started"] != false {
		t.Fatalf("%d %s (%v)", resp.StatusCode, body, err)
	}
	rec.mu.Lock()
	sent := len(rec.bodies)
	rec.mu.Unlock()
	if sent != 2 {
		t.Fatalf("the refused call reached the server (%d requests)", sent)
	}
	itest.Want(t, tel.WaitNamed(t, "tools/call a", 1)[0], map[string]any{semconv.ErrorType: semconv.ErrorTypeRefused, semconv.JSONRPCRequestID: "c-7", semconv.ToolStale: true})
}

// TestOversizedResponse: a response over the document limit still ends its
// request, and the listing it carried is cached as unknown.
func TestOversizedResponse(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","description":"` + strings.Repeat("x", 4000) + `","inputSchema":{"type":"object"}}]}}`
	rec := &recorder{status: 200, ctype: "application/json", body: big}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	tel := itest.NewTelemetry(t)
	c := httptap.Client(nil, tel.Options(interceptor.WithLimits(contract.Limits{MaxDocumentBytes: 1000}))...)
	if _, got := post(t, c, hs.URL, "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); got != big {
		t.Fatal("the client did not get the whole response")
	}
	itest.Want(t, tel.WaitNamed(t, "tools/list", 1)[0], map[string]any{semconv.ErrorType: nil, semconv.ToolsCount: nil, semconv.ToolsSetDigest: nil})
	rec.body = `{"jsonrpc":"2.0","id":2,"result":{}}`
	post(t, c, hs.URL, "application/json", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`)
	itest.Want(t, tel.WaitNamed(t, "tools/call a", 1)[0], map[string]any{semconv.ToolKnown: nil, semconv.ToolDigest: nil})
}

// TestLongLivedStream: a response event is observed as soon as the client
// reads it, while the stream stays open; the tap reads nothing ahead.
func TestLongLivedStream(t *testing.T) {
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata:\n\n") // a priming event
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\r\ndata: \"result\":{}}\r\n\r\n")
		w.(http.Flusher).Flush()
		<-release
	}))
	defer hs.Close()
	defer close(release)
	tel := itest.NewTelemetry(t)
	c := httptap.Client(nil, tel.Options()...)
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got []byte
	buf := make([]byte, 16)
	for !bytes.Contains(got, []byte("\r\n\r\n")) {
		n, err := resp.Body.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatal(err)
		}
	}
	itest.Want(t, tel.WaitNamed(t, "tools/call a", 1)[0], map[string]any{semconv.ErrorType: nil})
}

// closeCounter is a request body that counts its Close calls.
type closeCounter struct {
	io.Reader
	closed atomic.Int32
}

func (c *closeCounter) Close() error { c.closed.Add(1); return nil }

// TestRoundTripLeavesRequestAlone: the tap sends a clone; the caller's
// request keeps its body, length, GetBody and headers, and its body is
// closed, as the RoundTripper contract asks, whether the tap observed the
// body or it was too large to.
func TestRoundTripLeavesRequestAlone(t *testing.T) {
	var received []string // what the server read, chunked or not
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		received = append(received, string(b))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer hs.Close()
	tel := itest.NewTelemetry(t)
	tr := httptap.NewTransport(nil, tel.Options(interceptor.WithLimits(contract.Limits{MaxDocumentBytes: 1000}))...)
	defer tr.CloseIdleConnections()
	small := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`
	large := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","arguments":{"x":"` + strings.Repeat("x", 2000) + `"}}}`
	for i, c := range []struct {
		name, body string
		length     int64
	}{
		{"observed", small, int64(len(small))},
		{"observed, length unknown", small, -1},
		{"too large", large, int64(len(large))},
		{"too large, length unknown", large, -1},
	} {
		body := &closeCounter{Reader: strings.NewReader(c.body)}
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, hs.URL, body)
		req.ContentLength = c.length
		req.Header.Set("Content-Type", "application/json")
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if req.Body != io.ReadCloser(body) || req.ContentLength != c.length || req.GetBody != nil || len(req.Header) != 1 {
			t.Errorf("%s: the caller's request changed: body %T, length %d, GetBody set %v, headers %v", c.name, req.Body, req.ContentLength, req.GetBody != nil, req.Header)
		}
		if got := received[i]; got != c.body && !strings.Contains(got, `"traceparent"`) {
			t.Errorf("%s: the server got %d bytes, want the request", c.name, len(got))
		}
		deadline := time.Now().Add(10 * time.Second) // the base transport may close it after RoundTrip returns
		for body.closed.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if body.closed.Load() == 0 {
			t.Errorf("%s: the caller's body was never closed", c.name)
		}
	}
	if received[2] != large || received[3] != large {
		t.Errorf("the large body was not forwarded as it was: %d and %d bytes", len(received[2]), len(received[3]))
	}
}

// TestDurationLinksToSpan: mcp.client.operation.duration is recorded with the
// request's context, so its exemplar names the call's span, and it measures
// exactly the span.
func TestDurationLinksToSpan(t *testing.T) {
	rec := &recorder{status: 200, ctype: "application/json", body: `{"jsonrpc":"2.0","id":1,"result":{}}`}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	tel := itest.NewTelemetry(t)
	post(t, httptap.Client(nil, tel.Options()...), hs.URL, "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`)
	span := tel.WaitNamed(t, "tools/call a", 1)[0]
	points := tel.HistogramPoints(t, semconv.MetricClientOperationDuration)
	if len(points) != 1 || len(points[0].Exemplars) != 1 {
		t.Fatalf("want one data point with one exemplar, got %+v", points)
	}
	ex := points[0].Exemplars[0]
	if trace.TraceID(ex.TraceID) != span.SpanContext.TraceID() || trace.SpanID(ex.SpanID) != span.SpanContext.SpanID() {
		t.Errorf("exemplar of trace %x span %x, want the call's span %s", ex.TraceID, ex.SpanID, span.SpanContext.SpanID())
	}
	if got, want := points[0].Sum, span.EndTime.Sub(span.StartTime).Seconds(); got != want {
		t.Errorf("duration %v s, the span's %v s", got, want)
	}
}
