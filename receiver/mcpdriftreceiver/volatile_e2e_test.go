package mcpdriftreceiver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/sdkdescribe"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// stampedServer is a go-sdk server whose search tool's description embeds
// *stamp, as a timestamp to the second would: it changes between the
// receiver's probes (the test advances it) and holds among the samples a
// probe takes at once.
func stampedServer(stamp *atomic.Int64) *mcp.Server {
	srv := newSDKServer("svc", sdkTool("search", "Search"), sdkTool("fetch", "Fetch a page"))
	srv.AddReceivingMiddleware(sdkdescribe.Rewrite("search", func() string { return fmt.Sprintf("Search. Index as of %d", stamp.Load()) }))
	return srv
}

// TestE2EVolatileTimestamp (issue 25, item 3): with confirm_after 1 every
// probe of a server with a timestamp in a description takes samples, which
// repeat the probe's timestamp. Fed to the detector, they reset the field's
// streak on every probe: the field was never found volatile, and every probe
// was a drift of the description. Found from the scheduled probes, it is
// volatile on the fourth probe; then only the real change is drift.
func TestE2EVolatileTimestamp(t *testing.T) {
	var stamp atomic.Int64
	srv := stampedServer(&stamp)
	url := serveSDK(t, func() *mcp.Server { return srv })
	cfg := e2eConfig(httpTarget("svc", url))
	cfg.Settle = 5 * time.Millisecond
	cfg.Volatile.Ignore = false
	cfg.ConfirmAfter = 1
	r, logs, _ := startManual(t, cfg, newProber(cfg))
	tgt := r.targets[0]
	probe := func() {
		stamp.Add(1)
		r.runProbe(context.Background(), tgt)
		if !tgt.up {
			t.Fatalf("probe failed: %s", tgt.lastErrorClass())
		}
	}
	for range 4 {
		probe()
	}
	if len(eventsNamed(logs, semconv.EventVolatileField)) != 1 {
		t.Fatalf("the timestamp is not volatile after 4 probes")
	}
	before := len(eventsNamed(logs, semconv.EventDrift)) // the description's changes before it was known
	for range 3 {
		probe()
	}
	if d := len(eventsNamed(logs, semconv.EventDrift)) - before; d != 0 {
		t.Fatalf("%d drifts from the timestamp once it is known volatile", d)
	}

	srv.AddTool(sdkTool("search", "Search", "filters"), noop) // a real change: search requires filters
	probe()
	drifts := eventsNamed(logs, semconv.EventDrift)[before:]
	if len(drifts) != 1 {
		t.Fatalf("%d drifts on the first probe after a required parameter was added next to a timestamp, want 1", len(drifts))
	}
	if body := drifts[0].Body().Str(); !strings.Contains(body, "filters") {
		t.Errorf("drift %q does not name the required parameter", body)
	}
	if mixed := eventsNamed(logs, semconv.EventMixedContract); len(mixed) != 0 {
		t.Errorf("%d mixed_contract events from one server", len(mixed))
	}
}

// rotatingServer is a go-sdk server whose search tool's description embeds a
// session URL that changes on every tools/list (a volatile field).
func rotatingServer(n *atomic.Int64) *mcp.Server {
	srv := newSDKServer("svc", sdkTool("search", "Search"), sdkTool("fetch", "Fetch a page"))
	srv.AddReceivingMiddleware(sdkdescribe.Rewrite("search", func() string { return fmt.Sprintf("Search. Session https://x.example/s/%d", n.Add(1)) }))
	return srv
}

// TestE2EVolatileFieldNotIgnored: with volatile.ignore false, a server whose
// description rotates on every listing settles in two listings once the
// field is known (not MaxSettleRounds), and a real change elsewhere is
// confirmed and reported with the volatile field unmasked.
//
// Issue 25 saw the change go unreported with confirm_after 1; here it is
// reported with both (the subtest guards it). Where the change landed while
// the first probe was still settling, the baseline itself was the changed
// contract, which is no drift.
func TestE2EVolatileFieldNotIgnored(t *testing.T) {
	for _, c := range []int{2, 1} {
		t.Run(fmt.Sprintf("confirm_after %d", c), func(t *testing.T) { testVolatileFieldNotIgnored(t, c) })
	}
}

func testVolatileFieldNotIgnored(t *testing.T, confirmAfter int) {
	var n atomic.Int64
	srv := rotatingServer(&n)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	var lists atomic.Int64
	ts := httptest.NewServer(onMethod(sdk, "tools/list", func() { lists.Add(1) }))
	defer ts.Close()
	cfg := e2eConfig(httpTarget("svc", ts.URL+"/mcp"))
	cfg.Settle = 5 * time.Millisecond
	cfg.Volatile.Ignore = false
	cfg.ConfirmAfter = confirmAfter
	r, logs, _ := startManual(t, cfg, newProber(cfg))
	tgt := r.targets[0]
	probe := func() int64 {
		before := lists.Load()
		r.runProbe(context.Background(), tgt)
		if !tgt.up {
			t.Fatalf("probe failed: %s", tgt.lastErrorClass())
		}
		return lists.Load() - before
	}
	for range 5 {
		probe()
	}
	if len(eventsNamed(logs, semconv.EventVolatileField)) != 1 {
		t.Fatalf("volatile field not detected in 5 probes")
	}
	for i := range 3 {
		if got := probe(); got != 2 {
			t.Fatalf("probe %d after detection listed tools %d times, want 2 (settled on the known volatile field)", i, got)
		}
	}
	if d := len(eventsNamed(logs, semconv.EventDrift)); d != 0 {
		t.Fatalf("%d drifts from the volatile field alone", d)
	}

	// A real change: search requires filters.
	srv.AddTool(sdkTool("search", "Search", "filters"), noop)
	for range 4 {
		probe()
	}
	drifts := eventsNamed(logs, semconv.EventDrift)
	if len(drifts) != 1 {
		t.Fatalf("%d drifts after a required parameter was added next to a volatile field, want 1", len(drifts))
	}
	changes, _ := drifts[0].Attributes().Get(semconv.DriftChanges)
	paths := map[string]bool{}
	for i := 0; i < changes.Slice().Len(); i++ {
		p, _ := changes.Slice().At(i).Map().Get(semconv.ChangePath)
		paths[p.Str()] = true
	}
	if !paths["/description"] || len(paths) < 2 {
		t.Errorf("the drift reports the required parameter and, unmasked, the description: %v", paths)
	}
}
