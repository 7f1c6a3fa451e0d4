package httpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/interceptor/httptap"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/idlemap"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/sse"
	"github.com/mcpdrift/mcpdrift/proxy/gate"
	"github.com/mcpdrift/mcpdrift/proxy/internal/config"
	"github.com/mcpdrift/mcpdrift/proxy/internal/jsonrpc"
	"github.com/mcpdrift/mcpdrift/proxy/internal/streamhttp"
	"github.com/mcpdrift/mcpdrift/proxy/internal/telemetry"
	"github.com/mcpdrift/mcpdrift/proxy/lockfilter"
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
	proto    *gate.Gate // the flags; each session gets a Fork
	cfg      *config.Config
	refusals metric.Int64Counter

	unannounced metric.Int64Counter

	ids      atomic.Uint64 // the proxy's own request ids
	mu       sync.Mutex
	sessions idlemap.Map[*httpSession] // by Mcp-Session-Id

	ctx    context.Context // ends the background relists (Close)
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// httpSession is the gate state of one MCP session.
type httpSession struct {
	*gate.Gate
	relistMu  sync.Mutex  // one relist at a time; guards learned
	learned   time.Time   // when the server's definitions were last learned
	announced atomic.Bool // the server said its tools changed, and no relist could start yet

	pendMu     sync.Mutex    // guards what follows
	last       lastRequest   // what the session's relists are sent as
	relistWait chan struct{} // closed when the pending background relist is done; nil: none
	relistGen  uint64        // announcements so far
	relisting  bool          // a background relist runs

	stream atomic.Pointer[injectingStream] // the session's standing GET stream, if open through the proxy
}

func newHTTPGate(next http.RoundTripper, g *gate.Gate, cfg *config.Config, tel telemetry.Telemetry) *httpGate {
	refusals := telemetry.Refusals(tel)
	unannounced, _ := tel.Meter.Meter(telemetry.ScopeName).Int64Counter(semconv.MetricProxyUnannouncedChanges,
		metric.WithDescription("Tool changes the proxy's relists found that the server had not announced, by whether the agent could be told."))
	h := &httpGate{next: next, proto: g, cfg: cfg, refusals: refusals, unannounced: unannounced,
		sessions: idlemap.Map[*httpSession]{Idle: defaultSessionIdle, Max: defaultMaxSessions, Busy: (*httpSession).busy}}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	return h
}

// Close ends the background relists and waits for them.
func (h *httpGate) Close() {
	h.cancel()
	h.wg.Wait()
}

// session returns the gate state of the session sid, or forgets it (end).
func (h *httpGate) session(sid string, end bool) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	if end {
		h.sessions.Delete(sid)
		return nil
	}
	g, ok := h.sessions.Get(sid)
	if !ok {
		g = &httpSession{Gate: h.proto.Fork()}
		h.sessions.Put(sid, g)
	}
	return g
}

// Bounds on the gate's per-session state: clients that vanish without a
// DELETE (a killed agent, a server restart whose 404 no client asked for)
// must not grow the proxy's memory for ever. A session with an open
// standing stream or a relist running is in use (busy).
const (
	defaultSessionIdle = time.Hour // a session untouched this long is forgotten
	defaultMaxSessions = 10000     // at most this many are kept (the least recently used goes)
)

// busy reports whether the session is in use though no request named it
// lately: its standing stream is open, or a relist runs for it.
func (g *httpSession) busy() bool {
	g.pendMu.Lock()
	defer g.pendMu.Unlock()
	return g.relisting || g.stream.Load() != nil
}

