package mcpimpactprocessor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestSpanStaleness: what the processor writes on a span, for each verdict,
// and what the index and the impact make of it. The search server served
// d0, then d1 from t0-1h; drift-1 at t0 makes it d2.
func TestSpanStaleness(t *testing.T) {
	refused := func(s ptrace.Span) {
		s.Attributes().PutStr(semconv.GuardRefusal, semconv.RefusalStaleToolSchema)
		s.Attributes().PutStr(semconv.GuardPlannedDigest, "d1")
		s.Attributes().PutStr(semconv.ErrorType, semconv.ErrorTypeRefused)
	}
	guardMarked := func(s ptrace.Span) { s.Attributes().PutBool(semconv.GuardStaleDefinition, true) }
	guardRefused := func(s ptrace.Span) { // what interceptor.Refusal records
		s.Attributes().PutStr(semconv.GuardRefusal, semconv.RefusalStaleToolSchema)
		s.Attributes().PutBool(semconv.ToolStale, true)
		s.Attributes().PutStr(semconv.GuardStaleBasis, "arguments")
	}
	for _, tc := range []struct {
		name    string
		digest  string
		at      time.Duration // after t0
		tweak   func(ptrace.Span)
		want    string // mcpdrift.tool.staleness
		current string
	}{
		{name: "current", digest: "d1", at: -time.Minute, want: semconv.StalenessCurrent, current: "d1"},
		{name: "superseded before the call", digest: "d0", at: -time.Minute, want: semconv.StalenessStale, current: "d1"},
		{name: "stale after the drift", digest: "d1", at: time.Minute, want: semconv.StalenessStale, current: "d2"},
		{name: "the host re-listed before the probe", digest: "d2", at: -time.Minute, want: semconv.StalenessCurrent, current: "d2"},
		{name: "never seen, after the last observation", digest: "d9", at: time.Minute, want: semconv.StalenessAhead, current: "d2"},
		{name: "never seen, observed since", digest: "d9", at: -time.Minute, want: semconv.StalenessUnknown, current: "d1"},
		{name: "refused by the gate, host already re-listed", digest: "d2", at: time.Minute, tweak: refused, want: semconv.StalenessStale, current: "d2"},
		{name: "marked by the guard", digest: "d2", at: time.Minute, tweak: guardMarked, want: semconv.StalenessStale, current: "d2"},
		{name: "refused by the Go guard", digest: "d2", at: time.Minute, tweak: guardRefused, want: semconv.StalenessStale, current: "d2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.sendLogs(snapshotLogs(supersededSnapshot(t0.Add(-2*time.Hour), map[string]string{"search": "d0"})))
			h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
			h.sendLogs(driftLogs(searchDrift(t0)))
			h.clock.Advance(2 * time.Minute)
			td := callsOf(call{agent: "claude-code", server: srv, url: srvURL, tool: "search", session: "s1", digest: tc.digest, at: t0.Add(tc.at)})
			if tc.tweak != nil {
				tc.tweak(onlySpan(t, td))
			}
			span := onlySpan(t, h.sendSpans(td))
			current, stale, judged := spanVerdict(span)
			require.True(t, judged)
			assert.Equal(t, tc.want, spanStaleness(span))
			assert.Equal(t, tc.want == semconv.StalenessStale, stale)
			assert.Equal(t, tc.current, current)

			out, err := query(t, h, srv, "search", 24*time.Hour)
			require.NoError(t, err)
			require.Len(t, out.Agents, 1)
			d := out.Agents[0].Digests
			assert.Equal(t, int64(1), d.Before+d.Stale+d.New+d.Ahead+d.Unknown, "the classes add up to the calls")
			wantStale := int64(0)
			if stale {
				wantStale = 1
			}
			assert.Equal(t, wantStale, d.Stale, "the index's stale count is the count of stale spans")
			assert.Equal(t, wantStale, out.Totals.Stale)
			if tc.want == semconv.StalenessAhead {
				assert.Equal(t, int64(1), d.Ahead)
			}
		})
	}
}

