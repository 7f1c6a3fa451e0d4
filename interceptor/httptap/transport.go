// Package httptap is the interceptor's front-end for MCP over HTTP: an
// http.RoundTripper that sees Streamable HTTP and legacy SSE traffic and
// feeds it to interceptor sessions. It works with any HTTP-based MCP client
// (it is the way to instrument the Go SDK's Streamable HTTP transport, whose
// Connection cannot be wrapped).
//
// Requests are forwarded unchanged except for the trace context written into
// params._meta (see interceptor.WithTraceContextInjection). Responses are
// observed as the client reads them: JSON bodies when read to the end, event
// streams event by event, so long-lived streams keep working and nothing is
// read ahead of the client.
package httptap

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/idlemap"
)

const headerSessionID = "Mcp-Session-Id"

// Transport is an http.RoundTripper that records MCP traffic. Use one per
// MCP client connection where you can: servers on protocol 2026-07-28 issue
// no session id, so calls through a shared Transport are attributed to the
// connection that most recently completed a handshake — unless each
// request names its client (ContextWithClient), as a reverse
// proxy's do. Where the server issues a session id (Mcp-Session-Id) or a
// legacy SSE endpoint, sessions are told apart exactly. Sessions no request
// named for an hour are forgotten, and at most 10,000 of each kind are kept.
type Transport struct {
	base http.RoundTripper
	ic   *interceptor.Interceptor

	mu         sync.Mutex
	current    idlemap.Map[*interceptor.Session] // endpoint URL (and client) -> connection without a session id
	byID       idlemap.Map[*interceptor.Session] // Mcp-Session-Id -> session
	byEndpoint map[string]*interceptor.Session   // legacy SSE message endpoint -> session, while its stream is open
}

// NewTransport wraps base (http.DefaultTransport if nil).
func NewTransport(base http.RoundTripper, opts ...interceptor.Option) *Transport {
	return NewTransportWith(base, interceptor.New(opts...))
}

// NewTransportWith wraps base with an existing Interceptor.
func NewTransportWith(base http.RoundTripper, ic *interceptor.Interceptor) *Transport {
	if base == nil {
		base = http.DefaultTransport
	}
	return &Transport{
		base:       base,
		ic:         ic,
		current:    newSessionMap(),
		byID:       newSessionMap(),
		byEndpoint: map[string]*interceptor.Session{},
	}
}

// Client returns an *http.Client like c (http.DefaultClient if nil) whose
// transport is wrapped by a new Transport.
func Client(c *http.Client, opts ...interceptor.Option) *http.Client {
	return ClientWith(c, interceptor.New(opts...))
}

// ClientWith is Client with an existing Interceptor.
func ClientWith(c *http.Client, ic *interceptor.Interceptor) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	wrapped := *c
	wrapped.Transport = NewTransportWith(c.Transport, ic)
	return &wrapped
}

// CloseIdleConnections forwards to the base transport.
func (t *Transport) CloseIdleConnections() {
	if ci, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// Close ends every session the transport tracks (pending requests end as
// connection_closed).
func (t *Transport) Close() {
	t.mu.Lock()
	all := map[*interceptor.Session]bool{}
	for _, m := range []*idlemap.Map[*interceptor.Session]{&t.current, &t.byID} {
		for _, s := range m.All() {
			all[s] = true
		}
		m.DeleteFunc(func(string, *interceptor.Session) bool { return true })
	}
	for k, s := range t.byEndpoint {
		all[s] = true
		delete(t.byEndpoint, k)
	}
	t.mu.Unlock()
	for s := range all {
		s.Close()
	}
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case req.Method == http.MethodPost && isJSON(req.Header.Get("Content-Type")):
		return t.post(req)
	case req.Method == http.MethodGet && accepts(req.Header, "text/event-stream"):
		return t.get(req)
	case req.Method == http.MethodDelete && req.Header.Get(headerSessionID) != "":
		resp, err := t.base.RoundTrip(req)
		if err == nil && resp.StatusCode/100 == 2 {
			t.end(mcpwire.SessionKey(req.Header.Get(headerSessionID))) // a server that refused keeps the session
		}
		return resp, err
	}
	return t.base.RoundTrip(req)
}

// post forwards a POST of JSON-RPC messages and observes its response.
func (t *Transport) post(req *http.Request) (*http.Response, error) {
	body, ok, err := t.readBody(req)
	if err != nil {
		return nil, err
	}
	if !ok {
		if body == nil {
			return t.base.RoundTrip(req) // no body: nothing was read
		}
		return t.base.RoundTrip(withRest(req, body)) // too large to observe
	}
	info := interceptor.Inspect(body)
	if !info.JSONRPC {
		return t.base.RoundTrip(withBody(req, body))
	}
	sess := t.sessionFor(req, info.Handshake)
	ctx, err := sess.BeforeSendFrame(req.Context(), body)
	if err != nil {
		return nil, err
	}
	if resp := refused(ctx, req, sess, body); resp != nil {
		return resp, nil
	}
	ids := info.Requests
	out := body
	t.ic.Protect(func() { out = sess.SendFrame(ctx, body) })
	resp, err := t.base.RoundTrip(withBody(req, out))
	if err != nil {
		for _, id := range ids {
			sess.Fail(id, err)
		}
		return nil, err
	}
	if sid := resp.Header.Get(headerSessionID); sid != "" {
		t.bindID(mcpwire.SessionKey(sid), sess)
	}
	if a, ok := resp.Body.(Answer); ok {
		for _, id := range ids {
			if err := a.AnswerError(id); err != nil {
				sess.Fail(id, err) // its answer in the body is then ignored
			}
		}
	}
	x := exchange{sess: sess, requests: ids}
	if resp.StatusCode >= 400 {
		x.failed = &statusError{resp.StatusCode} // whatever the body says, these requests are over
	}
	t.observe(resp, x)
	return resp, nil
}

