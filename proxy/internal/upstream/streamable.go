package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/sse"
	"github.com/mcpdrift/mcpdrift/proxy/internal/config"
	"github.com/mcpdrift/mcpdrift/proxy/internal/h1client"
	"github.com/mcpdrift/mcpdrift/proxy/internal/jsonrpc"
	"github.com/mcpdrift/mcpdrift/proxy/internal/relay"
	"github.com/mcpdrift/mcpdrift/proxy/internal/streamhttp"
)

// streamable is the upstream of stdio → HTTP: the server at a Streamable
// HTTP endpoint. Every frame the agent sends is a POST; what comes back (a
// JSON body, or an SSE stream whose events are relayed one by one as they
// arrive) goes to Relay.FromServer. It keeps the Mcp-Session-Id of an
// initialize-era session and the negotiated protocol version, opens the GET
// stream for server → client messages, re-initializes when the session dies
// (restart.go), and ends the session with DELETE.
//
// POSTs are started in the order the agent wrote the frames: the next
// starts once the previous request is on the wire (or failed), so the server
// sees them in order while their responses stream concurrently. The proxy's
// own requests are not queued behind the agent's.
type streamable struct {
	cfg    *config.Config
	r      *relay.Relay
	url    string
	client *http.Client
	conns  *h1client.Transport // under client (and under OAuth's transport)
	ctx    context.Context     // the proxy's lifetime: ends streams and requests
	cancel context.CancelFunc

	queue      chan *exchange
	dispatched chan struct{}  // closed when the queue is done
	big        *io.PipeWriter // the body of an oversized agent frame on its way
	inflight   sync.WaitGroup // exchanges
	bg         sync.WaitGroup // the GET stream, subscription streams

	mu        sync.Mutex
	sid       string // Mcp-Session-Id; "" before initialize and on stateless servers
	version   string // the negotiated protocol version (MCP-Protocol-Version)
	stateless bool   // the agent speaks 2026-07-28: no session, every request self-contained
	meta      []byte // the protocol members of the agent's last _meta (stateless own requests carry them)
	lost      bool   // the session died and re-initializing has not succeeded yet
	listening string // the session whose GET stream runs
	closing   bool

	// HTTP+SSE (legacysse.go).
	legacy       atomic.Bool                  // the server speaks the 2024-11-05 HTTP+SSE transport
	endpoint     string                       // where messages are posted: the live stream's endpoint event; "" while it is down
	gen          uint64                       // the stream generation: up on every connection and every loss
	awaiting     map[interceptor.ID]*exchange // requests whose answer is to come on the stream
	streamCancel context.CancelFunc           // ends the current stream
	reconnecting bool                         // a loop is reopening the stream (streamEnded)

	restartMu   sync.Mutex    // one re-initialization at a time; guards the two below
	restarted   time.Time     // when the last re-initialization succeeded
	restartWait time.Duration // the pause before the next one, if it follows soon (restart.go)
}

// exchange is one frame on its way upstream.
type exchange struct {
	frame []byte
	body  io.Reader        // instead of frame: an oversized frame, streamed unparsed
	msg   *jsonrpc.Message // the relay's reading, moved into a copy of its own; nil: not one message (a batch, garbage, oversized)
	own   bool             // the proxy's own request

	answered atomic.Bool // a response or an error reached whoever asked: nothing more goes
	legacy   bool        // posted on HTTP+SSE, on stream generation gen, to endpoint
	gen      uint64
	endpoint string
	accepted bool // HTTP+SSE: the server took it (2xx); guarded by streamable.mu
}

func (x *exchange) request() bool {
	return x.msg != nil && x.msg.ID.Valid() && x.msg.Method != ""
}

func (x *exchange) method() string {
	if x.msg == nil {
		return ""
	}
	return x.msg.Method
}

