package httpproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// streamTransport is the HTTP → HTTP proxy's client to the upstream. For
// a cleartext upstream reached directly, nothing goes through an
// http.Transport's persistConn, with its reader and writer goroutines and
// buffers: every open session holds a standing GET event stream, which
// gets a connection of its own, written and read on the caller's goroutine
// (≈ 20 KB a session less, see docs/proxy.md "Measured"); the calls go
// over calls, kept-alive connections also used on the caller's goroutine.
// TLS upstreams (where http.Transport multiplexes HTTP/2), upstreams
// reached through an HTTP proxy from the environment and protocol
// upgrades go to base.
type streamTransport struct {
	base  *http.Transport
	calls *connPool
}

// newStreamTransport is the upstream client with base's dialer and bounds.
func newStreamTransport(base *http.Transport) *streamTransport {
	return &streamTransport{base: base, calls: &connPool{base: base}}
}

// streamReadBuffer is a stream connection's read buffer, held as long as
// the stream is open: small, since reads as large as it bypass it. Headers
// are read through it (longer lines too); a chunk-size line must fit in it
// (a few bytes, unless the upstream adds chunk extensions).
const streamReadBuffer = 1 << 10

// maxStreamHeaderBytes bounds a stream's response headers when base sets
// no MaxResponseHeaderBytes (http.Transport's own default).
const maxStreamHeaderBytes = 10 << 20

func (t *streamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var res *http.Response
	var err error
	switch {
	case !t.direct(req):
		return t.base.RoundTrip(req)
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
func (t *streamTransport) CloseIdleConnections() {
	t.calls.closeIdle(false)
	t.base.CloseIdleConnections()
}

// Close closes the idle connections, and those in use once their calls end.
func (t *streamTransport) Close() {
	t.calls.closeIdle(true)
	t.base.CloseIdleConnections()
}

// direct reports whether req goes to a cleartext upstream reached
// directly, with no protocol upgrade.
func (t *streamTransport) direct(req *http.Request) bool {
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
func (t *streamTransport) stream(req *http.Request) (*http.Response, error) {
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
	wait waiter
}

func (l *headerLimit) Read(p []byte) (int, error) {
	if l.n < 0 {
		if l.wait == nil {
			return l.r.Read(p)
		}
		l.wait.reading(true)
		n, err := l.r.Read(p)
		l.wait.reading(false)
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
