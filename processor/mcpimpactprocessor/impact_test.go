package mcpimpactprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpdrift/mcpdrift/semconv"
)

const (
	srv    = "search-api"
	srvURL = "https://mcp.example.com/mcp"
)

func searchSnapshot(at time.Time) snapshot {
	return snapshot{server: srv, url: srvURL, info: "example-search", at: at,
		tools: map[string]string{"search": "d1", "fetch": "f1", "lookup": "l1"}}
}

// supersededSnapshot is the search server serving tools before
// searchSnapshot: calls made with these digests afterwards are stale.
func supersededSnapshot(at time.Time, tools map[string]string) snapshot {
	return snapshot{server: srv, url: srvURL, info: "example-search", at: at, tools: tools}
}

func searchDrift(at time.Time) drift {
	return drift{
		id: "drift-1", server: srv, url: srvURL, at: at,
		previous: map[string]string{"search": "d1", "fetch": "f1", "lookup": "l1"},
		current:  map[string]string{"search": "d2", "fetch": "f2", "lookup": "l2"},
		changes: []change{
			{severity: semconv.DriftSeverityBreaking, subject: "tool", name: "search", rule: "tool.param.required_added"},
			{severity: semconv.DriftSeverityInfo, subject: "tool", name: "search", rule: "tool.required.reordered"},
			{severity: semconv.DriftSeverityCompatible, subject: "tool", name: "fetch", rule: "tool.param.optional_added"},
			{severity: semconv.DriftSeverityWarning, subject: "tool", name: "lookup", rule: "tool.description.changed"},
			{severity: semconv.DriftSeverityBreaking, subject: "prompt", name: "search", rule: "prompt.removed"},
		},
	}
}

func TestDriftAfterCalls(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-5 * time.Hour))))
	h.sendSpans(callsOf(
		call{agent: "planner", service: "agents", server: srv, url: srvURL, tool: "search", session: "s1", digest: "d1", at: t0.Add(-10 * time.Minute)},
		call{agent: "planner", service: "agents", server: srv, url: srvURL, tool: "search", session: "s2", digest: "d1", at: t0.Add(-5 * time.Minute), failed: true},
		call{agent: "planner", service: "agents", server: srv, url: srvURL, tool: "search", session: "s2", digest: "d1", at: t0.Add(-4 * time.Minute)},
		call{service: "writer-svc", server: srv, url: srvURL, tool: "search", session: "s3", digest: "d1", at: t0.Add(-3 * time.Hour)},
		call{agent: "planner", service: "agents", server: srv, url: srvURL, tool: "fetch", session: "s1", digest: "f1", at: t0.Add(-time.Minute)},
	))

	recs := h.sendLogs(driftLogs(searchDrift(t0)))
	require.Len(t, recs, 4, "the drift, then search×planner, search×writer-svc, lookup (no callers)")

	d := recs[0]
	assert.Equal(t, semconv.EventDrift, d.EventName())
	agents, _ := d.Attributes().Get(semconv.ImpactAgents)
	sessions, _ := d.Attributes().Get(semconv.ImpactSessions)
	calls, _ := d.Attributes().Get(semconv.ImpactCalls)
	assert.Equal(t, int64(2), agents.Int())
	assert.Equal(t, int64(3), sessions.Int())
	assert.Equal(t, int64(4), calls.Int(), "fetch changed only compatibly: its calls do not count")

	planner := readImpact(t, recs[1])
	assert.Equal(t, impactOf{
		driftID: "drift-1", server: srv, tool: "search", agent: "planner", hasAgent: true,
		severity: semconv.DriftSeverityBreaking, risk: semconv.ImpactRiskHigh,
		lastCall: t0.Add(-4 * time.Minute).Format(time.RFC3339),
		sessions: 2, calls: 3, errors: 1, before: 3, sessionIDs: []string{"s2", "s1"},
		body: planner.body,
	}, planner)
	assert.Contains(t, planner.body, `agent "planner" made 3 calls in 2 sessions in the last 24h, 3 with the previous definition before the change; risk high`)

	writer := readImpact(t, recs[2])
	assert.Equal(t, "writer-svc", writer.agent, "agent falls back to service.name")
	assert.Equal(t, semconv.ImpactRiskMedium, writer.risk, "breaking, but the old-digest call is older than recent_window")
	assert.Equal(t, int64(1), writer.calls)

	lookup := readImpact(t, recs[3])
	assert.True(t, lookup.noCallers)
	assert.False(t, lookup.hasAgent)
	assert.Equal(t, "lookup", lookup.tool)
	assert.Equal(t, semconv.DriftSeverityWarning, lookup.severity)
	assert.Equal(t, semconv.ImpactRiskLow, lookup.risk)
	assert.Zero(t, lookup.calls)
	assert.Contains(t, lookup.body, "no recent callers in the last 24h")
}