// TestRefusedCallImpact: a call the gate refused as stale makes the next
// drift's impact high for its agent, however fresh its digest looks.
func TestRefusedCallImpact(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	h.sendLogs(driftLogs(searchDrift(t0)))
	h.clock.Advance(time.Minute)
	td := callsOf(call{agent: "claude-code", server: srv, url: srvURL, tool: "search", session: "s1", digest: "d2", at: h.clock.Now()})
	onlySpan(t, td).Attributes().PutStr(semconv.GuardRefusal, semconv.RefusalStaleToolSchema)
	h.sendSpans(td)

	d := searchDrift(h.clock.Now())
	d.id = "drift-2"
	d.previous, d.current = d.current, map[string]string{"search": "d3", "fetch": "f2", "lookup": "l2"}
	recs := h.sendLogs(driftLogs(d))
	im := readImpact(t, recs[1])
	assert.Equal(t, "claude-code", im.agent)
	assert.Equal(t, semconv.ImpactRiskHigh, im.risk)
	assert.Equal(t, int64(1), im.stale)
	assert.Contains(t, im.body, "1 stale")
}

// fakeRegistry stands for the control plane: it records prompt-probe
// requests; the test lands them.
type fakeRegistry struct {
	mu       sync.Mutex
	requests []string
	done     []func(controlplane.Observation)
}

func (f *fakeRegistry) RegisterDriftSource(component.ID, controlplane.DriftSource) (func(), error) {
	return func() {}, nil
}

func (f *fakeRegistry) RegisterImpactSource(component.ID, controlplane.ImpactSource) (func(), error) {
	return func() {}, nil
}

func (f *fakeRegistry) landing(i int) func(controlplane.Observation) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.done[i]
}

func (f *fakeRegistry) requestsSoFar() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

func (f *fakeRegistry) RequestProbe(server string, done func(controlplane.Observation)) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, server)
	f.done = append(f.done, done)
	return true
}

// TestPromptProbeSettlesAheadCalls: a digest no probe has shown asks for
// one prompt probe of its server (not one per call, and again only after
// prompt_probe_interval, sent when the interval is up); when it lands, the calls judged ahead are re-judged
// in the index, and none of them becomes stale.
func TestPromptProbeSettlesAheadCalls(t *testing.T) {
	h := newHarness(t, nil)
	reg := &fakeRegistry{}
	p := instance(t, h)
	const every = 300 * time.Millisecond
	p.probes = newPromptProbes(reg, every, p.probeLanded)
	t.Cleanup(p.probes.stop)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))

	h.sendSpans(callsOf(
		call{agent: "claude-code", server: srv, url: srvURL, tool: "search", session: "s1", digest: "d2", at: t0},
		call{agent: "claude-code", server: srv, url: srvURL, tool: "search", session: "s2", digest: "d2", at: t0},
		call{agent: "claude-code", server: srv, url: srvURL, tool: "search", session: "s3", digest: "d7", at: t0},
	))
	h.sendSpans(callsOf(call{agent: "claude-code", server: srv, url: srvURL, tool: "search", session: "s1", digest: "d2", at: t0}))
	assert.Equal(t, []string{srv}, reg.requestsSoFar(), "one request per target while the first is recent")

	out, err := query(t, h, srv, "search", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, apiwire.DigestUsed{Ahead: 4}, out.Agents[0].Digests)

	// The probe lands: the server serves d2 (not confirmed by any drift).
	reg.landing(0)(controlplane.Observation{Server: srv, At: h.clock.Now(), ToolDigests: map[string]string{"search": "d2", "fetch": "f1", "lookup": "l1"}})
	out, err = query(t, h, srv, "search", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, apiwire.DigestUsed{New: 3, Unknown: 1}, out.Agents[0].Digests,
		"d2 is served now; d7 was not served when the probe looked")
	assert.Zero(t, out.Totals.Stale)
	assert.Zero(t, instance(t, h).state.index.ahead)

	// A later call with a digest no probe has shown, within the interval,
	// asks again when the interval is up, once.
	h.clock.Advance(every / 3)
	h.sendSpans(callsOf(call{agent: "claude-code", server: srv, url: srvURL, tool: "search", session: "s4", digest: "d8", at: h.clock.Now()}))
	h.sendSpans(callsOf(call{agent: "claude-code", server: srv, url: srvURL, tool: "search", session: "s4", digest: "d8", at: h.clock.Now()}))
	assert.Len(t, reg.requestsSoFar(), 1, "deferred")
	require.Eventually(t, func() bool { return len(reg.requestsSoFar()) == 2 }, 10*time.Second, 5*time.Millisecond)

	// A failed probe changes nothing.
	reg.landing(1)(controlplane.Observation{Server: srv, At: h.clock.Now(), Err: context.DeadlineExceeded})
	out, err = query(t, h, srv, "search", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, int64(2), out.Agents[0].Digests.Ahead)

	// A confirmed listing settles them too.
	h.clock.Advance(time.Second)
	h.sendLogs(snapshotLogs(supersededSnapshot(h.clock.Now(), map[string]string{"search": "d8"})))
	out, err = query(t, h, srv, "search", time.Hour)
	require.NoError(t, err)
	assert.Zero(t, out.Agents[0].Digests.Ahead)
	assert.Equal(t, int64(2), out.Agents[0].Digests.New, "d8 is the current digest")
}

