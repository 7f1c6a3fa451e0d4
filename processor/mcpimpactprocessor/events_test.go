package mcpimpactprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mcpdrift/mcpdrift/semconv"
)

func TestEventNameFromTheAttributeOnly(t *testing.T) {
	h := newHarness(t, nil)
	s := searchSnapshot(t0.Add(-time.Hour))
	s.attributeOnly = true
	h.sendLogs(snapshotLogs(s))
	out := h.sendSpans(callsOf(call{agent: "a", server: srv, url: srvURL, tool: "search", session: "s", digest: "d1", at: t0}))
	_, _, judged := spanVerdict(onlySpan(t, out))
	assert.True(t, judged, "snapshot known from event.name alone")

	d := searchDrift(t0)
	d.attributeOnly = true
	recs := h.sendLogs(driftLogs(d))
	require.Len(t, recs, 3)
	assert.Equal(t, semconv.EventImpact, recs[1].EventName())
}

func TestOtherRecordsPassUntouched(t *testing.T) {
	h := newHarness(t, nil)
	ld := plog.NewLogs()
	recs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	plain := recs.AppendEmpty()
	plain.Body().SetStr("an application log line")
	plain.Attributes().PutStr("k", "v")
	other := recs.AppendEmpty()
	other.SetEventName(semconv.EventMixedContract)
	other.Attributes().PutStr(semconv.MixedState, "open")
	want := plog.NewLogs()
	ld.CopyTo(want)

	h.sendLogs(ld)
	require.Len(t, h.events.AllLogs(), 1)
	assert.Equal(t, want, h.events.AllLogs()[0])
}

func TestImpactRecordsFollowTheirDrift(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	h.sendLogs(snapshotLogs(everythingSnapshot(t0.Add(-time.Hour))))

	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	before := sl.LogRecords().AppendEmpty()
	before.Body().SetStr("before")
	first := driftLogs(searchDrift(t0)).ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	first.CopyTo(sl.LogRecords().AppendEmpty())
	middle := sl.LogRecords().AppendEmpty()
	middle.Body().SetStr("middle")
	second := driftLogs(drift{id: "d-every", server: "everything-prod", at: t0,
		previous: map[string]string{"echo": "e1"}, current: map[string]string{},
		changes: []change{{severity: semconv.DriftSeverityBreaking, subject: "tool", name: "echo", rule: "tool.removed"}},
	}).ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	second.CopyTo(sl.LogRecords().AppendEmpty())

	var order []string
	for _, r := range h.sendLogs(ld) {
		switch r.EventName() {
		case semconv.EventImpact:
			order = append(order, "impact:"+readImpact(t, r).tool)
		case semconv.EventDrift:
			id, _ := r.Attributes().Get(semconv.DriftID)
			order = append(order, "drift:"+id.Str())
		default:
			order = append(order, r.Body().Str())
		}
	}
	assert.Equal(t, []string{"before", "drift:drift-1", "impact:search", "impact:lookup", "middle", "drift:d-every", "impact:echo"}, order)
}

func TestMalformedEventsPassThrough(t *testing.T) {
	h := newHarness(t, nil)
	// A drift that names no server cannot be matched: untouched.
	d := driftLogs(searchDrift(t0))
	rl := d.ResourceLogs().At(0)
	rl.Resource().Attributes().Remove(semconv.ServerName)
	rl.ScopeLogs().At(0).LogRecords().At(0).Attributes().Remove(semconv.ServerName)
	recs := h.sendLogs(d)
	require.Len(t, recs, 1)
	_, enriched := recs[0].Attributes().Get(semconv.ImpactCalls)
	assert.False(t, enriched)

	// Wrong types are skipped, not fatal.
	d = driftLogs(searchDrift(t0))
	a := d.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes()
	a.PutStr(semconv.DriftChanges, "not a list")
	a.PutInt(semconv.ToolDigests, 3)
	recs = h.sendLogs(d)
	require.Len(t, recs, 1, "no tool changes readable: no impact records")
	calls, _ := recs[0].Attributes().Get(semconv.ImpactCalls)
	assert.Zero(t, calls.Int())
}

func TestReadToolChanges(t *testing.T) {
	ld := driftLogs(drift{server: "s", changes: []change{
		{severity: semconv.DriftSeverityWarning, subject: "tool", name: "b"},
		{severity: semconv.DriftSeverityBreaking, subject: "tool", name: "b"},
		{severity: semconv.DriftSeverityWarning, subject: "tool", name: "a"},
		{severity: semconv.DriftSeverityWarning, subject: "tool", name: "c"},
		{severity: semconv.DriftSeverityBreaking, subject: "tool", name: "z"},
		{severity: semconv.DriftSeverityCompatible, subject: "tool", name: "d"},
		{severity: semconv.DriftSeverityBreaking, subject: "server", name: ""},
		{severity: semconv.DriftSeverityBreaking, subject: "tool", name: ""},
	}})
	got := readToolChanges(ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes())
	assert.Equal(t, []toolChange{
		{"b", semconv.DriftSeverityBreaking}, {"z", semconv.DriftSeverityBreaking},
		{"a", semconv.DriftSeverityWarning}, {"c", semconv.DriftSeverityWarning},
	}, got)
}
