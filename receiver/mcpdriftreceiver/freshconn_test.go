package mcpdriftreceiver

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProbeClosesItsConnections: once a probe has returned, every
// connection its requests used is closed, the one its session's DELETE
// used included (the probe sends it as it closes). That one used to stay
// idle in the Collector's client, whose otelhttp wrapping hides
// CloseIdleConnections even from Shutdown: a keep-alive goroutine that
// outlived the test, which goleak reported under load.
//
// A connection the transport dialed for a request that another connection
// served carries no request and is never seen by httptrace; it is left out
// here (see withOwnConnections).
func TestProbeClosesItsConnections(t *testing.T) {
	srv := newSDKServer("sessions", sdkTool("search", "Search"))
	endSessions(t, srv)
	var mu sync.Mutex
	used := map[net.Conn]bool{} // open connections that carried a request
	deletes := 0
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil) // stateful: a session to end
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		used[r.Context().Value(connKey{}).(net.Conn)] = true
		if r.Method == http.MethodDelete {
			deletes++
		}
		mu.Unlock()
		sdk.ServeHTTP(w, r)
	}))
	ts.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) }
	ts.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateClosed || s == http.StateHijacked {
			mu.Lock()
			delete(used, c)
			mu.Unlock()
		}
	}
	ts.Start()
	defer ts.Close()
	cfg := e2eConfig(httpTarget("sessions", ts.URL))
	r, _, _ := startManual(t, cfg, newProber(cfg))
	tgt := r.targets[0]
	for range 3 {
		r.runProbe(context.Background(), tgt)
		if !tgt.up {
			t.Fatalf("probe failed: %s", tgt.lastErrorClass())
		}
		waitFor(t, "the probe's connections to close", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(used) == 0
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if deletes != 3 {
		t.Errorf("%d sessions ended with DELETE, want 3", deletes)
	}
}

type connKey struct{}

// TestProbeClosesUnusedConnections: a connection in the target's client
// that no request of the probe used is closed once the probe has returned
// too. The transport dials such a one for a request that another
// connection, freed meanwhile, then serves; here, to be deterministic, the
// server's DELETE handler makes a request of its own with the client (no
// probe context, so the probe's httptrace never sees its connection) to
// another server. Before, the client's CloseIdleConnections did not reach
// its transport (confighttp's wrappers do not pass it on), and the
// connection stayed idle with its keep-alive goroutines (goleak, under load).
func TestProbeClosesUnusedConnections(t *testing.T) {
	srv := newSDKServer("sessions", sdkTool("search", "Search"))
	endSessions(t, srv)
	var mu sync.Mutex
	open := map[net.Conn]bool{} // the other server's open connections
	opened := 0                 // and all it accepted: the fix may close one before the probe returns
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	other.Config.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		if s == http.StateNew {
			open[c] = true
			opened++
		} else if s == http.StateClosed || s == http.StateHijacked {
			delete(open, c)
		}
	}
	other.Start()
	defer other.Close()
	var client atomic.Pointer[http.Client]
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil) // stateful: a session to end
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			resp, err := client.Load().Get(other.URL)
			if err != nil {
				t.Errorf("the other request: %v", err)
			} else {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		sdk.ServeHTTP(w, r)
	}))
	defer ts.Close()
	tc := httpTarget("sessions", ts.URL)
	tc.Headers = configopaque.MapList{{Name: "X-Probe", Value: "1"}} // one more wrapper around the transport
	ka := confighttp.NewDefaultKeepaliveClientConfig()
	ka.IdleConnTimeout = time.Hour // beyond waitFor's bound: the transport's own timeout does not close it
	tc.Keepalive = configoptional.Some(ka)
	cfg := e2eConfig(tc)
	r, _, _ := startManual(t, cfg, newProber(cfg))
	tgt := r.targets[0]
	client.Store(tgt.httpClient)
	r.runProbe(context.Background(), tgt)
	if !tgt.up {
		t.Fatalf("probe failed: %s", tgt.lastErrorClass())
	}
	mu.Lock()
	n := opened
	mu.Unlock()
	if n == 0 {
		t.Fatal("the DELETE handler's request opened no connection")
	}
	waitFor(t, "the connection no request of the probe used to close", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(open) == 0
	})
}