func (h *httpGate) RoundTrip(req *http.Request) (*http.Response, error) {
	sid := mcpwire.SessionKey(req.Header.Get(streamhttp.HeaderSessionID))
	if c, ok := httptap.ClientFromContext(req.Context()); ok && sid == "" {
		sid = "\x00" + c // a sessionless client (Handler.client; no session id starts with NUL)
	}
	if req.Method == http.MethodDelete {
		resp, err := h.next.RoundTrip(req)
		if err == nil && resp.StatusCode/100 == 2 {
			h.session(sid, true) // the server ended the session (one that refused still has it)
		}
		return resp, err
	}
	if req.Method == http.MethodGet && sid != "" {
		resp, err := h.next.RoundTrip(req) // the session's standing stream (or a resumed one)
		if err != nil || resp.StatusCode/100 != 2 {
			return resp, err
		}
		g := h.session(sid, false)
		g.remember(req, nil)
		resp = h.pass(req, resp, g, asked{})
		if streamhttp.IsEventStream(resp) && g.Refuses() && h.cfg.RelistInterval > 0 && resp.StatusCode == http.StatusOK {
			h.standing(resp, g)
		}
		return resp, nil
	}
	if req.Method != http.MethodPost || req.Body == nil || req.Body == http.NoBody {
		return h.next.RoundTrip(req)
	}
	body, whole := readBounded(&req.Body, h.cfg.Limits.MaxDocumentBytes)
	g := h.session(sid, false)
	if !whole && g.Locked() {
		req.Body.Close()
		return textAnswer(req, http.StatusRequestEntityTooLarge, "mcpdrift proxy: a request body over "+
			strconv.Itoa(h.cfg.Limits.MaxDocumentBytes)+" bytes cannot be judged against --lock: it was not sent"), nil
	}
	if !whole {
		return h.forward(req, g, asked{}) // too large to judge (or unreadable): forwarded as it is, ungated
	}
	m := jsonrpc.Parse(body) // the gate's one reading of the body
	if m.Batch {
		return h.batch(req, g, body)
	}
	if ref := g.Unclear(m.Unclear); ref != nil {
		return h.answer(req, map[interceptor.ID]*gate.Refusal{m.ID: ref}, [][]byte{h.refusalFrame(req, &m, ref)}, false), nil
	}
	if !m.Request() {
		return h.forward(req, g, asked{})
	}
	g.remember(req, &m)
	if ref := h.judge(req, g, &m); ref != nil {
		return h.answer(req, map[interceptor.ID]*gate.Refusal{m.ID: ref}, [][]byte{h.refusalFrame(req, &m, ref)}, false), nil
	}
	resp, err := h.forward(req, g, asked{id: m.RawID, list: m.Method == mcpwire.MethodToolsList})
	if err == nil && resp.StatusCode == http.StatusNotFound && sid != "" {
		h.session(sid, true) // the server ended the session
	}
	return resp, err
}

// asked is what the gate knows of the request an answer answers.
type asked struct {
	id   json.RawMessage // a lone request's id (nil: a batch, a GET, a notification)
	list bool            // the request is a tools/list: its answer is what the session plans with
}

// forward sends req upstream and passes the answer through the gate.
func (h *httpGate) forward(req *http.Request, g *httpSession, a asked) (*http.Response, error) {
	resp, err := h.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	return h.pass(req, resp, g, a), nil
}

// pass is the gate on an answer's way to the agent: what the session plans
// with is learned from the answer to its tools/list, list_changed on an
// event stream has it relist, and with --lock every listing in a
// successful answer is filtered (lockfilter.Filter), whatever its content type or
// id. Under a lock an answer the proxy cannot read (in an encoding it
// cannot undo, or over the document limit) is not relayed.
func (h *httpGate) pass(req *http.Request, resp *http.Response, g *httpSession, a asked) *http.Response {
	locked := g.Locked() && resp.StatusCode/100 == 2
	if enc := strings.Join(resp.Header["Content-Encoding"], ", "); locked && enc != "" && !strings.EqualFold(enc, "identity") {
		resp.Body.Close()
		return h.unreadable(req, a.id, "in a content encoding it cannot undo ("+enc+")")
	}
	if h.watch(resp, g, a) {
		return resp
	}
	if !locked && (!a.list || resp.StatusCode != http.StatusOK) {
		return resp
	}
	return h.listing(req, resp, g, a)
}

