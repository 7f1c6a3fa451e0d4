package h1client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/proxy/internal/streamhttp"
)

// connPool is the HTTP/1.1 client for the calls (POST, DELETE) to a
// cleartext upstream reached directly. A call is written and
// its answer read on the caller's goroutine, over a kept-alive connection:
// http.Transport hands every exchange to a writer and a reader goroutine of
// the connection's and back, three wake-ups a call that a proxy on a small
// machine pays in latency (docs/proxy.md "Measured"). The wire format is
// net/http's own (Request.Write, http.ReadResponse); this adds the pool.
type connPool struct {
	// base is the http.Transport the proxy would use otherwise: its
	// dialer, timeouts and limits hold here too.
	base *http.Transport

	mu     sync.Mutex
	idle   map[string][]*poolConn // by host:port, most recently used last
	closed bool
}

// poolConn is a kept-alive connection. It holds no buffers while idle: a
// call takes a reader and a writer from the pools and gives them back.
type poolConn struct {
	net.Conn
	addr   string
	reused bool
	timer  *time.Timer // closes it once idle for idleTimeout
	idleAt time.Time
}

var (
	connReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}
	connWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4<<10) }}
)

// roundTrip sends req over a pooled connection (or a new one) and reads
// the response headers; the body reads from the connection, which goes
// back to the pool when the body has been read to its end.
func (p *connPool) roundTrip(req *http.Request) (*http.Response, error) {
	addr := hostPort(req)
	for attempt := 0; ; attempt++ {
		c, err := p.get(req.Context(), addr)
		if err != nil {
			return nil, err
		}
		res, err := p.exchange(c, req)
		if err == nil {
			return res, nil
		}
		// A kept-alive connection the upstream closed while it sat idle
		// fails the write: the request never reached the server, so it
		// goes once more over a new connection if its body can be replayed.
		var we *writeError
		if attempt > 0 || !c.reused || !errors.As(err, &we) || req.Context().Err() != nil {
			return nil, err
		}
		if req = streamhttp.Resend(req); req == nil {
			return nil, err
		}
	}
}

// writeError is a failure to send the request.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// exchange writes req on c and reads the response headers.
func (p *connPool) exchange(c *poolConn, req *http.Request) (*http.Response, error) {
	br := connReaders.Get().(*bufio.Reader)
	res, stop, err := p.send(c, req, br)
	if err != nil {
		br.Reset(nil)
		connReaders.Put(br)
		return nil, err
	}
	keep := !res.Close && !req.Close
	if res.Body == http.NoBody { // 202, 204, a HEAD: over already, read or not
		b := &connBody{br: br, conn: c, pool: p, stop: stop}
		b.release(keep && br.Buffered() == 0, io.EOF) // bytes after it: out of step
		return res, nil
	}
	res.Body = &connBody{body: res.Body, br: br, conn: c, pool: p, ctx: req.Context(), stop: stop, keep: keep}
	return res, nil
}

// send writes req on conn and reads the final response's headers through
// br, bounded by base's header timeout and size limit; the body then reads
// through br. The end of req's context closes conn (stop unregisters
// that); a failure closes it too.
func (p *connPool) send(conn net.Conn, req *http.Request, br *bufio.Reader) (*http.Response, func() bool, error) {
	ctx := req.Context()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(err error) (*http.Response, func() bool, error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err() // the conn was closed because the caller left
		}
		return nil, nil, err
	}
	w := connWriters.Get().(*bufio.Writer)
	w.Reset(conn)
	err := req.Write(w)
	if err == nil {
		err = w.Flush()
	}
	w.Reset(nil)
	connWriters.Put(w)
	if err != nil {
		return fail(&writeError{err})
	}
	if tr := httptrace.ContextClientTrace(ctx); tr != nil && tr.WroteRequest != nil {
		tr.WroteRequest(httptrace.WroteRequestInfo{}) // as http.Transport tells it
	}
	timeout := p.base.ResponseHeaderTimeout
	if timeout > 0 {
		_ = conn.SetReadDeadline(time.Now().Add(timeout))
	}
	limit := &headerLimit{r: conn, n: p.maxHeader() + int64(br.Size())}
	if w, ok := ctx.Value(waitKey{}).(Waiter); ok {
		w.Attach() // the forwarder's held bytes wait on this connection's reads
		limit.wait = w
	}
	br.Reset(limit)
	res, err := readFinalResponse(br, req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			err = fmt.Errorf("no response headers within %s: %w", timeout, err)
		}
		return fail(err)
	}
	if timeout > 0 {
		_ = conn.SetReadDeadline(time.Time{})
	}
	limit.n = -1
	return res, stop, nil
}

// waitKey is the context key of a request's Waiter.
type waitKey struct{}

// Waiter is told of the reads of a response body from the upstream: a
// writer that holds bytes for what follows them waits on those reads
// (the HTTP → HTTP forwarder's heldWriter).
type Waiter interface {
	Attach()         // the connection will call Reading around each read
	Reading(on bool) // a read from the upstream starts (true) or ends
}

