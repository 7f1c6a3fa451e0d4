package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// streamTransport is the HTTP → HTTP proxy's client to the upstream. Every
// open session holds a standing GET event stream, so that request gets a
// connection of its own, written and read on the caller's goroutine: no
// http.Transport persistConn with its reader and writer goroutines and
// buffers (≈ 20 KB a session, see docs/proxy.md "Measured"). Everything
// else — POSTs, DELETEs, TLS upstreams (where http.Transport multiplexes
// HTTP/2 anyway), upstreams reached through an HTTP proxy from the
// environment — goes to base, as does a stream it would not handle the
// same way.
type streamTransport struct {
	base *http.Transport
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
	if !t.standing(req) {
		return t.base.RoundTrip(req)
	}
	return t.stream(req)
}

// CloseIdleConnections closes base's idle connections (streams have none).
func (t *streamTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// standing reports whether req is a standing event stream to a cleartext
// upstream reached directly.
func (t *streamTransport) standing(req *http.Request) bool {
	if req.Method != http.MethodGet || req.URL.Scheme != "http" ||
		(req.Body != nil && req.Body != http.NoBody) ||
		!acceptsEventStream(req.Header) ||
		req.Header.Get("Upgrade") != "" {
		return false
	}
	if t.base.Proxy != nil {
		if u, err := t.base.Proxy(req); u != nil || err != nil {
			return false
		}
	}
	return true
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
	ctx := req.Context()
	dial := t.base.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = "80"
	}
	conn, err := dial(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(err error) (*http.Response, error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err() // the conn was closed because the caller left
		}
		return nil, err
	}
	if d := t.base.ResponseHeaderTimeout; d > 0 {
		_ = conn.SetDeadline(time.Now().Add(d))
	}
	w := bufio.NewWriterSize(conn, 1<<10)
	if err := req.Write(w); err != nil {
		return fail(err)
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	limit := t.base.MaxResponseHeaderBytes
	if limit <= 0 {
		limit = maxStreamHeaderBytes
	}
	lr := &headerLimit{r: conn, n: limit + streamReadBuffer}
	br := bufio.NewReaderSize(lr, streamReadBuffer)
	res, err := readFinalResponse(br, req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			err = fmt.Errorf("no response headers within %s: %w", t.base.ResponseHeaderTimeout, err)
		}
		return fail(err)
	}
	_ = conn.SetDeadline(time.Time{})
	lr.n = -1
	res.Body = &streamBody{body: res.Body, conn: conn, ctx: ctx, stop: stop}
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
// bound once n < 0.
type headerLimit struct {
	r io.Reader
	n int64
}

func (l *headerLimit) Read(p []byte) (int, error) {
	if l.n < 0 {
		return l.r.Read(p)
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

// streamBody is a stream's body: reads go to the response's own body
// (which undoes the chunking) over the connection; Close closes the
// connection, never reading what the upstream has yet to send.
type streamBody struct {
	body io.Reader
	conn net.Conn
	ctx  context.Context
	stop func() bool
	once sync.Once
}

func (b *streamBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err != nil && err != io.EOF && b.ctx.Err() != nil {
		err = b.ctx.Err() // the caller left: the conn was closed for it
	}
	return n, err
}

func (b *streamBody) Close() error {
	b.once.Do(func() {
		b.stop()
		b.conn.Close()
	})
	return nil
}