func newStreamable(ctx context.Context, cfg *config.Config, r *relay.Relay) *streamable {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: cfg.UpstreamTimeout, KeepAlive: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = cfg.UpstreamTimeout
	tr.TLSHandshakeTimeout = cfg.UpstreamTimeout
	conns := h1client.New(tr)
	var rt http.RoundTripper = conns
	if cfg.OAuth != nil {
		rt = newOAuthTransport(conns, cfg.OAuth, cfg.Upstream, cfg.UpstreamTimeout)
	}
	ctx, cancel := context.WithCancel(ctx)
	u := &streamable{
		cfg: cfg, r: r, url: cfg.Upstream, ctx: ctx, cancel: cancel, conns: conns,
		client: &http.Client{Transport: rt, CheckRedirect: sameOrigin},
		queue:  make(chan *exchange, 64), dispatched: make(chan struct{}),
		awaiting: map[interceptor.ID]*exchange{},
	}
	go u.dispatch()
	return u
}

// sameOrigin follows redirects only within the upstream's origin: elsewhere
// they would carry the configured headers (secrets) to a host nobody named.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 || req.URL.Scheme != via[0].URL.Scheme || req.URL.Host != via[0].URL.Host {
		return http.ErrUseLastResponse
	}
	return nil
}

func (u *streamable) Describe() string { return serverid.Display(u.url) }

// Send queues one whole frame; the proxy's own requests go at once. An
// error the upstream gives later reaches the agent as the answer to its
// request (Relay.UpstreamFailed).
func (u *streamable) Send(_ context.Context, frame []byte, m jsonrpc.Message) error {
	// The exchange outlives the call and the relay reads frames in place,
	// so it keeps its own copy, and the relay's reading moved into a copy
	// of the frame it read (the same copy unless trace context was added).
	x := &exchange{frame: bytes.Clone(frame)}
	if m.OK {
		read := x.frame
		if !jsonrpc.SameBytes(frame, m.Frame) {
			read = bytes.Clone(m.Frame)
		}
		msg := m.In(read)
		x.msg = &msg
		x.own = jsonrpc.IsOwnID(msg.RawID)
	}
	if x.own {
		u.start(x, nil)
		return nil
	}
	u.learn(x)
	select {
	case u.queue <- x:
		return nil
	case <-u.ctx.Done():
		return errors.New("the proxy is shutting down")
	}
}

// sendPiece streams a frame too large to parse as the body of one POST.
func (u *streamable) SendPiece(b []byte, last bool) error {
	if u.big == nil {
		pr, pw := io.Pipe()
		u.big = pw
		select {
		case u.queue <- &exchange{body: pr}:
		case <-u.ctx.Done():
			return u.ctx.Err()
		}
	}
	_, err := u.big.Write(b)
	if last || err != nil {
		u.big.Close()
		u.big = nil
	}
	return err
}

