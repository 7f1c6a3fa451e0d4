package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/interceptor/httptap"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/sse"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// httpGate is the --lock gate of the HTTP → HTTP mode. It sits under the
// interceptor's tap, so what it answers itself is recorded like a server's
// answer. Each MCP session (Mcp-Session-Id; sessionless clients share one)
// has its own gate state, learned from the tools/list JSON responses the
// session gets: unapproved definitions are left out of them, and calls for
// them are answered with TOOL_NOT_APPROVED without reaching the server.
type httpGate struct {
	next     http.RoundTripper
	proto    *gate // the flags; each session gets a copy
	cfg      *Config
	refusals metric.Int64Counter

	ids      atomic.Uint64 // the proxy's own request ids
	mu       sync.Mutex
	sessions map[string]*httpSession
}

// httpSession is the gate state of one MCP session.
type httpSession struct {
	gate
	planned   atomic.Pointer[map[string]string] // what the session was last listed: tool name -> digest
	relistMu  sync.Mutex
	learned   time.Time   // when the server's definitions were last learned
	announced atomic.Bool // the server said its tools changed since
}

func newHTTPGate(next http.RoundTripper, g *gate, cfg *Config, tel Telemetry) *httpGate {
	refusals, _ := tel.Meter.Meter(ScopeName).Int64Counter(semconv.MetricProxyRefusals,
		metric.WithDescription("Calls the proxy answered itself instead of forwarding: stale or unapproved tool definitions."))
	return &httpGate{next: next, proto: g, cfg: cfg, refusals: refusals, sessions: map[string]*httpSession{}}
}

// session returns the gate state of the session sid, or forgets it (end).
func (h *httpGate) session(sid string, end bool) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	if end {
		delete(h.sessions, sid)
		return nil
	}
	g := h.sessions[sid]
	if g == nil {
		g = &httpSession{gate: gate{refuse: h.proto.refuse, lock: h.proto.lock, lockMode: h.proto.lockMode}}
		h.sessions[sid] = g
	}
	return g
}

func (h *httpGate) RoundTrip(req *http.Request) (*http.Response, error) {
	sid := req.Header.Get(headerSessionID)
	if req.Method == http.MethodDelete {
		h.session(sid, true)
		return h.next.RoundTrip(req)
	}
	if req.Method == http.MethodGet && sid != "" && h.proto.refuse {
		resp, err := h.next.RoundTrip(req) // the session's standing stream
		if err == nil {
			h.watch(resp, h.session(sid, false), nil)
		}
		return resp, err
	}
	if req.Method != http.MethodPost || req.Body == nil || req.Body == http.NoBody {
		return h.next.RoundTrip(req)
	}
	body, whole := readBounded(&req.Body, h.cfg.Limits.MaxDocumentBytes)
	if !whole {
		return h.next.RoundTrip(req) // too large to judge (or unreadable): forwarded as it is, ungated
	}
	m, ok := interceptor.ParseMessage(body) // a batch does not parse: forwarded ungated
	if !ok || !m.ID.Valid() || m.Method == "" {
		return h.next.RoundTrip(req)
	}
	g := h.session(sid, false)
	if g.sessionFailed() {
		return h.answer(req, m, g.failure), nil
	}
	if m.Method == mcpwire.MethodToolsCall {
		tool := toolName(m.Params)
		h.relistDue(req, g)
		var planned string
		var listed bool
		if p := g.planned.Load(); p != nil {
			planned, listed = (*p)[tool]
		}
		if ref := g.check(tool, planned, listed); ref != nil {
			return h.answer(req, m, ref), nil
		}
	}
	resp, err := h.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode == http.StatusNotFound && sid != "" {
		h.session(sid, true) // the server ended the session
	}
	var listID json.RawMessage
	if m.Method == mcpwire.MethodToolsList {
		listID = m.RawID
	}
	if h.watch(resp, g, listID) || listID == nil || resp.StatusCode != http.StatusOK {
		return resp, nil
	}
	return h.listing(resp, g), nil
}

