package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpdrift/mcpdrift/proxy/internal/streamhttp"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/sse"
	"github.com/mcpdrift/mcpdrift/proxy/internal/config"
)

// The deprecated HTTP+SSE transport (2024-11-05) upstream of stdio → HTTP.
// A GET opens an event stream whose first event, "endpoint", names the URL
// to POST messages to; the server answers each POST at once (202) and sends
// every message — responses included — on the stream. The stream is the
// session: when it drops (the server restarted) the session is gone, and
// the proxy opens a new stream and re-initializes, as it does when a
// Streamable HTTP session dies (restart.go).
//
// The same streamable type carries both transports: the agent's frames,
// their order, the proxy's own requests, the gate and the restart are the
// same; only where messages are posted and where answers come from differ.

// legacyFallback reports whether resp, the answer to the agent's initialize
// POST in auto mode, says the server speaks only the older transport.
func (u *streamable) legacyFallback(x *exchange, resp *http.Response) bool {
	if u.cfg.UpstreamTransport != config.TransportAuto || x.own || x.method() != mcpwire.MethodInitialize || u.legacy.Load() {
		return false
	}
	switch resp.StatusCode {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		return true
	}
	return false
}

// key identifies the live session: its Mcp-Session-Id, or on HTTP+SSE its
// message endpoint (the stream's own session). restart takes the key of
// the session that died.
func (u *streamable) key() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.legacy.Load() {
		return u.endpoint
	}
	return u.sid
}