// learn notes what an agent's frame says about the session: a 2026-07-28
// request carries its protocol version (and client) in _meta.
func (u *streamable) learn(x *exchange) {
	if x.msg == nil {
		return
	}
	if x.request() && x.method() == mcpwire.MethodInitialize {
		// The agent falls back to the initialize handshake (a server whose
		// server/discover answer leaves 2026-07-28 out): what its discover
		// said no longer holds, and an initialize carries no protocol
		// version header (a stateful server refuses one saying 2026-07-28).
		u.mu.Lock()
		u.stateless, u.version, u.meta = false, "", nil
		u.mu.Unlock()
		return
	}
	meta := x.msg.Meta
	v, _ := jsonwire.String(jsonwire.Lookup(meta, mcpwire.MetaProtocolVersion))
	if v < mcpwire.ProtocolStateless {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.stateless, u.version = true, v
	if x.request() {
		u.meta = streamhttp.ProtocolMeta(meta)
	}
}

// dispatch starts the agent's frames in order, each once the previous one
// is on the wire.
func (u *streamable) dispatch() {
	defer close(u.dispatched)
	for {
		var x *exchange
		select {
		case x = <-u.queue:
		case <-u.ctx.Done():
			return
		}
		if x == nil {
			return // closed: the agent's input ended
		}
		written := make(chan struct{})
		u.start(x, written)
		<-written
	}
}

func (u *streamable) start(x *exchange, written chan struct{}) {
	once := sync.OnceFunc(func() {
		if written != nil {
			close(written)
		}
	})
	u.mu.Lock()
	if u.closing {
		u.mu.Unlock()
		once()
		u.fail(x, errors.New("the proxy is shutting down"))
		return
	}
	// A subscription stream (2026-07-28) never ends by itself: the agent
	// closing its input ends it, with no grace.
	wg := &u.inflight
	if x.method() == mcpwire.MethodSubscriptionsListen {
		wg = &u.bg
	}
	wg.Add(1)
	u.mu.Unlock()
	go func() {
		defer wg.Done()
		defer once()
		u.exchange(x, once, false)
	}()
}

// exchange posts one frame and relays what answers it. retried is set on
// the second attempt of a request whose session died under it.
func (u *streamable) exchange(x *exchange, wrote func(), retried bool) {
	if err := u.ensureSSE(); err != nil {
		wrote()
		u.fail(x, err)
		return
	}
	u.await(x)
	if !x.own && x.method() != mcpwire.MethodInitialize && u.isLost() {
		// The session died and is not back yet: re-initialize first, and
		// judge the call again on what the server now serves.
		if err := u.restart(""); err != nil {
			u.fail(x, err)
			return
		}
		if u.r.Regate(x.msg) {
			return
		}
	}
	if x.method() == mcpwire.MethodInitialize {
		// What follows initialize needs the session it opens: hold it
		// until initialize is answered.
		defer wrote()
		wrote = func() {}
	}
	sid := u.session()
	postWrote := wrote
	if m := x.msg; m != nil && m.Method != "" && !m.ID.Valid() {
		// A notification is answered at once (202). As a direct client
		// does, the next POST waits for that answer, so the server has
		// seen notifications/initialized before the requests after it.
		postWrote = func() {}
	}
	resp, err := u.post(x, sid, postWrote)
	wrote()
	if err != nil {
		u.fail(x, err)
		return
	}
	defer resp.Body.Close()
	if u.legacyFallback(x, resp) {
		// A server of the 2024-11-05 generation: open its event stream
		// and send the initialize again, there.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body = io.NopCloser(bytes.NewReader(b))
		if err := u.connectSSE(); err != nil {
			if jsonwire.Lookup(b, "error") != nil {
				u.refused(x, resp) // a Streamable HTTP server's own refusal: the agent reads it
				return
			}
			u.fail(x, fmt.Errorf("refused Streamable HTTP (HTTP %d to initialize), and HTTP+SSE failed: %w", resp.StatusCode, err))
			return
		}
		u.exchange(x, func() {}, retried)
		return
	}
	if lost, gone := u.sessionGone(x, sid, resp); !x.own && gone {
		if retried {
			u.fail(x, fmt.Errorf("the re-initialized session was lost too (HTTP %d)", resp.StatusCode))
			return
		}
		if err := u.restart(lost); err != nil {
			u.fail(x, err)
			return
		}
		if x.request() && !u.r.Regate(x.msg) {
			u.exchange(x, func() {}, true) // once: it never reached a live session
		}
		return // a notification or response for the dead session means nothing to the new one
	}
	u.answer(x, resp)
}

// post sends x with the session's headers; wrote is called once the
// request is on the wire.
func (u *streamable) post(x *exchange, sid string, wrote func()) (*http.Response, error) {
	body := x.body
	if body == nil {
		body = bytes.NewReader(u.withMeta(x))
	}
	ctx := httptrace.WithClientTrace(u.ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote() }})
	target := u.url
	u.mu.Lock()
	if x.legacy = u.legacy.Load(); x.legacy {
		target, x.gen, x.endpoint = u.endpoint, u.gen, u.endpoint
		sid = "" // the session is the endpoint's
	}
	u.mu.Unlock()
	if target == "" {
		return nil, errors.New("the SSE stream is down")
	}
	req, err := u.newRequest(ctx, http.MethodPost, target, sid, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if v := u.versionFor(x); v != "" {
		req.Header.Set(streamhttp.HeaderProtocolVersion, v)
		if v >= mcpwire.ProtocolStateless && x.method() != "" {
			req.Header.Set(streamhttp.HeaderMethod, x.method())
			if name := nameOf(x.msg); name != "" {
				req.Header.Set(streamhttp.HeaderName, name)
				if x.method() == mcpwire.MethodToolsCall {
					streamhttp.SetParamHeaders(req.Header, u.r.ParamHeaders(name), x.msg.Arguments)
				}
			}
		}
	}
	return u.do(req)
}

