//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/scaleout"
)

// BenchmarkScaleOutThroughput measures tool-call spans per second through
// the two-tier deployment of docs/scale-out.md (a tier-1 router balancing
// over two tier-2 instances) and through one tier-2 instance on its own, in
// the same run with the same load, from the first span sent until the
// last one reached the store; and the CPU time the Collectors spent per
// span. Each b.Loop iteration is one measurement of each, in alternating
// order. Spans per measurement: E2E_SCALE_SPANS (default 100,000).
//
//	go test -tags e2e -run '^$' -bench ScaleOutThroughput -benchtime 3x ./e2e
func BenchmarkScaleOutThroughput(b *testing.B) {
	spans := 100_000
	if v := os.Getenv("E2E_SCALE_SPANS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("E2E_SCALE_SPANS=%q: want a positive number", v)
		}
		spans = n
	}
	ctx, cancel := context.WithTimeout(b.Context(), 20*time.Minute)
	defer cancel()
	d := newScaleOut(b, ctx)
	router := d.startRouter()
	single := d.startTier2("single")
	for _, t2 := range append(d.tier2, single) {
		t2.Store.Discard()
	}
	setups := []struct {
		name       string
		endpoint   string
		stores     []*scaleout.Store
		collectors []*scaleout.Collector
		runs       []scaleout.Run
	}{
		{name: "two-tier", endpoint: router.Endpoint(),
			stores:     []*scaleout.Store{d.tier2[0].Store, d.tier2[1].Store},
			collectors: []*scaleout.Collector{router, d.tier2[0].Collector, d.tier2[1].Collector}},
		{name: "one", endpoint: single.Endpoint(),
			stores:     []*scaleout.Store{single.Store},
			collectors: []*scaleout.Collector{single.Collector}},
	}
	var servers []string
	for i := range 16 {
		servers = append(servers, fmt.Sprintf("load-%02d", i))
	}
	load := scaleout.Load{Servers: servers}
	measure := func(i, n int) scaleout.Run {
		s := &setups[i]
		r, err := scaleout.Measure(ctx, load, s.endpoint, n, s.stores, s.collectors)
		if err != nil {
			b.Fatalf("%s: %v", s.name, err)
		}
		return r
	}
	// Warm up: connections, the ring, the processors' first index entries.
	for i := range setups {
		measure(i, spans/20)
	}

	round := 0
	for b.Loop() {
		for k := range setups {
			i := (k + round) % len(setups) // alternate which goes first
			setups[i].runs = append(setups[i].runs, measure(i, spans))
		}
		round++
	}

	total := func(runs []scaleout.Run) scaleout.Run {
		var sum scaleout.Run
		for _, r := range runs {
			sum.Spans += r.Spans
			sum.Elapsed += r.Elapsed
			sum.CPU += r.CPU
			if sum.CPUBy == nil {
				sum.CPUBy = map[string]time.Duration{}
			}
			for name, d := range r.CPUBy {
				sum.CPUBy[name] += d
			}
		}
		return sum
	}
	two, one := total(setups[0].runs), total(setups[1].runs)
	b.ReportMetric(two.SpansPerSecond(), "spans/s-two-tier")
	b.ReportMetric(one.SpansPerSecond(), "spans/s-one")
	b.ReportMetric(two.SpansPerSecond()/one.SpansPerSecond(), "two-tier/one")
	b.ReportMetric(two.CPUPerSpan(), "cpu-µs/span-two-tier")
	b.ReportMetric(one.CPUPerSpan(), "cpu-µs/span-one")
	for _, s := range setups {
		for _, r := range s.runs {
			b.Logf("%s: %d spans in %s (%.0f spans/s), %s CPU (%.1f µs/span)", s.name, r.Spans, r.Elapsed.Round(time.Millisecond), r.SpansPerSecond(), r.CPU.Round(time.Millisecond), r.CPUPerSpan())
		}
	}
	for name, d := range two.CPUBy {
		b.Logf("two-tier CPU per span, %s: %.1f µs", name, float64(d.Microseconds())/float64(two.Spans))
	}
}
