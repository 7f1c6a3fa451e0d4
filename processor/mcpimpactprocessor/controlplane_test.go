package mcpimpactprocessor

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/mcpdrift/mcpdrift/dev/storagetest"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// query asks the processor behind h what the control plane would.
func query(t *testing.T, h *harness, server, tool string, window time.Duration) (apiwire.Impact, error) {
	t.Helper()
	return impactView{instance(t, h)}.Impact(context.Background(), controlplane.ImpactQuery{Server: server, Tool: tool, Window: window})
}

// TestImpactQuery: the control plane's answer for a tool is what the impact
// records of its drift say (same scan, same risk), plus average latency,
// for any window up to the processor's.
func TestImpactQuery(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-5 * time.Hour))))
	h.sendSpans(callsOf(
		call{agent: "planner", service: "agents", server: srv, url: srvURL, tool: "search", session: "s1", digest: "d1", at: t0.Add(-10 * time.Minute), took: 10 * time.Millisecond},
		call{agent: "planner", service: "agents", server: srv, url: srvURL, tool: "search", session: "s2", digest: "d1", at: t0.Add(-5 * time.Minute), failed: true, took: 30 * time.Millisecond},
		call{agent: "planner", service: "agents", server: srv, url: srvURL, tool: "search", session: "s2", digest: "d1", at: t0.Add(-4 * time.Minute), took: -1},
		call{service: "writer-svc", server: srv, url: srvURL, tool: "search", session: "s3", digest: "d1", at: t0.Add(-3 * time.Hour), took: 5 * time.Millisecond},
	))
	recs := h.sendLogs(driftLogs(searchDrift(t0)))
	plannerRecord := readImpact(t, recs[1])

	// After the drift, one planner call with the new definition.
	h.clock.Advance(time.Minute)
	h.sendSpans(callsOf(call{agent: "planner", service: "agents", server: srv, url: srvURL, tool: "search", session: "s4", digest: "d2", at: t0.Add(30 * time.Second), took: 40 * time.Millisecond}))

	out, err := query(t, h, srv, "search", 24*time.Hour)
	require.NoError(t, err)
	assert.Equal(t, "d2", *out.CurrentDigest)
	assert.Equal(t, "d1", *out.PreviousDigest)
	require.NotNil(t, out.Change)
	assert.Equal(t, apiwire.ToolChange{DriftID: "drift-1", Severity: semconv.DriftSeverityBreaking, At: t0}, *out.Change)
	require.NotNil(t, out.Totals.Recovery)
	assert.Equal(t, apiwire.Recovery{Idle: 3}, *out.Totals.Recovery, "s1, s2 and s3 have not called since the change; s4 started after it")
	out.Totals.Recovery = nil
	assert.Equal(t, apiwire.ImpactTotals{Agents: 2, Sessions: 4, Calls: 5, Errors: 1, Before: 4}, out.Totals)
	assert.False(t, out.NoRecentCallers)
	assert.Equal(t, h.clock.Now().UTC(), out.To)
	assert.Equal(t, h.clock.Now().Add(-24*time.Hour).UTC(), out.From)
	require.Len(t, out.Agents, 2)

	planner := out.Agents[0]
	require.NotNil(t, planner.Agent)
	assert.Equal(t, "planner", *planner.Agent)
	assert.Equal(t, plannerRecord.risk, planner.Risk, "the same risk as the drift's impact record")
	assert.Equal(t, semconv.ImpactRiskHigh, planner.Risk)
	assert.Equal(t, apiwire.DigestUsed{Before: 3, New: 1}, planner.Digests)
	assert.Equal(t, int64(4), planner.Calls)
	assert.Equal(t, int64(1), planner.Errors)
	assert.Equal(t, 3, planner.Sessions)
	require.NotNil(t, planner.AvgLatencyMS)
	assert.InDelta(t, (10+30+40)/3.0, *planner.AvgLatencyMS, 1e-9, "the call without an end time has no latency")
	assert.Equal(t, []string{"s4", "s2", "s1"}, planner.SessionIDs)
	assert.Equal(t, t0.Add(30*time.Second).UTC(), planner.LastCall)

	writer := out.Agents[1]
	assert.Equal(t, "writer-svc", *writer.Agent)
	assert.Equal(t, semconv.ImpactRiskMedium, writer.Risk)
	assert.InDelta(t, 5, *writer.AvgLatencyMS, 1e-9)

	// A shorter window leaves the writer's call out.
	out, err = query(t, h, srv, "search", time.Hour)
	require.NoError(t, err)
	require.Len(t, out.Agents, 1)
	assert.Equal(t, 1.0, out.Hours)

	// A changed tool nobody called, a tool that never changed, unknowns.
	out, err = query(t, h, srv, "lookup", 24*time.Hour)
	require.NoError(t, err)
	assert.True(t, out.NoRecentCallers)
	assert.Empty(t, out.Agents)
	assert.Equal(t, semconv.DriftSeverityWarning, out.Change.Severity)

	_, err = query(t, h, "nope", "search", time.Hour)
	assert.ErrorIs(t, err, controlplane.ErrUnknownServer)
	_, err = query(t, h, srv, "nope", time.Hour)
	assert.ErrorIs(t, err, controlplane.ErrUnknownTool)
}