// newRequest builds a request to target (the upstream URL, or on HTTP+SSE
// the message endpoint) with the configured headers and the session id.
func (u *streamable) newRequest(ctx context.Context, method, target, sid string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, errors.New("invalid upstream URL")
	}
	for k, vs := range u.cfg.Header {
		req.Header[k] = vs
	}
	// As http.Transport asks by itself; h1client undoes a gzip answer on
	// every path (http.Transport would not, the header being ours).
	req.Header.Set("Accept-Encoding", "gzip")
	if sid != "" {
		req.Header.Set(streamhttp.HeaderSessionID, sid)
	}
	return req, nil
}

// do sends a request; its error names no URL (the agent reads it, and a
// query may hold a secret): describe() names the upstream.
func (u *streamable) do(req *http.Request) (*http.Response, error) {
	resp, err := u.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		var ae *authError
		if errors.As(err, &ae) {
			return nil, ae
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("no response within %s", u.cfg.UpstreamTimeout)
		}
		return nil, fmt.Errorf("unreachable: %w", err)
	}
	return resp, nil
}

// versionFor is the MCP-Protocol-Version of x: what its _meta says
// (2026-07-28), else the negotiated version.
func (u *streamable) versionFor(x *exchange) string {
	if x.msg != nil {
		if v, _ := jsonwire.String(jsonwire.Lookup(x.msg.Meta, mcpwire.MetaProtocolVersion)); v != "" {
			return v
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.version
}

// withMeta is x's frame; on a stateless server the proxy's own requests
// carry the agent's protocol _meta, as every 2026-07-28 request must.
func (u *streamable) withMeta(x *exchange) []byte {
	u.mu.Lock()
	meta, stateless := u.meta, u.stateless
	u.mu.Unlock()
	if !x.own || !stateless || meta == nil || x.msg.Meta != nil || x.msg.Params == nil {
		return x.frame
	}
	return x.msg.WithParams(streamhttp.WithMeta(x.msg.Params, meta))
}

// nameOf is what a 2026-07-28 request names in Mcp-Name.
func nameOf(m *jsonrpc.Message) string {
	switch m.Method {
	case mcpwire.MethodToolsCall, mcpwire.MethodPromptsGet:
		return m.Name()
	case "resources/read":
		return m.URI()
	}
	return ""
}

// sessionLost reports whether a response says the session the request
// named is gone: HTTP 404, as the spec says, or the 400 "No valid session
// ID" of the TypeScript SDK's servers (server-everything among them).
func sessionLost(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusNotFound:
		return true
	case http.StatusBadRequest:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		resp.Body = io.NopCloser(bytes.NewReader(b))
		msg, _ := jsonwire.String(jsonwire.Lookup(jsonwire.Lookup(b, "error"), "message"))
		return jsonwire.IsNull(jsonwire.Lookup(b, "id")) && strings.Contains(strings.ToLower(msg), "session")
	}
	return false
}

// sessionGone reports whether the answer to x says the session it was
// posted on is gone (it never reached a live one), and that session's key.
// On HTTP+SSE: 404 from the message endpoint, or a refusal from a session
// whose stream has since ended.
func (u *streamable) sessionGone(x *exchange, sid string, resp *http.Response) (string, bool) {
	if !x.legacy {
		return sid, sid != "" && sessionLost(resp)
	}
	if resp.StatusCode == http.StatusNotFound {
		return x.endpoint, true
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return x.endpoint, u.gen != x.gen && (resp.StatusCode < 200 || resp.StatusCode > 299)
}

func (u *streamable) session() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.sid
}

func (u *streamable) isLost() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.lost
}