// watch reads an event-stream response as it passes: a list_changed the
// server sends has the session's next call relist first, and the answer to
// the session's tools/list (listID) is what it plans with; with --lock, the
// event carrying that answer is filtered as a JSON listing is (the other
// events pass unchanged, each as soon as it is whole). It reports whether
// resp is an event stream.
func (h *httpGate) watch(resp *http.Response, g *httpSession, listID json.RawMessage) bool {
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return false
	}
	limit := h.cfg.Limits.MaxDocumentBytes
	event := func(ev sse.Event) (data []byte, done bool) {
		m, ok := interceptor.ParseMessage(ev.Data)
		switch {
		case !ok:
		case m.Method == mcpwire.NotifyToolsListChanged:
			g.announced.Store(true)
		case listID != nil && bytes.Equal(m.RawID, listID) && m.Result != nil:
			defs, readable, _ := interceptor.ToolDefinitions(h.cfg.Limits, m.Result)
			if !readable {
				return nil, true
			}
			g.listed(m.Result, defs)
			if out := g.filterListing(ev.Data, m, defs); !sameSlice(out, ev.Data) {
				return out, true
			}
			return nil, true
		}
		return nil, false
	}
	if listID != nil && g.lock != nil {
		resp.Body = newRewritingBody(resp.Body, limit, event)
		return true
	}
	p := &sse.Parser{Max: limit, Dispatch: func(ev sse.Event) { event(ev) }}
	resp.Body = &feedingBody{ReadCloser: resp.Body, p: p}
	return true
}

// sameSlice reports whether a and b are the same bytes in memory.
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// listing learns the session's definitions from a tools/list JSON response
// and applies the lock to it.
func (h *httpGate) listing(resp *http.Response, g *httpSession) *http.Response {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" {
		return resp
	}
	body, whole := readBounded(&resp.Body, h.cfg.Limits.MaxDocumentBytes)
	if !whole {
		return resp
	}
	m, ok := interceptor.ParseMessage(body)
	if ok && m.Result != nil {
		if defs, readable, _ := interceptor.ToolDefinitions(h.cfg.Limits, m.Result); readable {
			g.listed(m.Result, defs)
			body = g.filterListing(body, m, defs)
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return resp
}

// listed records a listing the session was served: what it plans with, and
// (a whole listing) the server's definitions as of now.
func (g *httpSession) listed(result []byte, defs []contract.Definition) {
	if next, _ := jsonwire.String(jsonwire.Lookup(result, "nextCursor")); next != "" {
		return
	}
	current := make(map[string]string, len(defs))
	for _, d := range defs {
		current[d.Key] = d.Digest
	}
	g.planned.Store(&current)
	g.relistMu.Lock()
	g.learn(current)
	g.learned = time.Now()
	g.relistMu.Unlock()
}

// feedingBody feeds the event stream it reads to an SSE parser.
type feedingBody struct {
	io.ReadCloser
	p *sse.Parser
}

func (b *feedingBody) Read(buf []byte) (int, error) {
	n, err := b.ReadCloser.Read(buf)
	b.p.Feed(buf[:n])
	return n, err
}

// relistDue lists the server's tools on the session's behalf (its
// Mcp-Session-Id and protocol headers, the proxy's own request id) with
// --on-stale refuse, when the server announced a change on one of the
// session's streams or its definitions were last learned longer ago than
// --relist-interval. A failed relist leaves what was known; the call is
// judged on it.
func (h *httpGate) relistDue(req *http.Request, g *httpSession) {
	if !g.refuse || (h.cfg.RelistInterval <= 0 && !g.announced.Load()) {
		return
	}
	g.relistMu.Lock()
	defer g.relistMu.Unlock()
	announced := g.announced.Swap(false)
	if !announced && (h.cfg.RelistInterval <= 0 || time.Since(g.learned) < h.cfg.RelistInterval) {
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), h.cfg.UpstreamTimeout)
	defer cancel()
	current, err := listTools(ctx, h.cfg.Limits, func(ctx context.Context, method string, params []byte) (json.RawMessage, error) {
		return h.call(ctx, req, method, params)
	})
	if err != nil {
		g.announced.CompareAndSwap(false, announced) // still to do
		return
	}
	g.learn(current)
	g.learned = time.Now()
}