// refused answers a POST of one tools/call that the stale guard
// (interceptor.WithStaleRefusal, WithStaleWindow) refuses, as a server
// would answer it: 200, application/json, the refusal's tool error. The
// request is never sent. A batch is sent as it is (batches left the
// protocol with 2025-06-18).
func refused(ctx context.Context, req *http.Request, sess *interceptor.Session, body []byte) *http.Response {
	if !sess.GuardsCalls() {
		return nil
	}
	m, ok := interceptor.ParseMessage(body)
	if !ok || m.Method != mcpwire.MethodToolsCall || !m.ID.Valid() {
		return nil
	}
	r := sess.GuardCall(ctx, m.ID, m.Params)
	if r == nil {
		return nil
	}
	answer := r.Response(m.RawID)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if sid := req.Header.Get(headerSessionID); sid != "" {
		h.Set(headerSessionID, sid)
	}
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(answer)), ContentLength: int64(len(answer)), Request: req,
	}
}

// Answer is implemented by a response body that a RoundTripper under the
// Transport wrote itself instead of forwarding a request (a proxy's gate
// refusing a call, say). For each request of the POST, the tap asks
// AnswerError: a non-nil error ends the request with Session.Fail, so its
// span carries that error's error.type and attributes (see Session.Fail)
// rather than the body's answer read as the server's. Requests it returns
// nil for are paired with the body's answers as usual.
type Answer interface {
	AnswerError(id interceptor.ID) error
}

// get forwards a GET for an event stream: Streamable HTTP's standalone
// stream, or the legacy SSE transport's connection.
func (t *Transport) get(req *http.Request) (*http.Response, error) {
	var sess *interceptor.Session
	legacy := false
	if sid := req.Header.Get(headerSessionID); sid != "" {
		sess = t.sessionByID(req, mcpwire.SessionKey(sid))
	} else if s := t.currentFor(req); s != nil && s.Established() {
		sess = s // a sessionless Streamable HTTP server's standalone stream
	} else {
		sess = t.newSession(req.URL) // a legacy SSE connection starts here
		legacy = true
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	x := exchange{sess: sess}
	if legacy {
		x.legacyBase = req.URL.String()
	}
	t.observe(resp, x)
	return resp, nil
}

// readBody reads a request body up to the document limit and closes it
// (RoundTrip must close the caller's body, on every path). ok is false when
// there is no body (body is nil), or when it is larger than the limit: then
// body is what was read, and the rest is still to be read from req.Body,
// which stays open.
func (t *Transport) readBody(req *http.Request) (body []byte, ok bool, err error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, false, nil
	}
	limit := int64(t.ic.Limits().MaxDocumentBytes)
	if n := req.ContentLength; n > 0 && n <= limit {
		body = make([]byte, n)
		_, err = io.ReadFull(req.Body, body)
		req.Body.Close()
		if err != nil {
			return nil, false, err
		}
		return body, true, nil
	}
	body, err = io.ReadAll(io.LimitReader(req.Body, limit+1))
	if err != nil {
		req.Body.Close()
		return nil, false, err
	}
	if int64(len(body)) > limit {
		return body, false, nil
	}
	req.Body.Close()
	return body, true, nil
}

// withBody returns a copy of req that sends body. A RoundTripper must not
// modify the request it was given, so the body is set on a shallow copy
// (the headers are shared: RoundTrippers only read them); the caller's body
// was read and closed.
func withBody(req *http.Request, body []byte) *http.Request {
	r := req.WithContext(req.Context())
	r.ContentLength = int64(len(body))
	if len(body) == 0 {
		r.Body = http.NoBody
	} else {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return r
}

// withRest returns a copy of req that sends read and then what is left of
// the caller's body, which the base transport closes. The caller's GetBody
// still replays the same bytes.
func withRest(req *http.Request, read []byte) *http.Request {
	r := req.WithContext(req.Context())
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(read), req.Body), req.Body}
	return r
}

// statusError fails requests whose HTTP exchange failed: error.type is the
// status code, as the semantic conventions suggest for HTTP failures.
type statusError struct{ code int }

func (e *statusError) Error() string     { return fmt.Sprintf("HTTP status %d", e.code) }
func (e *statusError) ErrorType() string { return strconv.Itoa(e.code) }

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

func accepts(h http.Header, mediaType string) bool {
	for _, v := range h.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			if mt, _, err := mime.ParseMediaType(part); err == nil && mt == mediaType {
				return true
			}
		}
	}
	return false
}

// endpointKey is a URL without query and fragment: one MCP endpoint.
func endpointKey(u *url.URL) string {
	c := *u
	c.RawQuery, c.Fragment, c.RawFragment, c.User = "", "", "", nil
	return c.String()
}