// answer relays the response to a POST: a JSON body, or an SSE stream
// event by event. A request it does not answer gets an error naming the
// upstream, so the agent never waits for nothing.
func (u *streamable) answer(x *exchange, resp *http.Response) {
	answered, garbled := false, false
	deliver := func(frame []byte) {
		answers, ok := u.deliver(x, resp, frame)
		answered = answered || answers
		garbled = garbled || !ok
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		u.refused(x, resp)
		return
	case mt == "text/event-stream":
		p := u.readStream(resp.Body, deliver)
		if !answered && x.request() && p.Dropped == 0 {
			p = u.resume(p, deliver, func() bool { return answered })
		}
		if !answered && p.Dropped > 0 {
			u.fail(x, fmt.Errorf("an event over the %d-byte limit was dropped", u.cfg.Limits.MaxDocumentBytes))
			return
		}
	case mt == "application/json":
		body, err := u.readJSON(resp.Body)
		if err != nil {
			u.fail(x, err)
			return
		}
		deliver(body)
	case resp.StatusCode == http.StatusAccepted || resp.ContentLength == 0 || !x.request():
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	default:
		u.fail(x, fmt.Errorf("answered with content type %q, not JSON or an event stream", truncate(mt, 60)))
		return
	}
	switch {
	case !x.request() || answered:
	case x.legacy && !garbled:
		// The answer comes on the stream, unless the stream is gone.
		if !u.accepted(x) {
			u.fail(x, errStreamEnded)
		}
	case garbled:
		u.fail(x, errors.New("answered with text that is not JSON-RPC"))
	default:
		u.fail(x, fmt.Errorf("answered HTTP %d without a response to request %s", resp.StatusCode, truncate(string(x.msg.RawID), 40)))
	}
	if x.method() == mcpwire.NotifyInitialized {
		u.listen()
	}
}

// readJSON reads a JSON body within the document limit, and within
// UpstreamTimeout (its headers came: the body follows at once or never).
func (u *streamable) readJSON(body io.Reader) ([]byte, error) {
	var late atomic.Bool
	t := time.AfterFunc(u.cfg.UpstreamTimeout, func() {
		late.Store(true)
		if c, ok := body.(io.Closer); ok {
			c.Close()
		}
	})
	defer t.Stop()
	max := u.cfg.Limits.MaxDocumentBytes
	b, err := io.ReadAll(io.LimitReader(body, int64(max)+1))
	switch {
	case err != nil && late.Load():
		return nil, fmt.Errorf("no response within %s (the body did not end)", u.cfg.UpstreamTimeout)
	case err != nil:
		return nil, fmt.Errorf("reading the response: %w", err)
	case len(b) > max:
		return nil, fmt.Errorf("the response is over the %d-byte limit", max)
	}
	return b, nil
}

// readStream relays the events of an SSE body until it ends.
func (u *streamable) readStream(body io.Reader, deliver func([]byte)) *sse.Parser {
	p := &sse.Parser{Max: u.cfg.Limits.MaxDocumentBytes, Dispatch: func(ev sse.Event) {
		if (ev.Name == "" || ev.Name == "message") && len(bytes.TrimSpace(ev.Data)) > 0 {
			deliver(ev.Data)
		}
	}}
	buf := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(buf)
	_ = p.Consume(body, *buf, nil)
	return p
}

// readBuffers are the buffers event streams are read through: one per
// stream while it is read, not one made per call (a call's answer is a
// stream; the allocation was most of what a call cost the proxy's heap).
var readBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// deliver hands one message from the server to the relay, as one line, and
// reports whether it answers x. Text that is not JSON never reaches the
// agent (it would break the agent's framing): it is recorded as an
// unparsed frame (ok false), and the request it should have answered fails.
func (u *streamable) deliver(x *exchange, resp *http.Response, frame []byte) (answers, ok bool) {
	if !json.Valid(frame) {
		u.r.Unparsed("server", frame)
		return false, false
	}
	if bytes.ContainsAny(frame, "\r\n") {
		var b bytes.Buffer
		_ = json.Compact(&b, frame)
		frame = b.Bytes()
	}
	read := jsonrpc.Parse(frame)
	if x.request() || u.legacy.Load() {
		m, ok := read.Message, read.OK
		if !ok {
			m, ok = relay.UnreadableResponse(frame)
		}
		if ok && m.Method == "" && m.ID.Valid() {
			if w := u.awaited(m.ID); w != nil {
				x = w // on HTTP+SSE the stream answers what was posted
			}
			if x.request() && m.ID == x.msg.ID {
				answers = true
				x.answered.Store(true)
				if x.method() == mcpwire.MethodInitialize && m.Result != nil {
					u.initialized(resp, m.Result)
				}
			}
		}
	}
	u.r.FromServerMessage(read)
	return answers, true
}

