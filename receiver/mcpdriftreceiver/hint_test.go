package mcpdriftreceiver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReceiverHandshakeHint: an initialize-era server is sent server/discover
// on the first probe only, then once every rediscoverEvery probes and on the
// probe after a failure; the others start with initialize (one balancer
// pick). A probe that fails with the hint is retried at once without it.
func TestReceiverHandshakeHint(t *testing.T) {
	srv := newSDKServer("svc", sdkTool("search", "Search the web"))
	endSessions(t, srv)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	var mu sync.Mutex
	var discovers []int // probe numbers that sent server/discover
	var probeNo int
	var fail atomic.Bool
	failing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			http.Error(w, "deploying", http.StatusServiceUnavailable)
			return
		}
		sdk.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(onMethod(failing, "server/discover", func() {
		mu.Lock()
		discovers = append(discovers, probeNo)
		mu.Unlock()
	}))
	defer ts.Close()
	cfg := e2eConfig(httpTarget("svc", ts.URL+"/mcp"))
	r, logs, _ := startManual(t, cfg, newProber(cfg))
	tgt := r.targets[0]
	probe := func(n int) {
		mu.Lock()
		probeNo = n
		mu.Unlock()
		r.runProbe(context.Background(), tgt)
	}
	for n := 1; n <= 2*rediscoverEvery+1; n++ {
		probe(n)
	}
	fail.Store(true)
	probe(100)
	fail.Store(false)
	probe(101)
	probe(102)
	mu.Lock()
	got := append([]int(nil), discovers...)
	mu.Unlock()
	want := []int{1, 1 + rediscoverEvery, 1 + 2*rediscoverEvery, 100, 101}
	if len(got) != len(want) {
		t.Fatalf("server/discover sent on probes %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("server/discover sent on probes %v, want %v", got, want)
		}
	}
	if n := len(eventsNamed(logs, "mcpdrift.drift")); n != 0 {
		t.Errorf("%d drifts from an unchanged server probed with and without the hint", n)
	}
}
