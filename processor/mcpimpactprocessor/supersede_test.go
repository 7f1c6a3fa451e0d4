package mcpimpactprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/processor/mcpimpactprocessor/internal/metadatatest"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestDriftLandingLateMakesOldCallsStale: calls made with the previous
// digest after the change (the drift's time) but before the drift reached
// the processor were judged current, and their spans say so; once the
// drift lands they are stale in the index, the impact record, the control
// plane and the stale-call metric, all alike. An entry that straddles the
// change counts its latest call only; a call already stale is not counted
// twice; another listing does not count them again.
func TestDriftLandingLateMakesOldCallsStale(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	h.sendSpans(callsOf(
		sessionCall("before", "d1", -10*time.Minute, false),
		sessionCall("straddles", "d1", -5*time.Minute, false),
	))
	h.clock.Advance(30 * time.Second) // the drift at t0 has not landed yet
	late := h.sendSpans(callsOf(
		sessionCall("after", "d1", 5*time.Second, false),
		sessionCall("after", "d1", 20*time.Second, true),
		sessionCall("straddles", "d1", 10*time.Second, false),
	))
	for i := range late.ResourceSpans().Len() {
		span := late.ResourceSpans().At(i).ScopeSpans().At(0).Spans().At(0)
		assert.Equal(t, semconv.StalenessCurrent, spanStaleness(span), "judged before the drift landed")
	}
	refused := callsOf(sessionCall("refused", "d1", 15*time.Second, false))
	onlySpan(t, refused).Attributes().PutStr(semconv.GuardRefusal, semconv.RefusalStaleToolSchema)
	h.sendSpans(refused)

	recs := h.sendLogs(driftLogs(searchDrift(t0)))
	im := readImpact(t, recs[1])
	assert.Equal(t, "search", im.tool)
	assert.Equal(t, int64(6), im.calls)
	assert.Equal(t, int64(4), im.stale, "after's two, straddles' latest, the refused one")
	assert.Equal(t, int64(2), im.before, "before's call, and straddles' call before the change")
	assert.Equal(t, semconv.ImpactRiskHigh, im.risk)

	check := func(when string) {
		t.Helper()
		out, err := query(t, h, srv, "search", time.Hour)
		require.NoError(t, err)
		assert.Equal(t, int64(4), out.Totals.Stale, when)
		assert.Equal(t, int64(2), out.Totals.Before, when)
		require.NotNil(t, out.Totals.Recovery, when)
		assert.Equal(t, apiwire.Recovery{StillStale: 3, Idle: 1}, *out.Totals.Recovery, when)
		metadatatest.AssertEqualProcessorMcpimpactStaleCalls(t, h.tel, []metricdata.DataPoint[int64]{{
			Value: 4,
			Attributes: attribute.NewSet(
				attribute.String(semconv.ServerName, srv),
				attribute.String(semconv.GenAIToolName, "search"),
				attribute.String(semconv.GenAIAgentName, "claude-code")),
		}}, metricdatatest.IgnoreTimestamp())
	}
	check("after the drift")

	// The receiver's next snapshot repeats what the drift said: nothing
	// more is re-judged.
	h.clock.Advance(time.Minute)
	h.sendLogs(snapshotLogs(supersededSnapshot(h.clock.Now(), map[string]string{"search": "d2", "fetch": "f2", "lookup": "l2"})))
	check("after the next snapshot")
}

// TestSupersedeCases: what a listing that lands after the calls makes of
// them, entry by entry. The history is d1 until the first listing; the
// late listings come after every call.
func TestSupersedeCases(t *testing.T) {
	type at = time.Duration
	type late struct {
		at     at
		digest string
	}
	cases := []struct {
		name      string
		calls     []at // of one session with digest d1 (or digest, when set)
		digest    string
		refused   int // of the calls, the last refused ones
		listings  []late
		wantStale uint32
	}{
		{name: "all after the change", calls: []at{5 * time.Second, 9 * time.Second}, listings: []late{{0, "d2"}}, wantStale: 2},
		{name: "all before the change", calls: []at{-9 * time.Second, -5 * time.Second}, listings: []late{{0, "d2"}}, wantStale: 0},
		{name: "straddles: the latest only", calls: []at{-9 * time.Second, 2 * time.Second, 5 * time.Second}, listings: []late{{0, "d2"}}, wantStale: 1},
		{name: "straddles, latest refused already", calls: []at{-9 * time.Second, 5 * time.Second}, refused: 1, listings: []late{{0, "d2"}}, wantStale: 1},
		{name: "within the change's second", calls: []at{700 * time.Millisecond}, listings: []late{{500 * time.Millisecond, "d2"}}, wantStale: 0},
		{name: "the new digest", digest: "d2", calls: []at{5 * time.Second}, listings: []late{{0, "d2"}}, wantStale: 0},
		// Each listing is learned as it lands: between the two, a span of
		// the call would have been judged stale too, and the count stays.
		{name: "changed back before the calls, learned late", calls: []at{5 * time.Second}, listings: []late{{-10 * time.Second, "d2"}, {0, "d1"}}, wantStale: 1},
		{name: "changed back after the calls", calls: []at{5 * time.Second}, listings: []late{{0, "d2"}, {10 * time.Second, "d1"}}, wantStale: 1},
		{name: "two changes in a row, on the middle one", digest: "d2", calls: []at{5 * time.Second, 15 * time.Second}, listings: []late{{0, "d2"}, {10 * time.Second, "d3"}}, wantStale: 1},
		{name: "two changes in a row, on the first", calls: []at{5 * time.Second, 15 * time.Second}, listings: []late{{0, "d2"}, {10 * time.Second, "d3"}}, wantStale: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newState(createDefaultConfig().(*Config))
			now := t0.Add(time.Minute)
			list := func(at time.Time, d string) []string {
				changed, ok := st.contracts.apply(&listing{name: srv, url: srvURL, at: at.UnixNano(), digests: map[string]string{"search": d}})
				require.True(t, ok)
				return changed
			}
			list(t0.Add(-time.Hour), "d1")
			digest := tc.digest
			if digest == "" {
				digest = "d1"
			}
			calls := make([]toolCall, len(tc.calls))
			for i, a := range tc.calls {
				calls[i] = toolCall{key: callKey{server: identity{name: srv}, tool: "search", agent: "a", session: "s", digest: digest},
					at: t0.Add(a).UnixNano(), latency: -1, guardStale: i >= len(tc.calls)-tc.refused}
			}
			st.observe(calls, now, nil)
			var rejudged int64
			for _, l := range tc.listings {
				for _, r := range st.learned(st.contracts.servers[srv], list(t0.Add(l.at), l.digest), now) {
					rejudged += r.calls
				}
			}
			e := onlyEntry(t, st.index)
			assert.Equal(t, tc.wantStale, e.stale)
			assert.Equal(t, int64(tc.wantStale)-int64(tc.refused), rejudged, "what the metric adds")
			if e.stale > 0 {
				assert.Equal(t, e.last, e.lastStale(), "the latest call is the stale one")
			}
			// Learning the same again changes nothing.
			assert.Empty(t, st.learned(st.contracts.servers[srv], []string{"search"}, now))
		})
	}
}

func onlyEntry(t *testing.T, ix *index) *entry {
	t.Helper()
	var found *entry
	for _, b := range ix.buckets {
		for i := range b.entries {
			if b.entries[i].calls > 0 {
				require.Nil(t, found, "one entry")
				found = &b.entries[i]
			}
		}
	}
	require.NotNil(t, found)
	return found
}
