package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/proxy"
)

// TestHTTPGateSessionsBounded: sessions that vanish without a DELETE (or a
// 404) do not grow the gate's state for ever: beyond the cap the least
// recently used is forgotten, and sessions idle for the idle time go. (The
// gate is on with --on-stale refuse, as with --lock: both keep the same
// per-session state.)
func TestHTTPGateSessionsBounded(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer up.Close()
	for _, tc := range []struct {
		name string
		idle time.Duration
		max  int
	}{{"cap", time.Hour, 3}, {"idle", time.Nanosecond, 1000}} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := proxy.NewHandler(proxy.Config{Upstream: up.URL, Listen: "test", OnStale: proxy.OnStaleRefuse}, sdkTelemetry(t))
			if err != nil {
				t.Fatal(err)
			}
			proxy.SetSessionBounds(h, tc.idle, tc.max)
			hs := httptest.NewServer(h)
			defer func() { hs.Close(); h.Close() }()
			for i := range 10 {
				req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Mcp-Session-Id", "vanished-"+strconv.Itoa(i))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			if n := proxy.GateSessions(h); n > 3 || tc.name == "cap" && n == 0 {
				t.Errorf("the gate keeps %d sessions of 10 that vanished, want at most 3 (and, under the cap, some)", n)
			}
		})
	}
}

// TestHTTPGateSessionsSmall: what the gate keeps per session stays small
// whatever the client sends: sessionless clients (each clientInfo its own
// session, up to the session cap) POSTing 1 MiB bodies with 512 KiB of
// headers under --on-stale refuse leave the proxy's heap a fraction of
// what they sent (before, each session's remembered _meta was a slice of
// its whole request body, and its header was kept whatever its size).
func TestHTTPGateSessionsSmall(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer up.Close()
	h, err := proxy.NewHandler(proxy.Config{Upstream: up.URL, Listen: "test", OnStale: proxy.OnStaleRefuse}, sdkTelemetry(t))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer func() { hs.Close(); h.Close() }()
	const clients, size = 40, 1 << 20
	pad := strings.Repeat("x", size)
	before := heap()
	for i := range clients {
		body := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"c` +
			strconv.Itoa(i) + `","version":"1"}},"pad":"` + pad + `"}}`
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("X-Pad", pad[:size/2])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if n := proxy.GateSessions(h); n != clients {
		t.Fatalf("the gate keeps %d sessions, want %d", n, clients)
	}
	if grown := int64(heap()) - int64(before); grown > clients*size/4 {
		t.Errorf("the heap grew by %d bytes for %d sessions of %d-byte requests", grown, clients, size)
	}
}

// heap is the live heap, after a collection.
func heap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