// fakeTimers stands for time.AfterFunc in promptProbes: the test runs
// what is due.
type fakeTimers struct {
	mu      sync.Mutex
	pending []fakeTimer
}

type fakeTimer struct {
	after time.Duration
	f     func()
}

func (ft *fakeTimers) afterFunc(d time.Duration, f func()) func() bool {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.pending = append(ft.pending, fakeTimer{d, f})
	return func() bool { return true }
}

// fire runs the timers set so far and returns their delays.
func (ft *fakeTimers) fire() []time.Duration {
	ft.mu.Lock()
	due := ft.pending
	ft.pending = nil
	ft.mu.Unlock()
	var out []time.Duration
	for _, tm := range due {
		out = append(out, tm.after)
		tm.f()
	}
	return out
}

// TestFailedPromptProbeRetries: a prompt probe that fails is asked again
// when prompt_probe_interval allows, while calls wait on it, up to
// maxPromptProbeRetries times in a row; the retry that succeeds settles
// the ahead calls. Past the bound, the next ahead call asks again.
func TestFailedPromptProbeRetries(t *testing.T) {
	h := newHarness(t, nil)
	reg, timers := &fakeRegistry{}, &fakeTimers{}
	p := instance(t, h)
	const every = 5 * time.Second
	p.probes = newPromptProbes(reg, every, p.probeLanded)
	p.probes.afterFunc = timers.afterFunc
	t.Cleanup(p.probes.stop)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	ahead := func() int64 {
		out, err := query(t, h, srv, "search", time.Hour)
		require.NoError(t, err)
		return out.Agents[0].Digests.Ahead
	}
	failed := func(i int) {
		reg.landing(i)(controlplane.Observation{Server: srv, At: h.clock.Now(), Err: context.DeadlineExceeded})
	}

	h.sendSpans(callsOf(sessionCall("s1", "d2", 0, false)))
	require.Len(t, reg.requestsSoFar(), 1)

	// The first probe fails 1 s after the request: the retry waits for the
	// interval, then is sent.
	h.clock.Advance(time.Second)
	failed(0)
	assert.Len(t, reg.requestsSoFar(), 1, "not before the interval is up")
	assert.Equal(t, []time.Duration{every - time.Second}, timers.fire())
	require.Len(t, reg.requestsSoFar(), 2)
	assert.Equal(t, int64(1), ahead())

	// Failing past the interval, it is asked again at once, up to the bound.
	for i := 1; i < maxPromptProbeRetries; i++ {
		h.clock.Advance(2 * every)
		failed(i)
		require.Len(t, reg.requestsSoFar(), i+2)
	}
	h.clock.Advance(2 * every)
	failed(maxPromptProbeRetries)
	assert.Len(t, reg.requestsSoFar(), maxPromptProbeRetries+1, "no more retries of a failing target")
	assert.Empty(t, timers.fire())
	assert.Equal(t, int64(1), ahead())

	// The next ahead call asks again; that probe lands: the calls settle,
	// and the count of failures starts over.
	h.sendSpans(callsOf(sessionCall("s2", "d2", 2*time.Minute, false)))
	require.Len(t, reg.requestsSoFar(), maxPromptProbeRetries+2)
	reg.landing(maxPromptProbeRetries + 1)(controlplane.Observation{Server: srv, At: h.clock.Now(),
		ToolDigests: map[string]string{"search": "d2", "fetch": "f1", "lookup": "l1"}})
	assert.Zero(t, ahead())

	// A probe that fails while no call waits on it is not retried.
	h.clock.Advance(2 * every)
	failed(maxPromptProbeRetries + 1)
	assert.Len(t, reg.requestsSoFar(), maxPromptProbeRetries+2)
	assert.Empty(t, timers.fire())
}

