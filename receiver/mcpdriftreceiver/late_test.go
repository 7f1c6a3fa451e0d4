package mcpdriftreceiver

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/semconv"
)

// lateBackend is a go-sdk server with sessions (initialize era), one per
// session, that lists search and, when late is set, registers late 20 ms
// after answering the session's first tools/list, announcing it with
// list_changed: a replica that registers tools as a client connects. A
// probe that lists once sees search alone, the contract of a backend
// without late.
func lateBackend(tb testing.TB, late *mcp.Tool) http.Handler {
	var mu sync.Mutex
	var timers []*time.Timer
	tb.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, t := range timers {
			t.Stop()
		}
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		srv := mcp.NewServer(&mcp.Implementation{Name: "svc", Version: "1.0.0"}, nil)
		srv.AddTool(sdkTool("search", "Search the web", "query"), noop)
		if late != nil {
			var once sync.Once
			srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					res, err := next(ctx, method, req)
					if method == "tools/list" {
						once.Do(func() {
							mu.Lock()
							defer mu.Unlock()
							timers = append(timers, time.AfterFunc(20*time.Millisecond, func() { srv.AddTool(late, noop) }))
						})
					}
					return res, err
				}
			})
		}
		endSessions(tb, srv)
		return srv
	}, &mcp.StreamableHTTPOptions{JSONResponse: true})
}

// TestE2ELateRegistration: behind a balancer with session affinity, the
// replicas of B register fetch just after a client's first listing; listed
// once, a B replica looks like A. Samples list once only while no probe of the
// target has seen its listings change after connecting: the first settled
// probe of B hears the change, and from then on the samples settle too. So
// while the fleet is split no sample shows a B replica as A (enough of
// those would resolve the mixed state on A), and once it has converged the
// samples show B: listed once, they showed A, and the drift never came
// (this test fails so when samples always list once).
func TestE2ELateRegistration(t *testing.T) {
	a := lateBackend(t, nil)
	b := lateBackend(t, sdkTool("fetch", "Fetch a page"))
	lb, url := newTestBalancer(t, a, b, perSession, false, 7)
	cfg := e2eConfig(httpTarget("svc", url))
	cfg.Settle = 150 * time.Millisecond
	r, logs, _ := startManual(t, cfg, newProber(cfg))
	tgt := r.targets[0]
	ctx := context.Background()
	mixed := func(state string) int {
		n := 0
		for _, m := range eventsNamed(logs, semconv.EventMixedContract) {
			if attrStr(m, semconv.MixedState) == state {
				n++
			}
		}
		return n
	}
	drifts := func() int { return len(eventsNamed(logs, semconv.EventDrift)) }
	probe := func() {
		t.Helper()
		r.runProbe(ctx, tgt)
		if !tgt.up {
			t.Fatalf("probe failed: %s", tgt.lastErrorClass())
		}
	}

	for range 3 {
		probe()
	}
	if tgt.changesOnConnect.Load() {
		t.Fatal("A's settled probes saw no change after connecting, yet samples would settle")
	}
	lb.setShare(0.5)
	for i := 0; i < 12 || mixed("open") == 0; i++ {
		if i == 40 {
			t.Fatal("no mixed state in 40 probes of a 50/50 fleet")
		}
		probe()
		if drifts() != 0 || mixed("resolved") != 0 {
			t.Fatalf("probe %d of the split fleet: %d drifts, %d mixed states resolved; want none (picks A %d, B %d)",
				i, drifts(), mixed("resolved"), lb.picks[0], lb.picks[1])
		}
	}
	if !tgt.changesOnConnect.Load() {
		t.Fatal("B's settled probes heard fetch registered late; samples must settle")
	}
	lb.setShare(1)
	for i := 0; drifts() == 0; i++ {
		if i == 2 {
			t.Fatalf("no drift in 2 probes after the fleet converged (mixed opened %d, resolved %d)", mixed("open"), mixed("resolved"))
		}
		probe()
	}
	if got := variantChanges(eventsNamed(logs, semconv.EventDrift)[0], ""); got == "" {
		t.Error("the drift names no change; B adds fetch")
	}
	if mixed("open") != 1 || mixed("resolved") != 1 {
		t.Errorf("mixed states opened %d, resolved %d; want 1 and 1", mixed("open"), mixed("resolved"))
	}
}
