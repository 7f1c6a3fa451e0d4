package proxy_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/proxy"
)

// connUpstream is an HTTP server that echoes request bodies and reports
// the connections it opens and sees closed.
type connUpstream struct {
	*httptest.Server
	opened, closed chan net.Conn
}

func newConnUpstream(t *testing.T, h http.HandlerFunc, idle time.Duration) *connUpstream {
	t.Helper()
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body) // HTTP/1.1: all of it before answering
			if r.URL.Path == "/accepted" {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		}
	}
	u := &connUpstream{opened: make(chan net.Conn, 64), closed: make(chan net.Conn, 64)}
	u.Server = httptest.NewUnstartedServer(h)
	u.Config.IdleTimeout = idle
	u.Config.ConnState = func(c net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			u.opened <- c
		case http.StateClosed, http.StateHijacked:
			u.closed <- c
		}
	}
	u.Start()
	t.Cleanup(u.Close)
	return u
}

// waitClosed waits for the server to see a connection closed.
func (u *connUpstream) waitClosed(t *testing.T) {
	t.Helper()
	receive(t, u.closed, "no upstream connection was closed")
}

// post sends body over rt, the proxy's upstream client, and returns the
// answer's body, read to its end; the answer must come over the pool.
func post(t *testing.T, rt http.RoundTripper, url, body string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if !proxy.Pooled(res.Body) {
		t.Error("the call did not go over the pool")
	}
	got, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

// TestPoolKeepsConnections: calls to a cleartext upstream go over the
// pool's kept-alive connections, one after another over the same one.
func TestPoolKeepsConnections(t *testing.T) {
	up := newConnUpstream(t, nil, 0)
	st, _ := newStreamTransport(t, 0)
	for i, body := range []string{`{"id":1}`, `{"id":2}`, strings.Repeat("x", 100<<10)} {
		if got := post(t, st, up.URL, body); got != body {
			t.Fatalf("call %d: %d bytes back, want %d", i, len(got), len(body))
		}
	}
	// An answer with no body (202 to a notification) leaves the connection
	// for the next call even when nobody reads it.
	req, _ := http.NewRequest(http.MethodPost, up.URL+"/accepted", strings.NewReader("{}"))
	res, err := st.RoundTrip(req)
	if err != nil || res.StatusCode != http.StatusAccepted {
		t.Fatalf("%v %v", res, err)
	}
	res.Body.Close()
	post(t, st, up.URL, "after")
	if n := len(up.opened); n != 1 {
		t.Errorf("%d connections for five calls in a row, want 1", n)
	}
}

// TestPoolUpstreamClosedIdle: a kept-alive connection the upstream closed
// while it was idle is not used again: the next call goes over a new one
// and succeeds.
func TestPoolUpstreamClosedIdle(t *testing.T) {
	up := newConnUpstream(t, nil, 20*time.Millisecond)
	st, _ := newStreamTransport(t, 0)
	post(t, st, up.URL, "one")
	up.waitClosed(t) // the server's idle timeout
	if got := post(t, st, up.URL, "two"); got != "two" {
		t.Fatalf("%q after the upstream closed the idle connection", got)
	}
	if n := len(up.opened); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// flakyConn fails its writes once broken is closed (a connection the
// upstream dropped that the pool could not see dropped, as on systems where
// it cannot peek at an idle connection).
type flakyConn struct {
	net.Conn
	broken chan struct{}
}

func (c *flakyConn) Write(p []byte) (int, error) {
	select {
	case <-c.broken:
		return 0, errors.New("connection reset by peer")
	default:
		return c.Conn.Write(p)
	}
}

// TestPoolResendsAfterFailedWrite: a call whose write fails on a kept-alive
// connection never reached the upstream, so it is sent again over a new
// connection when its body can be replayed; when it cannot, the error is
// the caller's.
func TestPoolResendsAfterFailedWrite(t *testing.T) {
	up := newConnUpstream(t, nil, 0)
	st, base := newStreamTransport(t, 0)
	var mu sync.Mutex
	var conns []*flakyConn
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		fc := &flakyConn{Conn: c, broken: make(chan struct{})}
		mu.Lock()
		conns = append(conns, fc)
		mu.Unlock()
		return fc, nil
	}
	breakAll := func() {
		mu.Lock()
		for _, c := range conns {
			select {
			case <-c.broken:
			default:
				close(c.broken)
			}
		}
		mu.Unlock()
	}
	post(t, st, up.URL, "one")
	breakAll()
	if got := post(t, st, up.URL, "two"); got != "two" {
		t.Fatalf("%q, want the call sent again", got)
	}

	breakAll()
	req, _ := http.NewRequest(http.MethodPost, up.URL, io.NopCloser(strings.NewReader("three")))
	req.ContentLength = 5 // a body that cannot be read twice
	if res, err := st.RoundTrip(req); err == nil {
		res.Body.Close()
		t.Fatal("a call whose body cannot be replayed was sent again")
	}
}

// TestPoolConnectionNotReused: a connection is given back to the pool only
// when its answer was read to its end and the exchange allows reuse; else
// the upstream sees it closed.
func TestPoolConnectionNotReused(t *testing.T) {
	t.Run("body closed early", func(t *testing.T) {
		up := newConnUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, strings.Repeat("x", 64<<10))
		}, 0)
		st, _ := newStreamTransport(t, 0)
		req, _ := http.NewRequest(http.MethodPost, up.URL, strings.NewReader("{}"))
		res, err := st.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := res.Body.Read(make([]byte, 10)); err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		up.waitClosed(t)
		if _, err := res.Body.Read(make([]byte, 10)); !errors.Is(err, http.ErrBodyReadAfterClose) {
			t.Errorf("read after close: %v", err)
		}
	})
	t.Run("connection close", func(t *testing.T) {
		up := newRawUpstream(t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
		st, _ := newStreamTransport(t, 0)
		if got := post(t, st, up.url, "{}"); got != "ok" {
			t.Fatalf("%q", got)
		}
		up.waitClosed(t)
	})
	t.Run("more after a bodiless answer", func(t *testing.T) {
		// Bytes after an answer without a body (an upstream answering twice)
		// put the connection out of step: the next call must not read them.
		up := newRawUpstream(t, "HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
		st, _ := newStreamTransport(t, 0)
		for range 2 {
			req, _ := http.NewRequest(http.MethodPost, up.url, strings.NewReader("{}"))
			res, err := st.RoundTrip(req)
			if err != nil || res.StatusCode != http.StatusNoContent {
				t.Fatalf("%v %v, want the 204", res, err)
			}
			res.Body.Close()
			up.waitClosed(t)
		}
	})
	t.Run("caller gone", func(t *testing.T) {
		up := newRawUpstream(t, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n: ok\n\n\r\n")
		ctx, cancel := context.WithCancel(context.Background())
		st, _ := newStreamTransport(t, 0)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, up.url, strings.NewReader("{}"))
		res, err := st.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if _, err := io.ReadFull(res.Body, make([]byte, 6)); err != nil {
			t.Fatal(err)
		}
		read := make(chan error, 1)
		go func() { _, err := res.Body.Read(make([]byte, 10)); read <- err }() // waits for more
		cancel()
		if err := <-read; !errors.Is(err, context.Canceled) {
			t.Errorf("read after the caller left: %v", err)
		}
		up.waitClosed(t)
	})
	t.Run("no headers in time", func(t *testing.T) {
		up := newRawUpstream(t, "")
		st, _ := newStreamTransport(t, 50*time.Millisecond)
		req, _ := http.NewRequest(http.MethodPost, up.url, strings.NewReader("{}"))
		if _, err := st.RoundTrip(req); err == nil || !strings.Contains(err.Error(), "no response headers within 50ms") {
			t.Errorf("%v, want a header timeout", err)
		}
		up.waitClosed(t)
	})
}

// TestPoolBounded: idle connections beyond MaxIdleConnsPerHost are closed,
// and an idle connection is closed after IdleConnTimeout.
func TestPoolBounded(t *testing.T) {
	up := newConnUpstream(t, nil, 0)
	st, base := newStreamTransport(t, 0)
	base.MaxIdleConnsPerHost = 1
	var bodies []io.ReadCloser
	for range 2 { // two calls at once: two connections
		req, _ := http.NewRequest(http.MethodPost, up.URL, strings.NewReader("{}"))
		res, err := st.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, res.Body)
	}
	for _, b := range bodies {
		if _, err := io.ReadAll(b); err != nil {
			t.Fatal(err)
		}
	}
	up.waitClosed(t) // the second could not be kept

	base.IdleConnTimeout = 20 * time.Millisecond
	post(t, st, up.URL, "{}") // the kept one, idle again with the new timeout
	up.waitClosed(t)
	if n := len(up.opened); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// TestPoolClosed: once the proxy closes its upstream client, a connection
// in use is closed when its call ends instead of being kept.
func TestPoolClosed(t *testing.T) {
	up := newConnUpstream(t, nil, 0)
	fw, closeFw := proxy.PlainForwarder(up.URL)
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}"))
	closeFw()
	fw.ServeHTTP(httptest.NewRecorder(), req)
	up.waitClosed(t)
}