// watch reads an event-stream response as it passes: a list_changed the
// server sends has the session's next call relist first, and the answer to
// the session's tools/list is what it plans with. With --lock every event
// goes through lockfilter.Filter (each passes as soon as it is whole), and an event
// over the document limit is replaced by an error for the id it starts
// with (else for the request's), or dropped when neither is known. It
// reports whether resp is an event stream.
func (h *httpGate) watch(resp *http.Response, g *httpSession, a asked) bool {
	if !streamhttp.IsEventStream(resp) {
		return false
	}
	limits := h.cfg.Limits
	answered := false // the agent takes the first answer to its tools/list
	event := func(ev sse.Event) []byte {
		m := jsonrpc.Parse(ev.Data)
		switch {
		case !m.OK:
		case m.Method == mcpwire.NotifyToolsListChanged:
			h.announce(g)
		case a.list && !answered && bytes.Equal(m.RawID, a.id) && m.Result != nil:
			answered = true
			if defs, readable, _ := interceptor.ToolDefinitions(limits, m.Result); readable {
				g.listed(m.Result, defs)
			}
		}
		if out := lockfilter.Filter(g.Gate, limits, ev.Data, a.id); !sameSlice(out, ev.Data) {
			return out
		}
		return nil
	}
	if g.Locked() && resp.StatusCode/100 == 2 {
		b := newRewritingBody(resp.Body, limits.MaxDocumentBytes, event)
		b.over = func(head []byte) []byte {
			id := eventID(head)
			if id == nil {
				id = a.id
			}
			if id == nil {
				return nil
			}
			return jsonrpc.Error(id, jsonrpc.CodeUpstream, lockfilter.UnreadableText(lockfilter.OverLimit(limits)))
		}
		resp.Body = b
		unsized(resp)
		return true
	}
	p := &sse.Parser{Max: limits.MaxDocumentBytes, Dispatch: func(ev sse.Event) { event(ev) }}
	resp.Body = &feedingBody{ReadCloser: resp.Body, p: p}
	return true
}

// standing makes resp the session's standing stream, the one the proxy
// tells the agent of changes on (--relist-interval finds changes the
// server does not announce).
func (h *httpGate) standing(resp *http.Response, g *httpSession) {
	var s *injectingStream
	s = newInjectingStream(resp.Body, func() { g.stream.CompareAndSwap(s, nil) })
	g.stream.Store(s)
	resp.Body = s
	unsized(resp)
}

// eventID is the id of the JSON-RPC message an event's first bytes (raw,
// as the stream carried them) start, or nil.
func eventID(head []byte) json.RawMessage {
	for len(head) > 0 {
		i := bytes.IndexAny(head, "\r\n")
		if i < 0 {
			i = len(head)
		}
		if v, ok := bytes.CutPrefix(head[:i], []byte("data:")); ok {
			if id := jsonwire.LookupTop(bytes.TrimPrefix(v, []byte(" ")), "id"); jsonrpc.IsID(id) {
				return id
			}
			return nil
		}
		head = head[min(i+1, len(head)):]
	}
	return nil
}

