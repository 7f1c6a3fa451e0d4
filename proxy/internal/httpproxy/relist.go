package httpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/sse"
	"github.com/mcpdrift/mcpdrift/proxy/gate"
	"github.com/mcpdrift/mcpdrift/proxy/internal/jsonrpc"
	"github.com/mcpdrift/mcpdrift/proxy/internal/streamhttp"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// How the HTTP → HTTP gate learns the server's current definitions with
// --on-stale refuse: the proxy lists tools upstream on the session's behalf
// (its URL and headers, the proxy's own request ids). A list_changed seen
// on one of the session's streams starts that relist at once, in the
// background; --relist-interval has the session's next call relist first.
// Either way a call is judged only once the relist is done (or has failed).

// lastRequest is where and how the session last reached the server: its
// relists go there with those headers (Mcp-Session-Id, protocol version,
// authorization).
type lastRequest struct {
	url    *url.URL
	header http.Header
	meta   []byte // its params._meta (a 2026-07-28 request's carries the protocol version and client)
}

// remember records req (with params) as the session's last request, for
// the relists (--on-stale refuse; without it nothing is kept). It keeps
// req's own URL and header (a forwarded request's, never modified after it
// is sent) and a copy of the protocol members of its params._meta: a slice
// of the body would keep the whole body (up to the document limit) for as
// long as the session is known, and a client can open thousands of
// sessions. For the same reason a request whose header or _meta is larger
// than a client needs is not remembered (the session's relists go as its
// last other request did). A request without params (a GET) keeps the
// _meta last remembered. m is the request's reading (nil: a GET, a batch).
func (g *httpSession) remember(req *http.Request, m *jsonrpc.Message) {
	if !g.Refuses() || headerBytes(req.Header) > maxRememberedHeader {
		return
	}
	g.pendMu.Lock()
	defer g.pendMu.Unlock()
	meta := g.last.meta
	if m != nil && m.Params != nil {
		meta = nil
		if m.Meta != nil {
			if meta = streamhttp.ProtocolMeta(m.Meta); len(meta) > maxRememberedMeta {
				return
			}
		}
	}
	g.last = lastRequest{url: req.URL, header: req.Header, meta: meta}
}

// Bounds on what a session keeps of its last request (Node's servers
// refuse request headers over 16 KiB).
const (
	maxRememberedHeader = 16 << 10
	maxRememberedMeta   = 8 << 10
)

