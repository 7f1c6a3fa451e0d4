package proxy_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/proxy"
)

// rawUpstream is an HTTP/1.1 server that answers every request with the
// same bytes and then waits for the client to close the connection,
// which it reports on closed. An answer saying "Connection: close" ends
// with the server's half of the connection closed.
type rawUpstream struct {
	url      string
	requests chan struct{} // a request was read
	closed   chan struct{}

	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func newRawUpstream(t *testing.T, answer string) *rawUpstream {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &rawUpstream{url: "http://" + l.Addr().String() + "/mcp", requests: make(chan struct{}, 16), closed: make(chan struct{}, 16)}
	u.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u.mu.Lock()
			u.conns = append(u.conns, c)
			u.mu.Unlock()
			u.wg.Go(func() {
				br := bufio.NewReader(c)
				if _, err := http.ReadRequest(br); err != nil {
					return
				}
				u.requests <- struct{}{}
				io.WriteString(c, answer)
				if strings.Contains(answer, "Connection: close") {
					_ = c.(*net.TCPConn).CloseWrite()
				}
				_, _ = io.Copy(io.Discard, br) // until the client closes
				u.closed <- struct{}{}
			})
		}
	})
	t.Cleanup(func() {
		l.Close()
		u.mu.Lock()
		for _, c := range u.conns {
			c.Close()
		}
		u.mu.Unlock()
		u.wg.Wait()
	})
	return u
}

// waitClosed waits for the client to close an upstream connection.
func (u *rawUpstream) waitClosed(t *testing.T) {
	t.Helper()
	receive(t, u.closed, "the connection to the upstream was not closed")
}

// newStreamTransport is the proxy's upstream client as NewHandler builds
// it, with the http.Transport under it.
func newStreamTransport(t *testing.T, timeout time.Duration) (http.RoundTripper, *http.Transport) {
	rt, base := proxy.StreamTransport(proxy.Config{UpstreamTimeout: timeout})
	t.Cleanup(rt.(interface{ CloseIdleConnections() }).CloseIdleConnections)
	return rt, base
}

func streamRequest(ctx context.Context, t *testing.T, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", "s1")
	return req
}