// connectSSE opens the event stream, waits (at most UpstreamTimeout) for
// its endpoint event, and keeps reading it in the background, relaying
// what the server sends. The endpoint must stay on the upstream's origin:
// the configured headers (secrets) go with every POST.
func (u *streamable) connectSSE() error {
	u.mu.Lock()
	if u.closing {
		u.mu.Unlock()
		return errors.New("the proxy is shutting down")
	}
	u.gen++
	gen := u.gen
	ctx, cancel := context.WithCancel(u.ctx)
	if u.streamCancel != nil {
		u.streamCancel() // the stream it replaces is dead: make sure of it
	}
	u.streamCancel = cancel
	u.mu.Unlock()

	req, err := u.newRequest(ctx, http.MethodGet, u.url, "", nil)
	if err != nil {
		cancel()
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := u.do(req)
	if err != nil {
		cancel()
		return err
	}
	if resp.StatusCode != http.StatusOK || !streamhttp.IsEventStream(resp) {
		resp.Body.Close()
		cancel()
		return fmt.Errorf("the SSE stream answered HTTP %d %s", resp.StatusCode, truncate(resp.Header.Get("Content-Type"), 60))
	}
	endpoint := make(chan endpointEvent, 1)
	u.bg.Add(1)
	go func() {
		defer u.bg.Done()
		defer resp.Body.Close()
		u.readSSE(resp, endpoint)
		u.streamEnded(gen)
	}()
	t := time.NewTimer(u.cfg.UpstreamTimeout)
	defer t.Stop()
	var ep endpointEvent
	select {
	case ep = <-endpoint:
	case <-t.C:
		ep.err = fmt.Errorf("no endpoint event on the SSE stream within %s", u.cfg.UpstreamTimeout)
	case <-u.ctx.Done():
		ep.err = errors.New("the proxy is shutting down")
	}
	if ep.err != nil {
		cancel()
		return ep.err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.gen != gen {
		return errors.New("the SSE stream ended right after its endpoint event")
	}
	u.legacy.Store(true)
	u.endpoint = ep.url
	u.r.Session().SetMCPSessionID(endpointSession(ep.url))
	return nil
}

// endpointEvent is what the stream's first event said: where to post.
type endpointEvent struct {
	url string
	err error
}

// readSSE reads the stream: the endpoint event first (to endpoint), then
// every message event to the agent, until the stream ends.
func (u *streamable) readSSE(resp *http.Response, endpoint chan<- endpointEvent) {
	sent := false
	p := &sse.Parser{Max: u.cfg.Limits.MaxDocumentBytes, Dispatch: func(ev sse.Event) {
		switch {
		case !sent:
			sent = true
			url, err := u.resolveEndpoint(ev)
			endpoint <- endpointEvent{url, err}
		case ev.Name == "" || ev.Name == "message":
			if len(bytes.TrimSpace(ev.Data)) > 0 {
				_, _ = u.deliver(&exchange{}, resp, ev.Data)
			}
		}
	}}
	_ = p.Consume(resp.Body, make([]byte, 32<<10), nil)
	if !sent {
		endpoint <- endpointEvent{err: errors.New("the SSE stream ended before its endpoint event")}
	}
}

// resolveEndpoint is the message URL an endpoint event names, resolved
// against the upstream URL. It must stay on the upstream's origin: the
// configured headers (secrets) go with every message.
func (u *streamable) resolveEndpoint(ev sse.Event) (string, error) {
	if ev.Name != "endpoint" {
		return "", fmt.Errorf("the SSE stream's first event is %q, not endpoint", truncate(ev.Name, 40))
	}
	base, err := url.Parse(u.url)
	if err != nil {
		return "", err
	}
	ref, err := url.Parse(string(bytes.TrimSpace(ev.Data)))
	if err != nil {
		return "", errors.New("the SSE stream's endpoint event holds no URL")
	}
	to := base.ResolveReference(ref)
	if to.Scheme != base.Scheme || to.Host != base.Host {
		return "", fmt.Errorf("the SSE stream's endpoint event points to another origin (%s); the proxy sends its headers to the upstream's only", serverid.Display(to.String()))
	}
	return to.String(), nil
}

// endpointSession is the session id a message endpoint carries
// (?sessionId=…, as the SDKs write it), recorded as mcp.session.id.
func endpointSession(ep string) string {
	u, err := url.Parse(ep)
	if err != nil {
		return ""
	}
	for _, k := range []string{"sessionId", "session_id"} {
		if v := u.Query().Get(k); v != "" {
			return v
		}
	}
	return ""
}

// streamEnded handles the end of stream gen. Unless the proxy is closing or
// a newer stream replaced it, the session is gone: the requests the server
// took on it can no longer be answered (they get an error: whether they
// ran is unknown), and the proxy opens a new stream and re-initializes,
// retrying with back-off until the server is back or the proxy ends. One
// loop does that: a stream that ends while it runs (one it opened) leaves
// the session lost, and the loop goes on.
func (u *streamable) streamEnded(gen uint64) {
	u.mu.Lock()
	if u.closing || u.gen != gen {
		u.mu.Unlock()
		return
	}
	dead := u.endpoint
	u.gen++ // what is posted from now on cannot be answered on the dead stream
	u.lost = true
	var orphans []*exchange
	for _, x := range u.awaiting {
		if x.accepted {
			orphans = append(orphans, x)
		}
	}
	looping := u.reconnecting
	u.reconnecting = true
	u.mu.Unlock()
	for _, x := range orphans {
		u.fail(x, errStreamEnded)
	}
	if looping {
		return
	}
	wait := listenMinWait
	for {
		err := u.restart(dead)
		u.mu.Lock()
		if u.closing || (err == nil && !u.lost) {
			u.reconnecting = false
			u.mu.Unlock()
			return
		}
		u.mu.Unlock()
		if err != nil && !u.sleep(&wait) {
			return
		}
		dead = "" // the session is known dead: restart("") retries while it is
	}
}

var errStreamEnded = errors.New("the server's event stream ended before it answered (did the server restart?); whether the request ran is unknown")

// await notes a request posted on HTTP+SSE: its answer is to come on the
// stream.
func (u *streamable) await(x *exchange) {
	if !x.request() || !u.legacy.Load() {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.awaiting[x.msg.ID] = x
}

// awaited is the request on HTTP+SSE that a response with id answers, no
// longer awaited; nil if none is.
func (u *streamable) awaited(id interceptor.ID) *exchange {
	u.mu.Lock()
	defer u.mu.Unlock()
	x := u.awaiting[id]
	delete(u.awaiting, id)
	return x
}

// accepted notes that the server took x, posted on stream gen (its POST
// was answered 2xx). It reports false if that stream is gone: the answer
// can no longer come, and the caller fails x.
func (u *streamable) accepted(x *exchange) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, waiting := u.awaiting[x.msg.ID]; !waiting {
		return true // answered already: the stream can beat the 202
	}
	if u.gen != x.gen {
		return false
	}
	x.accepted = true
	return true
}

// ensureSSE opens the stream before the first message when the transport
// is HTTP+SSE by configuration.
func (u *streamable) ensureSSE() error {
	if u.cfg.UpstreamTransport != config.TransportSSE || u.legacy.Load() {
		return nil
	}
	u.restartMu.Lock()
	defer u.restartMu.Unlock()
	if u.legacy.Load() {
		return nil
	}
	return u.connectSSE()
}