// TestImpactQueryWithoutChange: calls of a tool that never changed have low
// risk, whatever their number.
func TestImpactQueryWithoutChange(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	h.sendSpans(callsOf(call{agent: "planner", server: srv, url: srvURL, tool: "fetch", session: "s1", digest: "f1", at: t0.Add(-time.Minute)}))
	out, err := query(t, h, srv, "fetch", time.Hour)
	require.NoError(t, err)
	assert.Nil(t, out.Change)
	assert.Nil(t, out.PreviousDigest)
	require.Len(t, out.Agents, 1)
	assert.Equal(t, semconv.ImpactRiskLow, out.Agents[0].Risk)
	assert.Equal(t, apiwire.DigestUsed{New: 1}, out.Agents[0].Digests)
}

// TestImpactQueryAfterRestart: latencies and tools' last changes are kept
// with the index.
func TestImpactQueryAfterRestart(t *testing.T) {
	dir := t.TempDir()
	clock := newClock()
	_, host := newFileStorage(t, dir, nil)
	before := newHarness(t, storageConfig(), withHost(host), withClock(clock))
	before.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	before.sendSpans(callsOf(call{agent: "planner", server: srv, url: srvURL, tool: "search", session: "s1", digest: "d1", at: t0.Add(-time.Minute), took: 7 * time.Millisecond}))
	before.sendLogs(driftLogs(searchDrift(t0)))
	before.stop()

	_, host = newFileStorage(t, dir, nil)
	after := newHarness(t, storageConfig(), withHost(host), withClock(clock))
	out, err := query(t, after, srv, "search", time.Hour)
	require.NoError(t, err)
	require.NotNil(t, out.Change)
	assert.Equal(t, "drift-1", out.Change.DriftID)
	require.Len(t, out.Agents, 1)
	assert.InDelta(t, 7, *out.Agents[0].AvgLatencyMS, 1e-9)
}

// TestDecodeIndexV1: an index stored before entries kept latencies is read,
// its calls without latency.
func TestDecodeIndexV1(t *testing.T) {
	buf := []byte(indexMagicV1)
	buf = binary.AppendUvarint(buf, 1) // digests
	buf = appendString(buf, "")
	buf = binary.AppendUvarint(buf, 1) // buckets
	for _, s := range []string{srv, "", "", "", "", "search", "planner"} {
		buf = appendString(buf, s)
	}
	buf = binary.AppendUvarint(buf, 1) // entries
	buf = appendString(buf, "s1")
	at := uint64(unixSec(t0.UnixNano()))
	for _, n := range []uint64{0, 3, 1, at, at} {
		buf = binary.AppendUvarint(buf, n)
	}
	st := newState(createDefaultConfig().(*Config))
	n, err := decodeIndex(buf, st.index, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	for _, b := range st.index.buckets {
		assert.Equal(t, entry{session: b.entries[0].session, calls: 3, errors: 1, first: uint32(at), last: uint32(at)}, b.entries[0])
	}
}

// TestControlPlaneRegistration: the processor registers with the extension
// its control_plane names; a wrong ID fails the start.
func TestControlPlaneRegistration(t *testing.T) {
	f := mcpdriftapiextension.NewFactory()
	ecfg := f.CreateDefaultConfig().(*mcpdriftapiextension.Config)
	ecfg.NetAddr.Endpoint = "127.0.0.1:0"
	id := component.MustNewID("mcpdrift_api")
	host := storagetest.NewHost(map[component.ID]component.Component{id: storagetest.Extension(t, f, ecfg)})
	cfg := createDefaultConfig().(*Config)
	cfg.ControlPlane = &id
	h := newHarness(t, cfg, withHost(host))
	assert.NotNil(t, instance(t, h).unregister)

	bad := component.MustNewID("nope")
	cfg = createDefaultConfig().(*Config)
	cfg.ControlPlane = &bad
	p, err := newImpactProcessor(processortest.NewNopSettings(NewFactory().Type()), cfg, time.Now)
	require.NoError(t, err)
	err = p.Start(context.Background(), host)
	assert.ErrorContains(t, err, "control_plane")
	require.NoError(t, p.Shutdown(context.Background()))
}