// WithWaiter is ctx with w told of the reads of the response to a request
// made with it, where the connection is the client's own.
func WithWaiter(ctx context.Context, w Waiter) context.Context {
	return context.WithValue(ctx, waitKey{}, w)
}

// dial connects to addr with base's dialer.
func (p *connPool) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if p.base.DialContext != nil {
		return p.base.DialContext(ctx, network, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// maxHeader bounds response headers: base's bound, or http.Transport's
// default.
func (p *connPool) maxHeader() int64 {
	if n := p.base.MaxResponseHeaderBytes; n > 0 {
		return n
	}
	return maxStreamHeaderBytes
}

// maxIdle bounds the idle connections to one host: base's bound, or
// http.Transport's default when it sets none.
func (p *connPool) maxIdle() int {
	if n := p.base.MaxIdleConnsPerHost; n > 0 {
		return n
	}
	return http.DefaultMaxIdleConnsPerHost
}

// idleTimeout is base's, or DefaultTransport's if base sets none.
func (p *connPool) idleTimeout() time.Duration {
	if d := p.base.IdleConnTimeout; d > 0 {
		return d
	}
	return 90 * time.Second
}

// get returns an idle connection to addr that is still open, or dials one.
func (p *connPool) get(ctx context.Context, addr string) (*poolConn, error) {
	p.mu.Lock()
	for list := p.idle[addr]; len(list) > 0; list = p.idle[addr] {
		c := list[len(list)-1]
		p.idle[addr] = list[:len(list)-1]
		p.mu.Unlock()
		c.timer.Stop()
		if time.Since(c.idleAt) < p.idleTimeout() && open(c.Conn) {
			c.reused = true
			return c, nil
		}
		c.Conn.Close()
		p.mu.Lock()
	}
	p.mu.Unlock()
	conn, err := p.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &poolConn{Conn: conn, addr: addr}, nil
}

// put keeps c for the next call, unless the pool is full or closed.
func (p *connPool) put(c *poolConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle[c.addr]) >= p.maxIdle() {
		c.Conn.Close()
		return
	}
	if p.idle == nil {
		p.idle = make(map[string][]*poolConn)
	}
	c.idleAt = time.Now()
	if c.timer == nil {
		c.timer = time.AfterFunc(p.idleTimeout(), func() { p.expire(c) })
	} else {
		c.timer.Reset(p.idleTimeout())
	}
	p.idle[c.addr] = append(p.idle[c.addr], c)
}

// expire closes c if it is still idle.
func (p *connPool) expire(c *poolConn) {
	p.mu.Lock()
	list := p.idle[c.addr]
	for i, x := range list {
		if x == c {
			p.idle[c.addr] = append(list[:i:i], list[i+1:]...)
			p.mu.Unlock()
			c.Conn.Close()
			return
		}
	}
	p.mu.Unlock()
}

// closeIdle closes the idle connections; with final, connections given back
// later are closed too.
func (p *connPool) closeIdle(final bool) {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.closed = p.closed || final
	p.mu.Unlock()
	for _, list := range idle {
		for _, c := range list {
			c.timer.Stop()
			c.Conn.Close()
		}
	}
}

// hostPort is req's upstream address, with the scheme's default port.
func hostPort(req *http.Request) string {
	port := req.URL.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(req.URL.Hostname(), port)
}

// connBody is a response body read straight from its connection. A call's
// connection goes back to the pool once the body has been read to its end
// (and nothing more came); a standing stream's (own) is never reused. Either
// is closed if the body is closed before its end, a read fails, or the
// caller's context ends.
type connBody struct {
	body io.ReadCloser
	br   *bufio.Reader
	conn *poolConn
	pool *connPool
	ctx  context.Context
	stop func() bool
	keep bool // the exchange allows the connection to be reused
	own  bool // a standing stream: its connection and reader are its own

	mu   sync.Mutex // held by Read
	done bool       // the connection was given up
	err  error      // what reads return once it was
}

func (b *connBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return 0, b.err
	}
	n, err := b.body.Read(p)
	switch {
	case err == io.EOF:
		b.release(b.keep && b.br.Buffered() == 0, err)
	case err != nil:
		if b.ctx.Err() != nil {
			err = b.ctx.Err() // the caller left: the read was cut for it
		}
		b.release(false, err)
	}
	return n, err
}

// Close gives the connection up, unread. A Read in flight on another
// goroutine is cut by closing the connection, and releases it itself.
func (b *connBody) Close() error {
	if !b.mu.TryLock() {
		b.conn.Close()
		return nil
	}
	defer b.mu.Unlock()
	if !b.done {
		b.release(false, http.ErrBodyReadAfterClose)
	}
	return nil
}

// release gives up the body's connection: back to the pool if reuse is
// true and the caller's context did not cut it, else closed. Later reads
// return err.
func (b *connBody) release(reuse bool, err error) {
	b.done, b.err = true, err
	if !b.own {
		b.br.Reset(nil)
		connReaders.Put(b.br)
	}
	if b.stop() && reuse {
		b.pool.put(b.conn)
		return
	}
	b.conn.Close()
}
