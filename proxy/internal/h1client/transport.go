// Package h1client is the proxy's HTTP client to its upstream, in both
// modes that have one (HTTP → HTTP and stdio → HTTP). For a cleartext
// upstream reached directly, nothing goes through an http.Transport's
// persistConn, with its reader and writer goroutines and buffers: an
// exchange is written and read on the caller's goroutine (no hand-off to
// a connection's goroutines and back, the wake-ups a proxy on a small
// machine pays per call), over net/http's own wire format
// (Request.Write, http.ReadResponse). A standing GET event stream gets a
// connection of its own (≈ 20 KB a session less than http.Transport's,
// see docs/proxy.md "Measured"); the calls go over a pool of kept-alive
// connections. TLS upstreams (where http.Transport multiplexes HTTP/2),
// upstreams reached through an HTTP proxy from the environment and
// protocol upgrades go to the http.Transport under it.
package h1client

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Transport is the upstream client: an http.RoundTripper.
type Transport struct {
	base  *http.Transport
	calls *connPool
}

// New is the upstream client with base's dialer and bounds; what it does
// not send itself goes to base.
func New(base *http.Transport) *Transport {
	return &Transport{base: base, calls: &connPool{base: base}}
}

// Base is the http.Transport under t.
func (t *Transport) Base() *http.Transport { return t.base }

// streamReadBuffer is a stream connection's read buffer, held as long as
// the stream is open: small, since reads as large as it bypass it. Headers
// are read through it (longer lines too); a chunk-size line must fit in it
// (a few bytes, unless the upstream adds chunk extensions).
const streamReadBuffer = 1 << 10

// maxStreamHeaderBytes bounds a stream's response headers when base sets
// no MaxResponseHeaderBytes (http.Transport's own default).
const maxStreamHeaderBytes = 10 << 20

func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var res *http.Response
	var err error
	switch {
	case !t.direct(req):
		// http.Transport undoes only the gzip it asked for itself, not one
		// the caller asked for (stdio → HTTP does, streamable.newRequest).
		res, err = t.base.RoundTrip(req)
	case standing(req):
		res, err = t.stream(req)
	default:
		res, err = t.calls.roundTrip(req)
	}
	if err == nil {
		identity(res)
	}
	return res, err
}

// CloseIdleConnections closes the idle kept-alive connections (streams
// have none).
func (t *Transport) CloseIdleConnections() {
	t.calls.closeIdle(false)
	t.base.CloseIdleConnections()
}

// Close closes the idle connections, and those in use once their calls end.
func (t *Transport) Close() {
	t.calls.closeIdle(true)
	t.base.CloseIdleConnections()
}

// direct reports whether req goes to a cleartext upstream reached
// directly, with no protocol upgrade.
func (t *Transport) direct(req *http.Request) bool {
	if req.URL.Scheme != "http" || req.Header.Get("Upgrade") != "" {
		return false
	}
	if t.base.Proxy != nil {
		if u, err := t.base.Proxy(req); u != nil || err != nil {
			return false
		}
	}
	return true
}

// standing reports whether req opens a standing event stream.
func standing(req *http.Request) bool {
	return req.Method == http.MethodGet && (req.Body == nil || req.Body == http.NoBody) &&
		acceptsEventStream(req.Header)
}

// acceptsEventStream reports whether h's Accept names text/event-stream
// (with parameters or not, as the tap reads it).
func acceptsEventStream(h http.Header) bool {
	for _, v := range h["Accept"] {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
				return true
			}
		}
	}
	return false
}

// stream dials a connection for req, writes the request and reads the
// response headers (bounded by base.ResponseHeaderTimeout, as base bounds
// them); the body reads straight from the connection, which its Close
// closes, as does the end of req's context.
func (t *Transport) stream(req *http.Request) (*http.Response, error) {
	conn, err := t.calls.dial(req.Context(), "tcp", hostPort(req))
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(nil, streamReadBuffer)
	res, stop, err := t.calls.send(conn, req, br)
	if err != nil {
		return nil, err
	}
	res.Body = &connBody{body: res.Body, br: br, conn: &poolConn{Conn: conn}, ctx: req.Context(), stop: stop, own: true}
	return res, nil
}

// readFinalResponse reads the response to req, skipping informational
// (1xx) ones as http.Transport does; 101 is refused (req asked for no
// protocol switch).
func readFinalResponse(br *bufio.Reader, req *http.Request) (*http.Response, error) {
	for range 5 {
		res, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, err
		}
		switch {
		case res.StatusCode < 100:
			return nil, fmt.Errorf("upstream sent status %d", res.StatusCode)
		case res.StatusCode == http.StatusSwitchingProtocols:
			return nil, errors.New("upstream switched protocols unasked")
		case res.StatusCode >= 200:
			return res, nil
		}
	}
	return nil, errors.New("upstream sent too many informational responses")
}

var errHeaderTooLarge = errors.New("upstream response headers too large")

// headerLimit bounds what the response headers may read: n bytes, or no
// bound once n < 0. It tells wait (if any) of every read of the body.
type headerLimit struct {
	r    io.Reader
	n    int64
	wait Waiter
}

func (l *headerLimit) Read(p []byte) (int, error) {
	if l.n < 0 {
		if l.wait == nil {
			return l.r.Read(p)
		}
		l.wait.Reading(true)
		n, err := l.r.Read(p)
		l.wait.Reading(false)
		return n, err
	}
	if l.n == 0 {
		return 0, errHeaderTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// Route names the way t sends req: "stream" (a connection of its own),
// "pooled" (a kept-alive connection of its pool) or "transport" (the
// http.Transport under it).
func (t *Transport) Route(req *http.Request) string {
	switch {
	case !t.direct(req):
		return "transport"
	case standing(req):
		return "stream"
	default:
		return "pooled"
	}
}

// OwnConnection reports whether a response body reads from a connection
// of its own.
func OwnConnection(body io.ReadCloser) bool {
	b, ok := body.(*connBody)
	return ok && b.own
}

// Pooled reports whether a response body reads from a kept-alive
// connection of the client's pool.
func Pooled(body io.ReadCloser) bool {
	b, ok := body.(*connBody)
	return ok && !b.own
}