// call sends one request of the proxy's own upstream with req's headers and
// returns its result; the answer may come as JSON or as an event stream.
func (h *httpGate) call(ctx context.Context, req *http.Request, method string, params []byte) (json.RawMessage, error) {
	id := []byte(`"mcpdrift-proxy-` + strconv.FormatUint(h.ids.Add(1), 10) + `"`)
	body := append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"method":"`+method+`","params":`...)
	body = append(append(body, params...), '}')
	out, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	out.Header = req.Header.Clone()
	out.Header.Del("Content-Length")
	out.Header.Set("Content-Type", "application/json")
	out.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := h.next.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP status %d", method, resp.StatusCode)
	}
	var answer *interceptor.Message
	take := func(frame []byte) {
		if m, ok := interceptor.ParseMessage(frame); ok && answer == nil && bytes.Equal(m.RawID, id) {
			answer = &m
		}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		p := &sse.Parser{Max: h.cfg.Limits.MaxDocumentBytes, Dispatch: func(ev sse.Event) { take(bytes.Clone(ev.Data)) }}
		buf := make([]byte, 4<<10)
		for answer == nil {
			n, err := resp.Body.Read(buf)
			p.Feed(buf[:n])
			if err != nil {
				break
			}
		}
	} else if b, whole := readBounded(&resp.Body, h.cfg.Limits.MaxDocumentBytes); whole {
		take(b)
	}
	switch {
	case answer == nil:
		return nil, fmt.Errorf("%s: no answer", method)
	case answer.Result == nil:
		return nil, fmt.Errorf("%s: the server answered with an error", method)
	}
	return answer.Result, nil
}

// answer is the proxy's own response to a refused request: HTTP 200, the
// tool execution error (or, for a failed session, the JSON-RPC error) the
// stdio modes answer with, counted like theirs.
func (h *httpGate) answer(req *http.Request, m interceptor.Message, ref *refusal) *http.Response {
	h.refusals.Add(req.Context(), 1, metric.WithAttributes(
		attribute.String(semconv.GuardRefusal, ref.code),
		attribute.String(semconv.ServerName, h.cfg.ServerName)))
	body := ref.result(m.RawID)
	if ref.rpcError || m.Method != mcpwire.MethodToolsCall {
		body = errorFrame(m.RawID, codeUpstream, ref.text())
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}, "Content-Length": {strconv.Itoa(len(body))}},
		Body:          &refusalBody{Reader: bytes.NewReader(body), id: m.ID, ref: ref},
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// refusalBody is the body of the gate's own answer. The tap above ends the
// refused request with the refusal (httptap.Answer) instead of reading the
// body as the server's answer, so its span is the stdio modes' refusal span:
// error.type refused and the mcpdrift.guard.* attributes.
type refusalBody struct {
	*bytes.Reader
	id  interceptor.ID
	ref *refusal
}

var _ httptap.Answer = (*refusalBody)(nil)

func (b *refusalBody) Close() error { return nil }

func (b *refusalBody) AnswerError(id interceptor.ID) error {
	if id == b.id {
		return b.ref
	}
	return nil
}

// CloseIdleConnections forwards to the transport under the gate.
func (h *httpGate) CloseIdleConnections() {
	if ci, ok := h.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// readBounded reads *body whole if it holds at most limit bytes (whole);
// either way *body is replaced by a body that gives the same bytes again.
func readBounded(body *io.ReadCloser, limit int) (b []byte, whole bool) {
	rc := *body
	b, err := io.ReadAll(io.LimitReader(rc, int64(limit)+1))
	if err != nil || len(b) > limit {
		*body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), rc), rc}
		return b, false
	}
	rc.Close()
	*body = io.NopCloser(bytes.NewReader(b))
	return b, true
}
