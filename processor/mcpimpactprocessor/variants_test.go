package mcpimpactprocessor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/mcpdrift/mcpdrift/semconv"
)

// perVariantImpact is the path variantsImpact replaced: per variant, one
// impact per side, each walking the changed tools' entries. The one pass
// must answer what it answers (TestVariantsImpactOnePass), and
// BenchmarkVariantImpact1M times it beside the one pass.
func perVariantImpact(st *state, target *server, previous map[string]string, v variantChanges, now time.Time, span time.Duration) variantResult {
	hurt := st.impact(target, v.changes, previous, v.current, now, span, 0, variantSide)
	later := st.impact(target, v.changes, previous, v.current, now, span, 0, baselineSide)
	all := make([]toolImpact, len(v.changes))
	for i := range v.changes {
		all[i] = toolImpact{toolChange: v.changes[i], agents: slices.Concat(hurt.tools[i].agents, later.tools[i].agents)}
	}
	return variantResult{all: driftImpact{tools: all}, hurt: hurt, later: later}
}

// TestVariantsImpactOnePass: on a seeded index, the one pass answers every
// variant exactly as the per-variant path does: variants that share a
// tool's digest, change different tools, keep the baseline's digest or
// name one never called; calls of every kind (failed, stale, ahead, timed,
// with another digest or none, without a session, named by the server's
// URL or by no server) in and out of the window; groups small and large
// (the two ways a slot's sessions are counted); more variants than one pass takes.
func TestVariantsImpactOnePass(t *testing.T) {
	clock := newClock()
	cfg := createDefaultConfig().(*Config)
	cfg.MaxIndexEntries = 50_000
	cfg.RecentWindow = 20 * time.Minute
	p, err := newImpactProcessor(processortest.NewNopSettings(processortest.NopType), cfg, clock.Now)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	tools := []string{"t0", "t1", "t2", "t3"}
	digest := func(tool string, n int) string { return fmt.Sprintf("%s-d%d", tool, n) }
	previous := map[string]string{}
	for _, tool := range tools {
		previous[tool] = digest(tool, 0)
	}
	const url = "http://svc.example/mcp"
	_, err = p.processLogs(context.Background(), snapshotLogs(snapshot{server: "svc", url: url, at: clock.Now(), tools: previous}))
	require.NoError(t, err)
	st := p.state

	rng := rand.New(rand.NewPCG(25, 2))
	now := unixSec(clock.Now().UnixNano())
	cutoff := unixSec(clock.Now().Add(-cfg.Window).UnixNano())
	servers := []identity{{name: "svc"}, {url: url}, {}}
	record := func(agent string, n int) {
		for range n {
			tool := tools[rng.IntN(len(tools))]
			k := callKey{server: servers[rng.IntN(len(servers))], tool: tool, agent: agent,
				session: fmt.Sprintf("s%d", rng.IntN(3000)), digest: digest(tool, rng.IntN(4))}
			switch rng.IntN(10) {
			case 0:
				k.session = ""
			case 1:
				k.digest = ""
			}
			last := now - uint32(rng.IntN(int(1.5*cfg.Window.Seconds())))
			e := entry{calls: 1 + uint32(rng.IntN(5)), first: last - uint32(rng.IntN(600)), last: last}
			e.errors, e.stale = uint32(rng.IntN(int(e.calls)+1)), uint32(rng.IntN(int(e.calls)+1))
			e.ahead = uint32(rng.IntN(int(e.calls-e.stale) + 1))
			if rng.IntN(2) == 0 {
				e.timed, e.latency = e.calls, uint64(rng.IntN(1e6))
			}
			e.staleAgo, e.errorAgo = ago(e.last, e.first, e.stale), ago(e.last, e.first, e.errors)
			st.index.record(&k, e, cutoff)
		}
	}
	for a := range 3 {
		record(fmt.Sprintf("busy-%d", a), 4000)
	}
	for a := range 8 {
		record(fmt.Sprintf("rare-%d", a), 1+a)
	}
	record("", 50) // spans that named no agent

	target := st.contracts.servers["svc"]
	require.NotNil(t, target)
	// Both ways of counting a slot's sessions are taken: from its marks (a
	// group of at most `few` entries has no more), by popcount (a group of
	// many more, over five digests).
	st.scratch.grow(st.index.sessions.span())
	few := len(st.scratch.group) / 8
	small, large := 0, 0
	for _, tool := range tools {
		for _, buckets := range st.bucketsByAgent(st.serverIDs(target), target, tool) {
			n := 0
			for _, bid := range buckets {
				n += len(st.index.buckets[bid].entries)
			}
			switch {
			case n <= few:
				small++
			case n > 20*few:
				large++
			}
		}
	}
	require.Positive(t, small, "no group with few sessions")
	require.Positive(t, large, "no group with many")

	severities := []string{semconv.DriftSeverityBreaking, semconv.DriftSeverityWarning}
	var variants []variantChanges
	for v := range maxVariantsPerPass + 5 {
		vc := variantChanges{current: map[string]string{}}
		for _, i := range rng.Perm(len(tools))[:1+v%3] {
			tool := tools[i]
			vc.changes = append(vc.changes, toolChange{tool: tool, severity: severities[rng.IntN(2)]})
			switch n := rng.IntN(6); n {
			case 4:
				vc.current[tool] = "never-called"
			case 5:
				// removed: no digest
			default:
				vc.current[tool] = digest(tool, n) // n 0: the baseline's own
			}
		}
		variants = append(variants, vc)
	}

	for _, span := range []time.Duration{cfg.Window, 30 * time.Minute} {
		got := st.variantsImpact(target, previous, variants, clock.Now(), span)
		require.Len(t, got, len(variants))
		var hurt, later int64
		for i, vc := range variants {
			want := perVariantImpact(st, target, previous, vc, clock.Now(), span)
			require.Equal(t, want, got[i], "variant %d over %s", i, span)
			hurt += got[i].hurt.calls
			later += got[i].later.calls
		}
		require.Positive(t, hurt, "no variant served a call")
		require.Positive(t, later, "no call served by the baseline")
	}
}