func TestDriftBeforeCalls(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	recs := h.sendLogs(driftLogs(searchDrift(t0)))
	require.Len(t, recs, 3, "the drift and one no-callers record per changed tool")
	for _, r := range recs[1:] {
		assert.True(t, readImpact(t, r).noCallers)
	}
	n, _ := recs[0].Attributes().Get(semconv.ImpactCalls)
	assert.Zero(t, n.Int())

	h.clock.Advance(time.Minute)
	out := h.sendSpans(callsOf(
		call{agent: "planner", server: srv, url: srvURL, tool: "search", session: "s1", digest: "d1", at: h.clock.Now()},
		call{agent: "planner", server: srv, url: srvURL, tool: "search", session: "s2", digest: "d2", at: h.clock.Now()},
		call{agent: "planner", server: srv, url: srvURL, tool: "gone", session: "s2", digest: "x", at: h.clock.Now()},
	))
	spans := out.ResourceSpans()
	cur, stale, judged := spanVerdict(spans.At(0).ScopeSpans().At(0).Spans().At(0))
	assert.True(t, judged)
	assert.Equal(t, "d2", cur)
	assert.True(t, stale, "called with the definition from before the drift")
	cur, stale, judged = spanVerdict(spans.At(1).ScopeSpans().At(0).Spans().At(0))
	assert.True(t, judged)
	assert.Equal(t, "d2", cur)
	assert.False(t, stale)
	gone := spans.At(2).ScopeSpans().At(0).Spans().At(0)
	cur, stale, judged = spanVerdict(gone)
	assert.True(t, judged)
	assert.Empty(t, cur, "the server does not offer the tool")
	assert.False(t, stale, "a definition no probe has shown is never stale")
	assert.Equal(t, semconv.StalenessAhead, spanStaleness(gone), "no probe since the call")

	// A second drift now sees the calls: one stale, one with drift-2's
	// previous digest.
	h.clock.Advance(time.Minute)
	d := searchDrift(h.clock.Now())
	d.id = "drift-2"
	d.previous, d.current = d.current, map[string]string{"search": "d3", "fetch": "f2", "lookup": "l2"}
	recs = h.sendLogs(driftLogs(d))
	im := readImpact(t, recs[1])
	assert.Equal(t, "search", im.tool)
	assert.Equal(t, int64(2), im.calls)
	assert.Equal(t, int64(1), im.before, "d2 is the previous digest of drift-2")
	assert.Equal(t, int64(1), im.stale, "d1 was stale when called")
	assert.Zero(t, im.unknown)
}

func TestLateSpanForCallBeforeDrift(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-2 * time.Hour))))
	h.clock.Advance(10 * time.Minute)
	h.sendLogs(driftLogs(searchDrift(t0)))

	// Exported late: the call was made before the drift, with the
	// definition current at the time.
	late := h.sendSpans(callsOf(call{agent: "planner", server: srv, url: srvURL, tool: "search", session: "s1", digest: "d1", at: t0.Add(-30 * time.Minute)}))
	cur, stale, judged := spanVerdict(onlySpan(t, late))
	require.True(t, judged)
	assert.Equal(t, "d1", cur, "the digest current when the call was made")
	assert.False(t, stale)

	// A client that refreshed before the probe noticed is ahead, not stale.
	early := h.sendSpans(callsOf(call{agent: "planner", server: srv, url: srvURL, tool: "search", session: "s1", digest: "d2", at: t0.Add(-time.Minute)}))
	cur, stale, _ = spanVerdict(onlySpan(t, early))
	assert.Equal(t, "d2", cur, "the server had changed by then: the probe saw it late")
	assert.False(t, stale)

	// Both calls are in the index at their own time: the next drift counts
	// them, and the late one's time is its own, not its arrival's.
	h.clock.Advance(time.Minute)
	d := searchDrift(h.clock.Now())
	d.id = "drift-2"
	recs := h.sendLogs(driftLogs(d))
	im := readImpact(t, recs[1])
	assert.Equal(t, int64(2), im.calls)
	assert.Equal(t, t0.Add(-time.Minute).Format(time.RFC3339), im.lastCall)
}
