package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"

	"github.com/mcpdrift/mcpdrift/proxy"
)

// Upstreams that misbehave at the protocol level, written by hand: what no
// SDK server does.

// hostile is a Streamable HTTP server that opens a session on initialize (a
// new id each time, and notes when), takes notifications with 202, and
// hands every other POSTed request and every GET to the test.
type hostile struct {
	*httptest.Server
	mu    sync.Mutex
	inits []time.Time
}

type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	ctx    context.Context // the HTTP request's
}

func newHostile(t *testing.T, post func(http.ResponseWriter, rpcRequest), get http.HandlerFunc) *hostile {
	h := &hostile{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			get(w, r)
			return
		case http.MethodDelete:
			return
		}
		m := rpcRequest{ctx: r.Context()}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &m)
		switch {
		case m.Method == "initialize":
			h.mu.Lock()
			h.inits = append(h.inits, time.Now())
			n := len(h.inits)
			h.mu.Unlock()
			changed.notify()
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", fmt.Sprint("session-", n))
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}}`, m.ID)
		case m.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		default:
			post(w, m)
		}
	}))
	t.Cleanup(h.Close)
	return h
}

// initializes is when the server was initialized, so far.
func (h *hostile) initializes() []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Time(nil), h.inits...)
}

func answer(w http.ResponseWriter, m rpcRequest, result string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
}

// onCall answers tools/call with call, every other request with {}.
func onCall(call func(http.ResponseWriter, rpcRequest)) func(http.ResponseWriter, rpcRequest) {
	return func(w http.ResponseWriter, m rpcRequest) {
		if m.Method != "tools/call" {
			answer(w, m, `{}`)
			return
		}
		call(w, m)
	}
}

func noStream(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) }

// handshake initializes the proxy's session as an agent does.
func (p *stdioProxy) handshake(t *testing.T) {
	t.Helper()
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`)
	p.recvID(t, "1")
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// callTool initializes, and sends a tools/call with id 2.
func (p *stdioProxy) callTool(t *testing.T) {
	t.Helper()
	p.handshake(t)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{}}}`)
}

// TestUpstreamUnreadableAnswer: an answer the proxy cannot read (nested
// past the parse depth, still JSON), as a JSON body or an SSE event,
// reaches the agent as it came and once: the proxy does not follow it with
// an error of its own for the same id.
func TestUpstreamUnreadableAnswer(t *testing.T) {
	deep := strings.Repeat("[", 600) + strings.Repeat("]", 600)
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprint("sse=", sse), func(t *testing.T) {
			h := newHostile(t, onCall(func(w http.ResponseWriter, m rpcRequest) {
				frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[],"deep":%s}}`, m.ID, deep)
				if sse {
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprintf(w, "data: %s\n\n", frame)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, frame)
			}), noStream)
			tel := newTelemetry(t)
			p := startUpstream(t, proxy.Config{Upstream: h.URL}, tel)
			p.callTool(t)
			if got := p.recv(t); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":2,"result":{"content":[],"deep":[[[`) {
				t.Fatalf("the agent got %.100s, want the server's answer", got)
			}
			p.send(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
			if got := p.recv(t); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
				t.Errorf("after the answer the agent got %.200s, want the ping's answer", got)
			}
			// The call's span ends when the answer passes, not when the
			// proxy ends (as a call whose answer never came).
			span := tel.waitNamed(t, "tools/call x", 1)[0]
			if span.Status.Code != codes.Error || !strings.Contains(span.Status.Description, "could not be read") {
				t.Errorf("the call's span ended %v", span.Status)
			}
		})
	}
}

// TestUpstreamAgentStopsReading: an agent that stopped reading in the
// middle of a notification from the GET stream (the proxy is blocked
// writing the rest) does not keep the proxy alive: neither when it closes
// its input nor on SIGTERM.
func TestUpstreamAgentStopsReading(t *testing.T) {
	for _, how := range []string{"stdin", "sigterm"} {
		t.Run(how, func(t *testing.T) {
			unread := strings.Repeat("u", 64<<10) // more than the agent's first read takes
			h := newHostile(t, func(w http.ResponseWriter, m rpcRequest) { answer(w, m, `{}`) },
				func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":%q}}\n\n", unread)
					w.(http.Flusher).Flush()
					<-r.Context().Done()
				})
			p := startUpstream(t, proxy.Config{Upstream: h.URL, ShutdownGrace: 100 * time.Millisecond}, newTelemetry(t))
			p.handshake(t)
			if _, err := p.out.ReadByte(); err != nil { // the notification's start; the agent reads nothing more
				t.Fatal(err)
			}
			want := 0
			if how == "stdin" {
				p.in.Close()
			} else {
				p.sigs <- syscall.SIGTERM
				want = 128 + int(syscall.SIGTERM)
			}
			select {
			case code := <-p.code:
				p.code <- code
				if code != want {
					t.Errorf("exit code %d, want %d", code, want)
				}
			case <-time.After(20 * time.Second):
				t.Error("the proxy did not end: it waits on an agent that stopped reading")
			}
		})
	}
}

