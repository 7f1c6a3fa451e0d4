package proxy_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/proxy"
)

// forwardTo serves the HTTP → HTTP proxy in front of an upstream handler.
func forwardTo(t *testing.T, upstream http.Handler, cfg proxy.Config) (*httptest.Server, *httptest.Server) {
	t.Helper()
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	if cfg.Upstream == "" {
		cfg.Upstream = up.URL + "/mcp"
	}
	cfg.Listen = "test"
	h, err := proxy.NewHandler(cfg, sdkTelemetry(t))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	return up, hs
}

// TestForwardHeaders: hop-by-hop headers (RFC 9110, 7.6.1, and those the
// Connection header names) stop at the proxy both ways, the client's
// forwarding headers are dropped and none added, configured headers win,
// and the MCP headers, the query and Te: trailers pass.
func TestForwardHeaders(t *testing.T) {
	got := make(chan *http.Request, 1)
	_, hs := forwardTo(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		w.Header().Set("Connection", "X-Hop")
		w.Header().Set("X-Hop", "1")
		w.Header().Set("Keep-Alive", "timeout=5")
		w.Header().Set("Mcp-Session-Id", "s1")
		w.WriteHeader(http.StatusAccepted)
	}), proxy.Config{Header: http.Header{"Authorization": {"Bearer configured"}}})

	req, _ := http.NewRequest(http.MethodGet, hs.URL+"/?a=1&b=%41;c=2", nil)
	for k, v := range map[string]string{
		"Connection": "X-Client-Hop", "X-Client-Hop": "1", "Keep-Alive": "timeout=5",
		"Proxy-Authorization": "Basic c2VjcmV0", "Te": "trailers", "Upgrade-Insecure-Requests": "1",
		"X-Forwarded-For": "10.0.0.1", "X-Forwarded-Host": "evil", "X-Forwarded-Proto": "https", "Forwarded": "for=10.0.0.1",
		"X-Forwarded-Prefix": "/evil", "X-Forwarded-Port": "1", "X-Real-Ip": "10.0.0.1",
		"Authorization": "Bearer client", "Mcp-Session-Id": "s1", "Last-Event-Id": "s1_7", "Mcp-Protocol-Version": "2025-11-25",
	} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r := <-got
	for _, k := range []string{"X-Client-Hop", "Keep-Alive", "Proxy-Authorization", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "Forwarded",
		"X-Forwarded-Prefix", "X-Forwarded-Port", "X-Real-Ip"} {
		if v, ok := r.Header[k]; ok {
			t.Errorf("upstream got %s: %q", k, v)
		}
	}
	for k, want := range map[string]string{
		"Authorization": "Bearer configured", "Mcp-Session-Id": "s1", "Last-Event-Id": "s1_7",
		"Mcp-Protocol-Version": "2025-11-25", "Te": "trailers", "Upgrade-Insecure-Requests": "1",
	} {
		if v := r.Header.Get(k); v != want {
			t.Errorf("upstream got %s: %q, want %q", k, v, want)
		}
	}
	// The path "/" is the upstream's; a query a server could read apart
	// from the proxy (a semicolon) is re-encoded without the ambiguous pair.
	if r.URL.Path != "/mcp" || r.URL.RawQuery != "a=1" {
		t.Errorf("upstream got %s?%s", r.URL.Path, r.URL.RawQuery)
	}
	if resp.StatusCode != http.StatusAccepted || resp.Header.Get("Mcp-Session-Id") != "s1" ||
		resp.Header.Get("X-Hop") != "" || resp.Header.Get("Keep-Alive") != "" {
		t.Errorf("client got %d %v", resp.StatusCode, resp.Header)
	}
}

// TestForwardTrailers: announced and unannounced trailers reach the client.
func TestForwardTrailers(t *testing.T) {
	_, hs := forwardTo(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		io.WriteString(w, "body")
		w.Header().Set("X-Sum", "42")
		w.Header().Set(http.TrailerPrefix+"X-Late", "yes")
	}), proxy.Config{})
	resp, err := http.Get(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "body" || resp.Trailer.Get("X-Sum") != "42" || resp.Trailer.Get("X-Late") != "yes" {
		t.Errorf("body %q, trailers %v", b, resp.Trailer)
	}
}

// TestForwardStreamsEvents: each event reaches the client while the
// upstream holds the stream open (it writes the next only once the client
// has the previous one), and the headers of a stream with nothing to say
// yet reach the client too; the stream ends cleanly when the upstream's
// does.
func TestForwardStreamsEvents(t *testing.T) {
	next := make(chan struct{})
	_, hs := forwardTo(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // headers alone: the stream is quiet
		writeEvents(w, r, next, 3)
	}), proxy.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a stalled stream fails
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hs.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req) // returns with the headers
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	readEvents(ctx, t, br, next, 3)
	if rest, err := io.ReadAll(br); err != nil || len(rest) > 0 {
		t.Errorf("after the last event: %q, %v", rest, err)
	}
}

