package httptap

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/idlemap"
)

// Bounds on the sessions a Transport keeps (sessionless connections and
// those with a session id): clients that vanish without DELETE — a killed
// agent behind a proxy — must not grow its memory for ever. An evicted
// session is closed; one that comes back is picked up again as a session
// the tap joined mid-way.
const (
	sessionIdle = time.Hour // a session no request named for this long is forgotten
	maxSessions = 10000     // at most this many of each kind (the least recently used goes)
)

func newSessionMap() idlemap.Map[*interceptor.Session] {
	return idlemap.Map[*interceptor.Session]{Idle: sessionIdle, Max: maxSessions,
		Evicted: func(_ string, s *interceptor.Session) { s.Close() }}
}

// ContextWithClient marks a request as one of the client key (any stable
// name for it: a reverse proxy uses the client's host and the clientInfo
// its requests carry) — for a Transport on the server side of many
// clients: the requests of sessionless (2026-07-28) clients are then told
// apart by client instead of being credited to the endpoint's latest
// handshake.
func ContextWithClient(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, clientKey{}, key)
}

type clientKey struct{}

// ClientFromContext is the client ContextWithClient named.
func ClientFromContext(ctx context.Context) (string, bool) {
	c, ok := ctx.Value(clientKey{}).(string)
	return c, ok
}

// sessionlessKey names the sessionless connection a request belongs to:
// its endpoint, and the client when ContextWithClient named one.
func sessionlessKey(req *http.Request) string {
	key := endpointKey(req.URL)
	if c, ok := ClientFromContext(req.Context()); ok {
		key += "\x00" + c
	}
	return key
}

// sessionFor picks the session a POST belongs to: the legacy SSE connection
// whose message endpoint it targets, the session named by Mcp-Session-Id,
// or the current sessionless connection (the endpoint's, or the client's).
// A handshake (initialize, server/discover) without a session id starts a
// new connection: handshakes in flight at once are different clients (a
// proxy's), never one.
func (t *Transport) sessionFor(req *http.Request, handshake bool) *interceptor.Session {
	t.mu.Lock()
	s := t.byEndpoint[req.URL.String()]
	t.mu.Unlock()
	if s != nil {
		return s
	}
	if sid := req.Header.Get(headerSessionID); sid != "" {
		return t.sessionByID(req, mcpwire.SessionKey(sid))
	}
	key := sessionlessKey(req)
	t.mu.Lock()
	defer t.mu.Unlock()
	s, _ = t.current.Get(key)
	if s == nil || handshake {
		// One replaced is not closed: its calls in flight still get their
		// responses, which are observed on their own HTTP exchanges.
		s = t.ic.NewSession(interceptor.Endpoint{URL: req.URL.String()})
		t.current.Put(key, s)
	}
	return s
}

// sessionByID returns the session with this Mcp-Session-Id (as
// mcpwire.SessionKey keeps it, as are the ids the tap's maps hold),
// creating one if the tap has not seen its handshake (it was installed
// mid-session).
func (t *Transport) sessionByID(req *http.Request, sid string) *interceptor.Session {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, _ := t.byID.Get(sid)
	if s == nil {
		s = t.ic.NewSession(interceptor.Endpoint{URL: req.URL.String()})
		s.SetMCPSessionID(sid)
		t.byID.Put(sid, s)
	}
	return s
}

// bindID records the session id a server issued in response to s's request.
func (t *Transport) bindID(sid string, s *interceptor.Session) {
	t.mu.Lock()
	cur, _ := t.byID.Get(sid)
	if cur == nil {
		t.byID.Put(sid, s)
		// The handshake's connection now has an id: the next sessionless
		// handshake on the endpoint is another connection.
		t.current.DeleteFunc(func(_ string, c *interceptor.Session) bool { return c == s })
	}
	t.mu.Unlock()
	if cur == nil {
		s.SetMCPSessionID(sid)
	}
}

// currentFor is the current sessionless connection of req, if any.
func (t *Transport) currentFor(req *http.Request) *interceptor.Session {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, _ := t.current.Get(sessionlessKey(req))
	return s
}

// newSession starts a session for a legacy SSE connection.
func (t *Transport) newSession(u *url.URL) *interceptor.Session {
	return t.ic.NewSession(interceptor.Endpoint{URL: u.String()})
}

// bindEndpoint routes POSTs to a legacy SSE message endpoint to s.
func (t *Transport) bindEndpoint(endpoint string, s *interceptor.Session) {
	t.mu.Lock()
	t.byEndpoint[endpoint] = s
	t.mu.Unlock()
}

// end closes the session with this id (the client sent DELETE).
func (t *Transport) end(sid string) {
	t.mu.Lock()
	s, _ := t.byID.Delete(sid)
	t.mu.Unlock()
	if s != nil {
		s.Close()
	}
}

// forget drops a legacy SSE connection whose stream ended, and closes it.
func (t *Transport) forget(s *interceptor.Session) {
	t.mu.Lock()
	for k, c := range t.byEndpoint {
		if c == s {
			delete(t.byEndpoint, k)
		}
	}
	t.mu.Unlock()
	s.Close()
}