// TestUpstreamResumeRetryBounded: a server that asks (retry) to be resumed
// in 24 days: the proxy's wait is bounded by --upstream-timeout, and the
// call that cannot be resumed gets an error, not weeks of silence.
func TestUpstreamResumeRetryBounded(t *testing.T) {
	h := newHostile(t, onCall(func(w http.ResponseWriter, m rpcRequest) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\nretry: 2147483647\ndata: \n\n")
	}), noStream)
	p := startUpstream(t, proxy.Config{Upstream: h.URL, UpstreamTimeout: 100 * time.Millisecond}, newTelemetry(t))
	p.callTool(t)
	got := make(chan string, 1)
	go func() {
		line, _ := p.out.ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		if !strings.Contains(line, `"id":2,"error"`) {
			t.Errorf("the call answered %s", line)
		}
	case <-time.After(20 * time.Second):
		t.Error("the call is still waiting for the server's retry time")
	}
}

// TestUpstreamSessionLossSpaced: a server whose GET route answers 404 for
// every session (as one without the stream might) while its POSTs work:
// each GET says the session is gone, and each re-initialization opens a
// session the next GET loses. The proxy re-initializes again and again,
// but spaced out (at least 100 ms apart, growing), not as fast as the
// server answers.
func TestUpstreamSessionLossSpaced(t *testing.T) {
	h := newHostile(t, func(w http.ResponseWriter, m rpcRequest) {
		answer(w, m, `{"tools":[]}`)
	}, http.NotFound)
	p := startUpstream(t, proxy.Config{Upstream: h.URL}, newTelemetry(t))
	p.handshake(t)
	eventually(t, func() bool { return len(h.initializes()) >= 5 }, "re-initializations")
	inits := h.initializes()
	// The first re-initialization (inits[1]) may follow at once: the
	// server may just have restarted.
	for i := 2; i < 5; i++ {
		if gap := inits[i].Sub(inits[i-1]); gap < 100*time.Millisecond {
			t.Errorf("re-initialization %d came %v after the one before", i, gap)
		}
	}
}

// TestUpstreamLegacySSEReconnectsOnce: a legacy HTTP+SSE server whose
// stream drops right after its endpoint event, every time: the proxy keeps
// reconnecting with one loop backing off, not a new loop for every stream
// that dropped.
func TestUpstreamLegacySSEReconnectsOnce(t *testing.T) {
	var mu sync.Mutex
	streams := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusAccepted) // taken; the answer would come on the stream, which is gone
			return
		}
		mu.Lock()
		streams++
		mu.Unlock()
		changed.notify()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: endpoint\ndata: /message?sessionId=1\n\n")
	}))
	t.Cleanup(hs.Close)
	p := startUpstream(t, proxy.Config{Upstream: hs.URL, UpstreamTransport: proxy.TransportSSE, UpstreamTimeout: time.Second}, newTelemetry(t))
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`)
	p.recvID(t, "1") // an error: the stream ended before the answer
	eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return streams >= 6 }, "reconnections")
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
	if n := strings.Count(b.String(), "proxy.(*streamable).streamEnded("); n > 2 {
		t.Errorf("%d goroutines reconnecting the same stream", n)
	}
}

// TestUpstreamBodyTrickles: a JSON answer whose body never ends is cut at
// --upstream-timeout, and the error says so (not "use of closed network
// connection", the proxy's own doing).
func TestUpstreamBodyTrickles(t *testing.T) {
	h := newHostile(t, onCall(func(w http.ResponseWriter, m rpcRequest) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "1000")
		io.WriteString(w, `{"jsonrpc":"2.0",`)
		w.(http.Flusher).Flush()
		<-m.ctx.Done()
	}), noStream)
	p := startUpstream(t, proxy.Config{Upstream: h.URL, UpstreamTimeout: 100 * time.Millisecond}, newTelemetry(t))
	p.callTool(t)
	if got := p.recvID(t, "2"); !strings.Contains(got, "no response within 100ms") {
		t.Errorf("the call answered %s", got)
	}
}
