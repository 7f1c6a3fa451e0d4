package mcpimpactprocessor

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mcpdrift/mcpdrift/semconv"
)

func TestEvictionAtTheBound(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.MaxIndexEntries = 160
	h := newHarness(t, cfg)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-2 * time.Hour))))
	// 200 sessions, one a second, oldest first.
	for i := range 200 {
		at := t0.Add(time.Duration(i-200) * time.Second)
		h.sendSpans(callsOf(call{agent: "planner", server: srv, url: srvURL, tool: "search", session: fmt.Sprintf("s%03d", i), digest: "d1", at: at}))
	}
	// Each time the index is full a sweep takes the oldest 1/16 (10) out.
	assert.Equal(t, 160, entriesGauge(t, h))
	assert.Equal(t, map[string]int64{"capacity": 40}, evictions(t, h))

	cfg.MaxSessionsPerRecord = 3
	recs := h.sendLogs(driftLogs(searchDrift(t0)))
	im := readImpact(t, recs[1])
	assert.Equal(t, int64(160), im.sessions, "the 40 oldest went")
	assert.Equal(t, []string{"s199", "s198", "s197"}, im.sessionIDs, "most recent first, bounded")
}

func TestMakeRoomTakesTheOldest(t *testing.T) {
	ix := newIndex(64)
	k := callKey{server: identity{name: "s"}, tool: "t", agent: "a"}
	// Entries in scrambled time order.
	for i := range 64 {
		k.session = fmt.Sprint(i)
		at := uint32(1000 + (i*37)%64)
		ix.record(&k, entry{first: at, last: at, calls: 1}, 1)
	}
	k.session = "new"
	ix.record(&k, entry{first: 2000, last: 2000, calls: 1}, 1)
	assert.Equal(t, 64-4+1, ix.size)
	assert.Equal(t, 4, ix.takeRemovals().capacity)
	var oldest uint32 = 1 << 31
	for _, e := range ix.buckets[0].entries {
		if e.calls > 0 {
			oldest = min(oldest, e.last)
		}
	}
	assert.Equal(t, uint32(1004), oldest, "the four oldest (1000-1003) went")
	assert.Equal(t, 64-4+1, ix.sessions.live(), "their session ids were freed")
}

func TestWindowExpiry(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	h.sendSpans(callsOf(
		call{agent: "planner", server: srv, url: srvURL, tool: "search", session: "s1", digest: "d1", at: t0},
		call{agent: "writer", server: srv, url: srvURL, tool: "search", session: "s2", digest: "d1", at: t0.Add(-30 * time.Minute)},
	))

	h.clock.Advance(45 * time.Minute)
	recs := h.sendLogs(driftLogs(searchDrift(h.clock.Now())))
	assert.Equal(t, semconv.ImpactRiskHigh, readImpact(t, recs[1]).risk, "planner called with the old digest 45 min ago")
	assert.Equal(t, semconv.ImpactRiskMedium, readImpact(t, recs[2]).risk, "writer's call was 75 min ago: outside recent_window")

	h.clock.Advance(23*time.Hour + 20*time.Minute) // planner's call is 24h05m old, writer's 24h35m
	recs = h.sendLogs(driftLogs(searchDrift(h.clock.Now())))
	assert.True(t, readImpact(t, recs[1]).noCallers)

	// The next batch sweeps the expired entries out of memory.
	h.sendSpans(callsOf(call{agent: "other", server: srv, url: srvURL, tool: "fetch", session: "s3", digest: "f1", at: h.clock.Now()}))
	assert.Equal(t, 1, entriesGauge(t, h))
	assert.Equal(t, map[string]int64{"window": 2}, evictions(t, h))
}

func TestSpansOutsideTheWindowAreNotIndexed(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(supersededSnapshot(t0.Add(-49*time.Hour), map[string]string{"search": "d0"})))
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-48 * time.Hour))))
	out := h.sendSpans(callsOf(call{agent: "a", server: srv, url: srvURL, tool: "search", session: "s", digest: "d0", at: t0.Add(-25 * time.Hour)}))
	_, stale, judged := spanVerdict(onlySpan(t, out))
	assert.True(t, judged, "still judged")
	assert.True(t, stale)
	assert.Zero(t, entriesGauge(t, h))
}

func TestFutureSpansCountAsNow(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	h.sendSpans(callsOf(call{agent: "a", server: srv, url: srvURL, tool: "search", session: "s", digest: "d1", at: t0.Add(48 * time.Hour)}))
	h.clock.Advance(25 * time.Hour)
	recs := h.sendLogs(driftLogs(searchDrift(h.clock.Now())))
	assert.True(t, readImpact(t, recs[1]).noCallers, "a skewed clock does not keep a call alive past the window")
}

