package mcpdriftreceiver

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

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