// headerBytes is about the size of h on the wire.
func headerBytes(h http.Header) int {
	n := 0
	for k, vv := range h {
		for _, v := range vv {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// announce is the server saying the session's tools changed: a relist is
// pending (calls wait for it) and starts now in the background, unless the
// session has sent nothing yet to relist with (then its next call relists).
func (h *httpGate) announce(g *httpSession) {
	if !g.Refuses() {
		return
	}
	g.pendMu.Lock()
	defer g.pendMu.Unlock()
	if g.last.url == nil {
		g.announced.Store(true)
		return
	}
	if g.relistWait == nil {
		g.relistWait = make(chan struct{})
	}
	g.relistGen++
	if g.relisting || h.ctx.Err() != nil {
		return // the running relist lists again when it ends
	}
	g.relisting = true
	h.wg.Add(1)
	go h.relistLoop(g)
}

// relistLoop relists until no announcement came during the last relist,
// then lets the waiting calls go.
func (h *httpGate) relistLoop(g *httpSession) {
	defer h.wg.Done()
	for {
		g.pendMu.Lock()
		gen, last := g.relistGen, g.last
		g.pendMu.Unlock()
		g.relistMu.Lock()
		_, _ = h.relist(h.ctx, g, last)
		g.relistMu.Unlock()
		g.pendMu.Lock()
		if g.relistGen == gen || h.ctx.Err() != nil {
			close(g.relistWait)
			g.relistWait, g.relisting = nil, false
			g.pendMu.Unlock()
			return
		}
		g.pendMu.Unlock()
	}
}

// relistDue waits for a pending relist (at most --upstream-timeout), then
// relists on the call path when --relist-interval says the definitions are
// due, or a change was announced before the session had a request to
// relist with. A change the server did not announce is sent to the agent
// (notifyChanged). A failed relist leaves what was known; the call is
// judged on it.
func (h *httpGate) relistDue(req *http.Request, g *httpSession) {
	if !g.Refuses() {
		return
	}
	g.pendMu.Lock()
	wait := g.relistWait
	g.pendMu.Unlock()
	if wait != nil {
		t := time.NewTimer(h.cfg.UpstreamTimeout)
		select {
		case <-wait:
		case <-t.C:
		case <-req.Context().Done():
		}
		t.Stop()
	}
	if h.cfg.RelistInterval <= 0 && !g.announced.Load() {
		return
	}
	g.relistMu.Lock()
	defer g.relistMu.Unlock()
	announced := g.announced.Swap(false)
	if !announced && (h.cfg.RelistInterval <= 0 || time.Since(g.learned) < h.cfg.RelistInterval) {
		return
	}
	g.pendMu.Lock()
	last := g.last // req, remembered
	g.pendMu.Unlock()
	changed, err := h.relist(req.Context(), g, last)
	switch {
	case err != nil:
		g.announced.CompareAndSwap(false, announced) // still to do
	case changed && !announced:
		h.notifyChanged(req.Context(), g)
	}
}

// relist lists the server's tools as last and updates what the session's
// gate knows; g.relistMu is held. changed: the definitions differ from the
// ones known before.
func (h *httpGate) relist(ctx context.Context, g *httpSession, last lastRequest) (changed bool, err error) {
	if last.url == nil {
		return false, errors.New("no request of the session to relist as")
	}
	ctx, cancel := context.WithTimeout(ctx, h.cfg.UpstreamTimeout)
	defer cancel()
	current, err := gate.ListTools(ctx, h.cfg.Limits, true, func(ctx context.Context, method string, params []byte) (json.RawMessage, error) {
		return h.call(ctx, last, method, params)
	})
	if err != nil {
		return false, err
	}
	changed = g.Learn(current)
	g.learned = time.Now()
	return changed, nil
}

// notifyChanged tells the session's agent that its tools changed, as the
// server would have: notifications/tools/list_changed on the session's
// standing GET stream, the only way the proxy can reach an HTTP client
// unasked. A session with no such stream through the proxy cannot be told;
// both outcomes are counted.
func (h *httpGate) notifyChanged(ctx context.Context, g *httpSession) {
	told := false
	if s := g.stream.Load(); s != nil {
		told = s.inject(listChangedEvent)
	}
	h.unannounced.Add(ctx, 1, metric.WithAttributes(
		attribute.Bool(semconv.ProxyAgentNotified, told),
		attribute.String(semconv.ServerName, h.cfg.ServerName)))
}

// listChangedEvent is the event the proxy adds to a session's GET stream:
// no id field, so the client's Last-Event-ID (the server's) stays as it was.
var listChangedEvent = []byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")

// call sends one request of the proxy's own upstream as last (its URL and
// headers) and returns its result; the answer may come as JSON or as an
// event stream.
func (h *httpGate) call(ctx context.Context, last lastRequest, method string, params []byte) (json.RawMessage, error) {
	id := []byte(`"` + jsonrpc.OwnPrefix + strconv.FormatUint(h.ids.Add(1), 10) + `"`)
	stateless := last.header.Get(streamhttp.HeaderProtocolVersion) >= mcpwire.ProtocolStateless
	if stateless && last.meta != nil {
		// Every 2026-07-28 request carries its protocol version and
		// client in _meta: the relist carries the agent's.
		params = streamhttp.WithMeta(params, last.meta) // its protocol members (remember)
	}
	body := append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"method":"`+method+`","params":`...)
	body = append(append(body, params...), '}')
	out, err := http.NewRequestWithContext(ctx, http.MethodPost, last.url.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	out.Header = last.header.Clone()
	out.Header.Del("Content-Length")
	out.Header.Set("Content-Type", "application/json")
	out.Header.Set("Accept", "application/json, text/event-stream")
	// The headers that mirror the body (2026-07-28) must mirror this one:
	// servers refuse a request whose headers and body disagree.
	for k := range out.Header {
		if k == streamhttp.HeaderName || strings.HasPrefix(k, streamhttp.ParamHeaderPrefix) {
			delete(out.Header, k)
		}
	}
	if stateless {
		out.Header.Set(streamhttp.HeaderMethod, method)
	}
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
		if m := jsonrpc.Parse(frame); m.OK && answer == nil && bytes.Equal(m.RawID, id) {
			answer = &m.Message
		}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		p := &sse.Parser{Max: h.cfg.Limits.MaxDocumentBytes, Dispatch: func(ev sse.Event) { take(bytes.Clone(ev.Data)) }}
		_ = p.Consume(resp.Body, make([]byte, 4<<10), func() bool { return answer != nil })
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
