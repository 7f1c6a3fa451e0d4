package httptap

import (
	"net/http"
	"net/url"

	"github.com/mcpdrift/mcpdrift/interceptor"
)

// sessionFor picks the session a POST belongs to: the legacy SSE connection
// whose message endpoint it targets, the session named by Mcp-Session-Id,
// or the endpoint's current sessionless connection. A handshake
// (initialize, server/discover) without a session id starts a new
// connection: handshakes in flight at once are different clients (a
// proxy's), never one.
func (t *Transport) sessionFor(req *http.Request, handshake bool) *interceptor.Session {
	t.mu.Lock()
	s := t.byEndpoint[req.URL.String()]
	t.mu.Unlock()
	if s != nil {
		return s
	}
	if sid := req.Header.Get(headerSessionID); sid != "" {
		return t.sessionByID(req, sid)
	}
	key := endpointKey(req.URL)
	t.mu.Lock()
	defer t.mu.Unlock()
	s = t.current[key]
	if s == nil || handshake {
		if s != nil {
			// Replaced, not closed: its calls in flight still get their
			// responses, which are observed on their own HTTP exchanges.
			delete(t.current, key)
		}
		s = t.ic.NewSession(interceptor.Endpoint{URL: req.URL.String()})
		t.current[key] = s
	}
	return s
}

// sessionByID returns the session with this Mcp-Session-Id, creating one if
// the tap has not seen its handshake (it was installed mid-session).
func (t *Transport) sessionByID(req *http.Request, sid string) *interceptor.Session {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.byID[sid]
	if s == nil {
		s = t.ic.NewSession(interceptor.Endpoint{URL: req.URL.String()})
		s.SetMCPSessionID(sid)
		t.byID[sid] = s
	}
	return s
}

// bindID records the session id a server issued in response to s's request.
func (t *Transport) bindID(sid string, s *interceptor.Session) {
	t.mu.Lock()
	cur := t.byID[sid]
	if cur == nil {
		t.byID[sid] = s
		// The handshake's connection now has an id: the next sessionless
		// handshake on the endpoint is another connection.
		for k, c := range t.current {
			if c == s {
				delete(t.current, k)
			}
		}
	}
	t.mu.Unlock()
	if cur == nil {
		s.SetMCPSessionID(sid)
	}
}

// currentFor is the endpoint's current sessionless connection, if any.
func (t *Transport) currentFor(u *url.URL) *interceptor.Session {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.current[endpointKey(u)]
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
	s := t.byID[sid]
	delete(t.byID, sid)
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
