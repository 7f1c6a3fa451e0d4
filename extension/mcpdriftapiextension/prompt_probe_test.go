package mcpdriftapiextension

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/processor/mcpimpactprocessor"
	"github.com/mcpdrift/mcpdrift/receiver/mcpdriftreceiver"
)

// The prompt probe, end to end on the real receiver, processor and API: a
// call carries a create_ticket digest the receiver has not seen (the host
// re-listed after the server changed, before the next scheduled probe,
// which here is an hour away); the processor asks the receiver for a
// probe at once, and the API's impact settles the call from ahead to new.

// versioned serves create_ticket with a description that names its version;
// bump moves it to the next one.
type versioned struct {
	version atomic.Int64
	mu      sync.Mutex
	servers map[int64]*mcp.Server
	url     string
}

func newVersioned(t testing.TB) *versioned {
	v := &versioned{servers: map[int64]*mcp.Server{}}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return v.server() }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	v.url = ts.URL + "/mcp"
	return v
}

func (v *versioned) server() *mcp.Server {
	n := v.version.Load()
	v.mu.Lock()
	defer v.mu.Unlock()
	if s := v.servers[n]; s != nil {
		return s
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "demo-tools", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "create_ticket", Description: fmt.Sprintf("File a support ticket (v%d).", n), InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	v.servers[n] = s
	return s
}

// digest is create_ticket's digest as the server serves it now, taken by a
// probe of the test's own (the receiver does not see it).
func (v *versioned) digest(t testing.TB) string {
	t.Helper()
	snap, err := probe.Probe(context.Background(), probe.Target{URL: v.url}, probe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range snap.Tools {
		if d.Key == "create_ticket" {
			return d.Digest
		}
	}
	t.Fatal("no create_ticket")
	return ""
}

// promptProbeCollector starts the collector with an hour between scheduled
// probes and takes the baseline with a prompt probe.
func promptProbeCollector(t testing.TB, srv *versioned) *collector {
	c := startCollectorWith(t, t.TempDir(), srv.url, mcpdriftreceiver.BaselineAdvance, func(cfg *mcpdriftreceiver.Config, pcfg *mcpimpactprocessor.Config) {
		cfg.CollectionInterval, cfg.InitialDelay, cfg.ConfirmAfter = time.Hour, time.Hour, 2
		// Each change of the benchmark asks for a probe; at the default
		// (5s) most would wait for the interval.
		pcfg.PromptProbeInterval = 100 * time.Millisecond
	})
	landed := make(chan controlplane.Observation, 1)
	if !c.api.ext.RequestProbe("demo-tools", func(o controlplane.Observation) { landed <- o }) {
		t.Fatal("the receiver took no prompt probe")
	}
	if o := <-landed; o.Err != nil {
		t.Fatal(o.Err)
	}
	waitImpact(t, c.api, func(im apiwire.Impact) bool { return im.CurrentDigest != nil })
	return c
}

// waitImpact polls create_ticket's impact every 2 ms until cond holds.
func waitImpact(t testing.TB, a *api, cond func(apiwire.Impact) bool) apiwire.Impact {
	t.Helper()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		r := a.do(http.MethodGet, "/api/v1/servers/demo-tools/impact?tool=create_ticket", "")
		var im apiwire.Impact
		if r.status == http.StatusOK {
			decode(t, r, &im)
			if cond(im) {
				return im
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("impact did not settle: %d %s", r.status, r.body)
		}
	}
}

// settleOnce switches the server to its next version, sends one call with
// the new digest as session, and returns how long the API took to count it
// as new (no longer ahead).
func settleOnce(t testing.TB, c *collector, srv *versioned, session string) time.Duration {
	srv.version.Add(1)
	d := srv.digest(t)
	start := time.Now()
	c.callAt(t, "claude-code", session, d, 1, start, time.Millisecond)
	var sawAhead bool
	im := waitImpact(t, c.api, func(im apiwire.Impact) bool {
		for _, a := range im.Agents {
			sawAhead = sawAhead || a.Digests.Ahead > 0
			if a.Digests.Ahead == 0 && a.Digests.Stale == 0 && a.Digests.New >= 1 {
				return true
			}
		}
		return false
	})
	took := time.Since(start)
	if im.Totals.Stale != 0 {
		t.Fatalf("a call with the served definition was counted stale: %+v", im.Totals)
	}
	return took
}

// TestPromptProbeSettles: the first call with a digest no probe has shown
// is not stale, and the API counts it with the current definition once the
// prompt probe lands, an hour before the next scheduled probe.
func TestPromptProbeSettles(t *testing.T) {
	srv := newVersioned(t)
	c := promptProbeCollector(t, srv)
	took := settleOnce(t, c, srv, "s-1")
	t.Logf("from the first unseen digest to the index agreeing: %s", took)
	var st apiwire.ServerList
	decode(t, c.api.get("/api/v1/servers", "/api/v1/servers", http.StatusOK), &st)
	if st.Servers[0].Probe.Count != 2 {
		t.Errorf("%d probes: want the baseline's and one prompt probe", st.Servers[0].Probe.Count)
	}
}

// BenchmarkPromptProbeSettles measures, per change, the time from the
// first call with an unseen digest to the API counting it as new, next to
// the receiver's own probe duration in the same run (the floor: the settle
// is one probe plus the hand-offs).
//
//	go test ./extension/mcpdriftapiextension -run '^$' -bench PromptProbeSettles -benchtime 20x
func BenchmarkPromptProbeSettles(b *testing.B) {
	srv := newVersioned(b)
	c := promptProbeCollector(b, srv)
	var total, probeTotal time.Duration
	b.ResetTimer()
	for i := range b.N {
		total += settleOnce(b, c, srv, fmt.Sprintf("s-%d", i))
		b.StopTimer()
		var st apiwire.ServerList
		decode(b, c.api.do(http.MethodGet, "/api/v1/servers", ""), &st)
		probeTotal += time.Duration(st.Servers[0].Probe.DurationMS * float64(time.Millisecond))
		b.StartTimer()
	}
	settle := float64(total.Microseconds()) / 1000 / float64(b.N)
	probeMS := float64(probeTotal.Microseconds()) / 1000 / float64(b.N)
	b.ReportMetric(settle, "settle-ms")
	b.ReportMetric(probeMS, "probe-ms")
	b.ReportMetric(settle/probeMS, "settle/probe")
}