// sameSlice reports whether a and b are the same bytes in memory.
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// listing reads a JSON answer (with --lock, a successful answer of any
// content type but an event stream): a tools/list's answer is what the
// session plans with, and the lock is applied to it. One over the document
// limit passes unread without a lock; under one the agent gets an error
// instead.
func (h *httpGate) listing(req *http.Request, resp *http.Response, g *httpSession, a asked) *http.Response {
	locked := g.Locked() && resp.StatusCode/100 == 2
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if !locked && mt != "application/json" || resp.Body == nil || resp.Body == http.NoBody {
		return resp
	}
	body, whole := readBounded(&resp.Body, h.cfg.Limits.MaxDocumentBytes)
	if !whole {
		if !locked {
			return resp
		}
		resp.Body.Close()
		return h.unreadable(req, a.id, lockfilter.OverLimit(h.cfg.Limits))
	}
	if a.list && mt == "application/json" && resp.StatusCode == http.StatusOK {
		if m := jsonrpc.Parse(body); m.OK && m.Result != nil {
			if defs, readable, _ := interceptor.ToolDefinitions(h.cfg.Limits, m.Result); readable {
				g.listed(m.Result, defs)
			}
		}
	}
	if locked {
		body = lockfilter.Filter(g.Gate, h.cfg.Limits, body, a.id)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return resp
}

// unreadable is the proxy's answer, under a lock, in place of an answer
// it cannot read (why says how): a JSON-RPC error for the request (id),
// else (a batch, a GET) a 502.
func (h *httpGate) unreadable(req *http.Request, id json.RawMessage, why string) *http.Response {
	text := lockfilter.UnreadableText(why)
	if id != nil {
		return jsonAnswer(req, http.StatusOK, jsonrpc.Error(id, jsonrpc.CodeUpstream, text), nil)
	}
	return textAnswer(req, http.StatusBadGateway, text)
}

// textAnswer is a plain-text response of the proxy's own.
func textAnswer(req *http.Request, status int, text string) *http.Response {
	text += "\n"
	return &http.Response{
		StatusCode: status, Status: strconv.Itoa(status) + " " + http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Content-Length": {strconv.Itoa(len(text))}},
		Body:          io.NopCloser(strings.NewReader(text)),
		ContentLength: int64(len(text)),
		Request:       req,
	}
}

// unsized marks resp's body as one whose length is not known in advance
// (the proxy changes it as it passes).
func unsized(resp *http.Response) {
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
}

// listed records a listing the session was served: what it plans with, and
// (a whole listing) the server's definitions as of now.
func (g *httpSession) listed(result []byte, defs []contract.Definition) {
	if next, _ := jsonwire.String(jsonwire.Lookup(result, "nextCursor")); next != "" {
		return
	}
	// Schemas kept once for every session (the gate shares them): the
	// proxy keeps this for up to defaultMaxSessions sessions.
	current := gate.Read(nil, defs, true)
	g.Serve(current)
	g.relistMu.Lock()
	g.Learn(current)
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

// judge is the gate's verdict on one request of the session: a refusal,
// or nil to forward it.
func (h *httpGate) judge(req *http.Request, g *httpSession, m *jsonrpc.Message) *gate.Refusal {
	if ref := g.Failure(); ref != nil {
		return ref
	}
	if m.Method != mcpwire.MethodToolsCall {
		return nil
	}
	h.relistDue(req, g)
	call := gate.Call{Tool: m.Name(), Arguments: m.Arguments}
	if served := g.Served(); served != nil {
		var d gate.Definition
		d, call.Listed = served[call.Tool]
		call.Planned = d.Digest
	}
	return g.Check(call)
}

// refusalFrame is what the agent reads for a refused request — the tool
// execution error (or, for a failed session, the JSON-RPC error) the stdio
// modes answer with — and counts it like theirs.
func (h *httpGate) refusalFrame(req *http.Request, m *jsonrpc.Message, ref *gate.Refusal) []byte {
	h.refusals.Add(req.Context(), 1, metric.WithAttributes(
		attribute.String(semconv.GuardRefusal, ref.Code()),
		attribute.String(semconv.ServerName, h.cfg.ServerName)))
	return ref.Answer(m.RawID, m.Method)
}

// answer is the proxy's own response to refused requests: HTTP 200 with
// their frames (one, or as an array when it answers a batch).
func (h *httpGate) answer(req *http.Request, refused map[interceptor.ID]*gate.Refusal, frames [][]byte, batch bool) *http.Response {
	body := frames[0]
	if batch {
		body = jsonrpc.Array(frames)
	}
	return jsonAnswer(req, http.StatusOK, body, refused)
}

// jsonAnswer is a JSON response of the proxy's own, holding its answers to
// the refused requests (none: refused is nil).
func jsonAnswer(req *http.Request, status int, body []byte, refused map[interceptor.ID]*gate.Refusal) *http.Response {
	return &http.Response{
		StatusCode: status, Status: strconv.Itoa(status) + " " + http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}, "Content-Length": {strconv.Itoa(len(body))}},
		Body:          &answeredBody{Reader: bytes.NewReader(body), Closer: io.NopCloser(nil), refused: refused},
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// answeredBody is a body that holds the gate's own answers (alone, or
// merged into the server's answer to the rest of a batch). The tap above
// ends each refused request with its refusal (httptap.Answer) instead of
// reading the body as the server's answer, so its span is the stdio modes'
// refusal span: error.type refused and the mcpdrift.guard.* attributes.
type answeredBody struct {
	io.Reader
	io.Closer
	refused map[interceptor.ID]*gate.Refusal
}

var _ httptap.Answer = (*answeredBody)(nil)

func (b *answeredBody) AnswerError(id interceptor.ID) error {
	if ref := b.refused[id]; ref != nil {
		return ref
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