// TestSessionFloodStaysBounded sends one million calls, each with a new
// session id, through the traces path of a processor bounded to 50,000
// entries.
func TestSessionFloodStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("one million spans")
	}
	const bound, calls, batch = 50_000, 1_000_000, 2_000
	cfg := createDefaultConfig().(*Config)
	cfg.MaxIndexEntries = bound
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	h := newHarness(t, cfg)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	// One batch of spans, made once and set to each batch's calls in place:
	// building a million spans anew cost as much CPU as processing them.
	td := ptrace.NewTraces()
	for b := 0; b < calls/batch; b++ {
		for i := range batch {
			n := b*batch + i
			c := call{agent: fmt.Sprintf("agent-%d", n%7), server: srv, url: srvURL, tool: "search",
				session: fmt.Sprintf("%08x-flood-session-%012x", n, n), digest: "d1", at: t0.Add(-time.Duration(calls-n) * time.Millisecond)}
			if b == 0 {
				interceptorSpan(td, c)
				continue
			}
			rs := td.ResourceSpans().At(i)
			setInterceptorSpan(rs, rs.ScopeSpans().At(0).Spans().At(0), c)
		}
		require.NoError(t, h.traces.ConsumeTraces(context.Background(), td))
		h.spans.Reset()
	}
	size := entriesGauge(t, h)
	assert.LessOrEqual(t, size, bound)
	assert.Greater(t, size, bound*15/16-1)
	assert.Equal(t, int64(calls-size), evictions(t, h)["capacity"])

	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap grew by %d bytes for %d entries (%.0f B/entry)", grown, size, float64(grown)/float64(size))
	assert.Less(t, grown, int64(bound*256), "at most 256 bytes per entry, everything included")

	recs := h.sendLogs(driftLogs(searchDrift(t0)))
	total := int64(0)
	for _, r := range recs[1:] {
		im := readImpact(t, r)
		if im.noCallers {
			continue
		}
		total += im.sessions
		assert.Len(t, im.sessionIDs, cfg.MaxSessionsPerRecord)
	}
	assert.Equal(t, int64(size), total)
}

func entriesGauge(t *testing.T, h *harness) int {
	t.Helper()
	m, err := h.tel.GetMetric("otelcol_processor_mcpimpact_index_entries")
	require.NoError(t, err)
	dps := m.Data.(metricdata.Gauge[int64]).DataPoints
	require.Len(t, dps, 1)
	return int(dps[0].Value)
}

func evictions(t *testing.T, h *harness) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	m, err := h.tel.GetMetric("otelcol_processor_mcpimpact_index_evictions")
	if err != nil {
		return got
	}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		v, _ := dp.Attributes.Value("reason")
		got[v.AsString()] += dp.Value
	}
	return got
}

// TestEntrySize: an entry is 48 bytes (docs/mcpimpact.md, "Index
// layout"); the memory budget per entry counts on it.
func TestEntrySize(t *testing.T) {
	assert.Equal(t, uintptr(48), unsafe.Sizeof(entry{}))
}

// TestEntryLatestCalls: merged calls keep when the latest stale and the
// latest failed call were, and the stored index keeps them.
func TestEntryLatestCalls(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	st := newState(cfg)
	k := callKey{server: identity{name: srv}, tool: "search", agent: "a", session: "s", digest: "d1"}
	st.index.record(&k, entry{first: 1000, last: 1000, calls: 1, stale: 1}, 1)
	st.index.record(&k, entry{first: 1050, last: 1050, calls: 1, errors: 1}, 1)
	st.index.record(&k, entry{first: 1100, last: 1100, calls: 1}, 1)
	e := st.index.find(&k)
	require.NotNil(t, e)
	assert.Equal(t, [3]uint32{1000, 1050, 1100}, [3]uint32{e.lastStale(), e.lastError(), e.lastFresh()})

	back := newState(cfg)
	_, err := decodeIndex(encodeIndex(st.index), back.index, 1)
	require.NoError(t, err)
	assert.Equal(t, *e, *back.index.find(&k))

	st.index.record(&k, entry{first: 1100, last: 1100, calls: 1, stale: 1}, 1)
	assert.Equal(t, uint32(0), e.lastFresh(), "a stale call in the same second as the latest other one counts as the later")
}