// sessionCall is a claude-code call of search in session, at t0+at.
func sessionCall(session, digest string, at time.Duration, failed bool) call {
	return call{agent: "claude-code", server: srv, url: srvURL, tool: "search", session: session, digest: digest, at: t0.Add(at), failed: failed}
}

// TestRecovery: sessions after a change are recovered, still stale,
// failed or idle; sessions that started on the new definition needed no
// recovery.
func TestRecovery(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	h.sendSpans(callsOf(
		sessionCall("recovers", "d1", -10*time.Minute, false),
		sessionCall("stays", "d1", -10*time.Minute, false),
		sessionCall("fails", "d1", -10*time.Minute, false),
		sessionCall("idles", "d1", -10*time.Minute, false),
		sessionCall("new", "d2", 3*time.Minute, false),
	))
	h.sendLogs(driftLogs(searchDrift(t0)))
	h.clock.Advance(10 * time.Minute)
	h.sendSpans(callsOf(
		sessionCall("recovers", "d1", time.Minute, false),
		sessionCall("recovers", "d2", 2*time.Minute, false),
		sessionCall("stays", "d2", time.Minute, false),
		sessionCall("stays", "d1", 4*time.Minute, true),
		sessionCall("fails", "", 2*time.Minute, true),
	))
	out, err := query(t, h, srv, "search", time.Hour)
	require.NoError(t, err)
	require.NotNil(t, out.Totals.Recovery)
	median, longest := 120.0, 120.0
	assert.Equal(t, apiwire.Recovery{Recovered: 1, StillStale: 1, Failed: 1, Idle: 1,
		MedianSecondsToRecover: &median, MaxSecondsToRecover: &longest}, *out.Totals.Recovery)
	assert.Equal(t, int64(2), out.Totals.Stale)
	assert.Equal(t, int64(4), out.Totals.Before)
}

// TestRecoveryStraddlingEntries: the index keeps a session's calls of one
// digest in one entry, across the change. What came after the change
// decides: a failure before it does not make the session failed, and a
// refused call after its last current one leaves it still stale.
func TestRecoveryStraddlingEntries(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	h.sendSpans(callsOf(
		sessionCall("failed-before", "", -10*time.Minute, true),
		sessionCall("refused-last", "d1", -10*time.Minute, false),
		sessionCall("refused-last", "d2", -5*time.Minute, false), // its client listed before the probe saw d2
	))
	h.sendLogs(driftLogs(searchDrift(t0)))
	h.clock.Advance(10 * time.Minute)
	h.sendSpans(callsOf(
		sessionCall("failed-before", "", 2*time.Minute, false),
		sessionCall("refused-last", "d2", time.Minute, false),
	))
	refused := callsOf(sessionCall("refused-last", "d2", 3*time.Minute, false))
	onlySpan(t, refused).Attributes().PutStr(semconv.GuardRefusal, semconv.RefusalStaleToolSchema)
	h.sendSpans(refused)

	out, err := query(t, h, srv, "search", time.Hour)
	require.NoError(t, err)
	require.NotNil(t, out.Totals.Recovery)
	assert.Equal(t, apiwire.Recovery{StillStale: 1}, *out.Totals.Recovery,
		"failed-before's only failure came before the change; refused-last's latest call was refused as stale")
	assert.Equal(t, int64(1), out.Totals.Stale)
	b := instance(t, h).state.index
	for _, bk := range b.buckets {
		for i := range bk.entries {
			if e := &bk.entries[i]; e.stale > 0 {
				assert.Equal(t, uint32(0), uint32(e.staleAgo), "the refused call was the entry's last")
				assert.Less(t, e.first, uint32(unixSec(t0.UnixNano())), "the entry straddles the change")
			}
		}
	}
}