// initialized records the session an initialize response opened.
func (u *streamable) initialized(resp *http.Response, result []byte) {
	v, _ := jsonwire.String(jsonwire.Lookup(result, "protocolVersion"))
	u.mu.Lock()
	u.version, u.stateless = v, false
	legacy := u.legacy.Load()
	if !legacy {
		u.sid = resp.Header.Get(streamhttp.HeaderSessionID)
	}
	sid := u.sid
	u.mu.Unlock()
	if !legacy { // on HTTP+SSE the endpoint named the session
		u.r.Session().SetMCPSessionID(sid)
	}
}

// refused answers a request the server refused with an HTTP error status:
// the server's own JSON-RPC error when the body holds one (its code and
// data intact, so the agent can act on it — a 2026-07-28 client falls back
// to initialize on it), else an error naming the upstream and the status.
func (u *streamable) refused(x *exchange, resp *http.Response) {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if !x.request() {
		return
	}
	if e := jsonwire.Lookup(b, "error"); len(e) > 0 && json.Valid(e) && !bytes.ContainsAny(e, "\r\n") {
		if x.answered.Swap(true) {
			return
		}
		u.awaited(x.msg.ID)
		out := append([]byte(`{"jsonrpc":"2.0","id":`), x.msg.RawID...)
		out = append(append(append(out, `,"error":`...), e...), '}')
		if x.own {
			u.r.FromServer(out)
			return
		}
		u.r.Session().Fail(x.msg.ID, fmt.Errorf("HTTP %d", resp.StatusCode))
		u.r.ToAgent(out)
		return
	}
	u.fail(x, fmt.Errorf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode)))
}

// fail ends x's request with err: the agent's gets a JSON-RPC error naming
// the upstream; the proxy's own call returns it.
func (u *streamable) fail(x *exchange, err error) {
	if !x.request() || x.answered.Swap(true) {
		return
	}
	u.awaited(x.msg.ID)
	if x.own {
		u.r.FromServer(jsonrpc.Error(x.msg.RawID, jsonrpc.CodeUpstream, err.Error()))
		return
	}
	u.r.UpstreamFailed(x.msg.Message, err)
}

// close ends the upstream once the agent's input ended: the queued frames
// go out and requests in flight finish, within grace; then streams are cut
// and the session is ended with DELETE.
// With drain unset (a signal: the agent's input is still open, and its
// reader may still queue frames) nothing waits.
// What is still writing to an agent that stopped reading is given up on
// after another grace: the proxy does not outlive its agent for long.
func (u *streamable) close(grace time.Duration, drain bool) {
	gctx, gcancel := context.WithTimeout(context.Background(), grace)
	defer gcancel()
	if drain {
		if u.big != nil {
			u.big.CloseWithError(errors.New("the agent's input ended inside a frame"))
		}
		close(u.queue)
		select {
		case <-u.dispatched:
		case <-gctx.Done():
		}
	} else {
		gcancel()
		u.cancel()
	}
	u.mu.Lock()
	u.closing = true // nothing starts, restarts or listens any more
	sid, version := u.sid, u.version
	u.sid = ""
	u.mu.Unlock()
	inflight := make(chan struct{})
	go func() {
		u.inflight.Wait()
		close(inflight)
	}()
	select {
	case <-inflight:
	case <-gctx.Done():
	}
	u.cancel()
	ended := make(chan struct{})
	go func() {
		<-inflight
		<-u.dispatched
		u.bg.Wait()
		close(ended)
	}()
	relay.Drained(ended, grace, nil)
	if sid != "" {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout(u.cfg))
		if req, err := u.newRequest(ctx, http.MethodDelete, u.url, sid, nil); err == nil {
			if version != "" {
				req.Header.Set(streamhttp.HeaderProtocolVersion, version)
			}
			if resp, err := u.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	u.conns.Close()
}

// closeTimeout bounds the goodbye (DELETE of the session).
func closeTimeout(cfg *config.Config) time.Duration { return min(cfg.UpstreamTimeout, 2*time.Second) }

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