// persistConns counts http.Transport connections (their read loops) in
// this process.
func persistConns() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "net/http.(*persistConn).readLoop(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestStreamEventByEvent: a standing stream's events reach the caller one
// by one while the upstream holds the stream open, its trailers after the
// end; the streams hold no http.Transport connection (no goroutine of
// theirs), and the upstream gets the request as it was sent.
func TestStreamEventByEvent(t *testing.T) {
	next := make(chan struct{})
	got := make(chan *http.Request, 8)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Trailer", "X-Events")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		if r.URL.RawQuery == "" {
			<-r.Context().Done() // a quiet stream
			return
		}
		writeEvents(w, r, next, 3)
		w.Header().Set("X-Events", "3")
	}))
	defer up.Close()
	st, _ := newStreamTransport(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a stalled stream fails
	defer cancel()

	before := persistConns()
	for range 4 { // streams the upstream keeps quiet
		res, err := st.RoundTrip(streamRequest(ctx, t, up.URL+"/mcp"))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
	}
	res, err := st.RoundTrip(streamRequest(ctx, t, up.URL+"/mcp?x=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if n := persistConns() - before; n > 0 {
		t.Errorf("%d http.Transport connections for 5 streams, want none", n)
	}
	if !proxy.OwnConnection(res.Body) || res.StatusCode != http.StatusOK {
		t.Fatalf("%d %T", res.StatusCode, res.Body)
	}
	var r *http.Request
	for range 5 {
		r = <-got
	}
	if r.URL.RequestURI() != "/mcp?x=1" || r.Header.Get("Mcp-Session-Id") != "s1" || r.Host != strings.TrimPrefix(up.URL, "http://") {
		t.Errorf("upstream got %s %s %v", r.Host, r.URL, r.Header)
	}
	br := bufio.NewReader(res.Body)
	readEvents(ctx, t, br, next, 3)
	if rest, err := io.ReadAll(br); err != nil || len(rest) > 0 {
		t.Errorf("after the last event: %q, %v", rest, err)
	}
	if res.Trailer.Get("X-Events") != "3" {
		t.Errorf("trailers %v", res.Trailer)
	}
}

// TestStreamBodies: whatever the upstream answers a stream request with —
// a chunked stream, a body of known length, a body ended by closing the
// connection, an error status, no body, informational responses first —
// is read through, and closing the body closes the connection.
func TestStreamBodies(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		status       int
		body         string
	}{
		{"chunked", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"a\r\ndata: {}\n\n\r\n0\r\n\r\n", 200, "data: {}\n\n"},
		{"length", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 10\r\n\r\ndata: {}\n\n", 200, "data: {}\n\n"},
		{"until close", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\ndata: {}\n\n", 200, "data: {}\n\n"},
		{"405", "HTTP/1.1 405 Method Not Allowed\r\nAllow: POST\r\nContent-Length: 18\r\n\r\nmethod not allowed", 405, "method not allowed"},
		{"404", "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 17\r\n\r\nsession not found", 404, "session not found"},
		{"409 chunked", "HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n8\r\nconflict\r\n0\r\n\r\n", 409, "conflict"},
		{"204", "HTTP/1.1 204 No Content\r\n\r\n", 204, ""},
		{"1xx first", "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n" +
			"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newRawUpstream(t, tc.answer)
			st, _ := newStreamTransport(t, 0)
			res, err := st.RoundTrip(streamRequest(context.Background(), t, up.url))
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(res.Body)
			if err != nil || res.StatusCode != tc.status || string(b) != tc.body {
				t.Errorf("%d %q %v, want %d %q", res.StatusCode, b, err, tc.status, tc.body)
			}
			res.Body.Close()
			up.waitClosed(t)
		})
	}
}

// TestStreamRefusesBadResponses: a response the proxy cannot forward is
// an error (the client's 502), and the connection is closed.
func TestStreamRefusesBadResponses(t *testing.T) {
	for _, tc := range []struct{ name, answer, want string }{
		{"garbage", "SSH-2.0-OpenSSH\r\n\r\n", "malformed HTTP"},
		{"headers too large", "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n", "headers too large"},
		{"unasked switch", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n", "switched protocols"},
		{"endless 1xx", strings.Repeat("HTTP/1.1 103 Early Hints\r\n\r\n", 6), "informational"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newRawUpstream(t, tc.answer)
			st, base := newStreamTransport(t, 0)
			base.MaxResponseHeaderBytes = 1 << 10
			res, err := st.RoundTrip(streamRequest(context.Background(), t, up.url))
			if err == nil {
				res.Body.Close()
				t.Fatalf("%d: no error", res.StatusCode)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want %q", err, tc.want)
			}
			up.waitClosed(t)
		})
	}
}

// TestStreamCallerGone: a caller that leaves — while the stream waits for
// an event, or before the headers came — ends the request: the read or
// the round trip returns the context's error and the upstream sees its
// connection closed, even before the body is closed.
func TestStreamCallerGone(t *testing.T) {
	t.Run("streaming", func(t *testing.T) {
		up := newRawUpstream(t, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n: ok\n\n\r\n")
		ctx, cancel := context.WithCancel(context.Background())
		st, _ := newStreamTransport(t, 0)
		res, err := st.RoundTrip(streamRequest(ctx, t, up.url))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		br := bufio.NewReader(res.Body)
		for _, want := range []string{": ok\n", "\n"} {
			if line, err := br.ReadString('\n'); line != want {
				t.Fatalf("%q %v, want %q", line, err, want)
			}
		}
		read := make(chan error, 1)
		go func() { _, err := br.ReadString('\n'); read <- err }() // waits for an event that never comes
		cancel()
		up.waitClosed(t)
		if err := <-read; !errors.Is(err, context.Canceled) {
			t.Errorf("read after the caller left: %v", err)
		}
	})
	t.Run("before headers", func(t *testing.T) {
		up := newRawUpstream(t, "") // never answers
		ctx, cancel := context.WithCancel(context.Background())
		st, _ := newStreamTransport(t, 0)
		done := make(chan error, 1)
		go func() {
			res, err := st.RoundTrip(streamRequest(ctx, t, up.url))
			if err == nil {
				res.Body.Close()
			}
			done <- err
		}()
		<-up.requests
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("round trip after the caller left: %v", err)
		}
		up.waitClosed(t)
	})
}

// TestStreamHeaderTimeout: an upstream that accepts a stream and never
// answers is given up after the upstream timeout, as http.Transport's
// ResponseHeaderTimeout does for other requests; once headers came, a
// quiet stream is not timed out.
func TestStreamHeaderTimeout(t *testing.T) {
	up := newRawUpstream(t, "")
	st, _ := newStreamTransport(t, 50*time.Millisecond)
	_, err := st.RoundTrip(streamRequest(context.Background(), t, up.url))
	if err == nil || !strings.Contains(err.Error(), "no response headers within 50ms") {
		t.Errorf("%v, want a header timeout", err)
	}
	up.waitClosed(t)

	quiet := newRawUpstream(t, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
	ctx, cancel := context.WithCancel(context.Background())
	st, _ = newStreamTransport(t, time.Millisecond)
	res, err := st.RoundTrip(streamRequest(ctx, t, quiet.url))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	read := make(chan error, 1)
	go func() { _, err := res.Body.Read(make([]byte, 10)); read <- err }()
	select {
	case err := <-read:
		t.Fatalf("a quiet stream ended: %v", err)
	case <-time.After(100 * time.Millisecond): // 100 times the timeout: no deadline is left on the conn
	}
	cancel()
	if err := <-read; !errors.Is(err, context.Canceled) {
		t.Errorf("%v", err)
	}
}

// TestUpstreamRoutes: a body-less GET for an event stream to a cleartext
// upstream reached directly gets a connection of its own; other requests
// to it go over the pool's kept-alive connections; TLS, an HTTP proxy
// from the environment and protocol upgrades go to http.Transport.
func TestUpstreamRoutes(t *testing.T) {
	st, _ := newStreamTransport(t, 0)
	envProxy, base := newStreamTransport(t, 0)
	base.Proxy = func(*http.Request) (*url.URL, error) { return url.Parse("http://proxy.example:3128") }
	for _, tc := range []struct {
		name   string
		st     http.RoundTripper
		change func(*http.Request)
		want   string
	}{
		{"stream", st, func(*http.Request) {}, "stream"},
		{"among other types", st, func(r *http.Request) { r.Header.Set("Accept", "application/json, text/event-stream") }, "stream"},
		{"with a parameter", st, func(r *http.Request) { r.Header.Set("Accept", "application/json, Text/Event-Stream;q=0.9") }, "stream"},
		{"a longer type", st, func(r *http.Request) { r.Header.Set("Accept", "text/event-streams") }, "pooled"},
		{"POST", st, func(r *http.Request) { r.Method = http.MethodPost }, "pooled"},
		{"DELETE", st, func(r *http.Request) { r.Method = http.MethodDelete }, "pooled"},
		{"not a stream", st, func(r *http.Request) { r.Header.Set("Accept", "application/json") }, "pooled"},
		{"with a body", st, func(r *http.Request) { r.Body = io.NopCloser(strings.NewReader("x")) }, "pooled"},
		{"TLS", st, func(r *http.Request) { r.URL.Scheme = "https" }, "transport"},
		{"upgrade", st, func(r *http.Request) { r.Header.Set("Upgrade", "websocket") }, "transport"},
		{"through a proxy", envProxy, func(*http.Request) {}, "transport"},
		{"POST through a proxy", envProxy, func(r *http.Request) { r.Method = http.MethodPost }, "transport"},
	} {
		req := streamRequest(context.Background(), t, "http://upstream.example/mcp")
		tc.change(req)
		if got := proxy.Route(tc.st, req); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
