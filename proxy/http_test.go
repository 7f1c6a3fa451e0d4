package proxy_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/proxy"
)

// TestHTTPClientStopsSending: a client that stops in the middle of its
// request body (with a session id, or without: then the proxy reads the
// body to name the client) is answered 408 and its connection closed once
// it has sent nothing for the idle time, instead of holding a goroutine and
// the body read so far for as long as it likes; a client that sent its
// whole body still gets an event stream that outlasts the idle time.
func TestHTTPClientStopsSending(t *testing.T) {
	const idle = 50 * time.Millisecond
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	}))
	defer up.Close()
	h, err := proxy.NewHandler(proxy.Config{Upstream: up.URL, Listen: "test"}, sdkTelemetry(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy.SetClientIdle(h, idle)
	hs := httptest.NewServer(h)
	defer func() { hs.Close(); h.Close() }()

	for _, sid := range []string{"s1", ""} {
		conn, err := net.Dial("tcp", hs.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nMcp-Session-Id: %s\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", sid)
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("session %q: no answer to a request whose client stopped sending: %v", sid, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("session %q: status %d, want 408", sid, resp.StatusCode)
		}
	}

	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`))
	req.Header.Set("Content-Type", "application/json") // sessionless: the proxy reads the body to its end
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, "notifications/message") {
		t.Fatalf("first event: %q %v", line, err)
	}
	time.Sleep(5 * idle) // the body's read deadline would have passed
	close(release)
	rest, err := io.ReadAll(br)
	if err != nil || !strings.Contains(string(rest), `"result"`) {
		t.Errorf("the stream was cut after the body was read: %q %v", rest, err)
	}
}

// TestHTTPIdleConnectionsClosed: a client connection left idle after its
// request is closed by the proxy after a while, not kept for ever.
func TestHTTPIdleConnectionsClosed(t *testing.T) {
	defer proxy.SetClientKeepAlive(100 * time.Millisecond)()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	}))
	defer up.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- proxy.Serve(ctx, l, proxy.Config{Upstream: up.URL, Listen: l.Addr().String()}, sdkTelemetry(t))
	}()
	defer func() { cancel(); <-served }()

	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"notify/x\"}   ")
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d", res.StatusCode)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("the idle connection was not closed by the proxy: %v", err)
	}
}