// TestForwardUpstreamCut: a response the upstream cuts reaches the client
// cut, not as a complete one.
func TestForwardUpstreamCut(t *testing.T) {
	_, hs := forwardTo(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {}\n\n")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}), proxy.Config{})
	resp, err := http.Get(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || string(b) != "data: {}\n\n" {
		t.Errorf("read %q, %v; want the event and an error", b, err)
	}
}

// TestForwardClientGone: a client that leaves ends the upstream request.
func TestForwardClientGone(t *testing.T) {
	ended := make(chan struct{})
	_, hs := forwardTo(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": ok\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(ended)
	}), proxy.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hs.URL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	receive(t, ended, "the upstream request outlived its client")
}

// TestForwardRequestBodyStreams: a body the tap does not read (not JSON)
// streams to the upstream as the client sends it; DELETE passes.
func TestForwardRequestBodyStreams(t *testing.T) {
	first := make(chan string)
	_, hs := forwardTo(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		buf := make([]byte, 5)
		_, _ = io.ReadFull(r.Body, buf)
		first <- string(buf)
		rest, _ := io.ReadAll(r.Body)
		io.WriteString(w, string(buf)+string(rest))
	}), proxy.Config{})
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, hs.URL, pr)
	req.Header.Set("Content-Type", "application/octet-stream")
	type result struct {
		body string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- result{string(b), err}
	}()
	io.WriteString(pw, "first")
	if got := <-first; got != "first" { // the rest is not sent yet
		t.Errorf("first part %q", got)
	}
	io.WriteString(pw, " second")
	pw.Close()
	if r := <-done; r.err != nil || r.body != "first second" {
		t.Errorf("%q %v", r.body, r.err)
	}

	req, _ = http.NewRequest(http.MethodDelete, hs.URL, nil)
	req.Header.Set("Mcp-Session-Id", "s1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE: %d", resp.StatusCode)
	}
}

// TestForwardUpgrade: a request to switch protocols is relayed both ways.
func TestForwardUpgrade(t *testing.T) {
	_, hs := forwardTo(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "echo" {
			http.Error(w, "no upgrade", http.StatusBadRequest)
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		brw.Flush()
		line, _ := brw.ReadString('\n')
		brw.WriteString(line)
		brw.Flush()
	}), proxy.Config{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: proxy\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("%v %v", resp, err)
	}
	fmt.Fprintf(conn, "ping\n")
	if line, err := br.ReadString('\n'); line != "ping\n" {
		t.Errorf("%q %v", line, err)
	}
}

// TestForwardUpstreamDownNamesIt: the 502 names the upstream, never its
// credentials, for a standing stream (a connection of its own) as for any
// other request.
func TestForwardUpstreamDownNamesIt(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, hs := forwardTo(t, http.NotFoundHandler(), proxy.Config{Upstream: "http://user:hunter2@" + addr + "/mcp?token=s3cret"})
	for _, accept := range []string{"", "text/event-stream"} {
		code, b := getWith(t, hs.URL, accept)
		if code != http.StatusBadGateway || !strings.Contains(b, addr) ||
			strings.Contains(b, "hunter2") || strings.Contains(b, "s3cret") {
			t.Errorf("Accept %q: %d %q", accept, code, b)
		}
	}
}

// TestForwardStreamHeaderTimeout: a standing stream whose upstream sends
// no headers within the upstream timeout is a 502, as any request is.
func TestForwardStreamHeaderTimeout(t *testing.T) {
	_, hs := forwardTo(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}), proxy.Config{UpstreamTimeout: 50 * time.Millisecond})
	if code, b := getWith(t, hs.URL, "text/event-stream"); code != http.StatusBadGateway {
		t.Errorf("%d %q", code, b)
	}
}

// getWith GETs u with an Accept header and returns the status and body.
func getWith(t *testing.T, u, accept string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// TestForwardAnswerWithStreamEnd: a call's answer leaves the proxy with the
// end of its stream, in one write, so a client that closes an answer as
// soon as it has it (the Go SDK's does) has read it to the end and keeps
// its connection for the next call. Before, the event was flushed on its
// own and the stream's end followed in another write: the Go SDK opened a
// connection per call through the proxy (an accept, five socket options, a
// goroutine and buffers at the proxy each time). The wait is bounded (here
// set long, so that the test does not depend on timing): the answer is
// held until the upstream ends the stream. A progress notification before
// the answer is not held.
func TestForwardAnswerWithStreamEnd(t *testing.T) {
	held := make(chan struct{}, 4)
	defer proxy.SetHold(time.Minute, func() {
		select {
		case held <- struct{}{}:
		default:
		}
	})()
	end := make(chan struct{})
	progress := make(chan struct{})
	var calls atomic.Int64
	_, hs := forwardTo(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		if calls.Add(1) == 1 {
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
			_ = rc.Flush()
			<-progress // the client has it while the call goes on
		}
		fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n\n")
		_ = rc.Flush()
		<-end
	}), proxy.Config{})

	reused := make(chan bool, 2)
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	call := func(events int, read func()) {
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused <- i.Reused }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost, hs.URL,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":1}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", "s1")
		resp, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		br := bufio.NewReader(resp.Body)
		for range events {
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Errorf("reading an event: %v", err)
					resp.Body.Close()
					return
				}
				if line == "\n" {
					break
				}
			}
			read()
		}
		resp.Body.Close() // as soon as the answer is in, as the Go SDK does
	}
	answered := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		events := 0
		call(2, func() {
			if events++; events == 1 {
				progress <- struct{}{} // the progress came on its own
			} else {
				close(answered)
			}
		})
	}()
	select {
	case <-held: // the answer, until the upstream ends its stream
	case <-answered:
		t.Error("the answer reached the client before its stream ended")
	}
	close(end)
	<-done
	if <-reused {
		t.Error("the first call found a connection to reuse")
	}
	call(1, func() {})
	if !<-reused {
		t.Error("the connection was not kept after an answer read to its end: the stream's end came apart from it")
	}
}
