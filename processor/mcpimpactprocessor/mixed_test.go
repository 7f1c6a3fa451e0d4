package mcpimpactprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// mixedLogs is an open mcpdrift.mixed_contract record as the receiver emits
// it: the baseline (search d1) and a variant (search d2) that makes search
// break.
func mixedLogs(at time.Time) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(semconv.ServerName, srv)
	rec := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	rec.SetEventName(semconv.EventMixedContract)
	rec.SetTimestamp(pcommon.NewTimestampFromTime(at))
	a := rec.Attributes()
	a.PutStr(semconv.MixedState, "open")
	a.PutStr(semconv.ServerName, srv)
	prev := a.PutEmptyMap(semconv.PreviousToolDigests)
	prev.PutStr("search", "d1")
	prev.PutStr("fetch", "f1")
	vs := a.PutEmptySlice(semconv.MixedVariants)
	base := vs.AppendEmpty().SetEmptyMap()
	base.PutStr(semconv.MixedVariantDigest, "contract-a")
	base.PutBool(semconv.MixedVariantBaseline, true)
	v := vs.AppendEmpty().SetEmptyMap()
	v.PutStr(semconv.MixedVariantDigest, "contract-b")
	v.PutBool(semconv.MixedVariantBaseline, false)
	v.PutDouble(semconv.MixedVariantShare, 0.1)
	v.PutStr(semconv.DriftSeverity, semconv.DriftSeverityBreaking)
	cur := v.PutEmptyMap(semconv.ToolDigests)
	cur.PutStr("search", "d2")
	cur.PutStr("fetch", "f1")
	ch := v.PutEmptySlice(semconv.DriftChanges).AppendEmpty().SetEmptyMap()
	ch.PutStr(semconv.ChangeRule, "input.property.added_required")
	ch.PutStr(semconv.ChangeSeverity, semconv.DriftSeverityBreaking)
	ch.PutStr(semconv.ChangeSubject, "tool")
	ch.PutStr(semconv.ChangeName, "search")
	return ld
}

// variantImpactOf asks the control plane view q, of one variant.
func variantImpactOf(t *testing.T, p *impactProcessor, q controlplane.VariantQuery) apiwire.VariantImpact {
	t.Helper()
	out, err := impactView{p}.VariantImpacts(context.Background(), q)
	require.NoError(t, err)
	require.Len(t, out, 1)
	return out[0]
}

// TestMixedVariantImpact: while a canary serves a breaking variant, the
// impact names the agents whose sessions reached it (calls with the
// variant's digest: hurt now, high) apart from those the baseline served
// (at risk on convergence, medium: not yet hurt), counts a session only on
// its side, and leaves the server's current digests alone.
func TestMixedVariantImpact(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	h.sendSpans(callsOf(
		call{agent: "planner", service: "agents", server: srv, url: srvURL, tool: "search", session: "s1", digest: "d1", at: t0.Add(-3 * time.Minute)},
		call{agent: "writer", service: "agents", server: srv, url: srvURL, tool: "search", session: "s2", digest: "d2", at: t0.Add(-2 * time.Minute), failed: true},
		call{agent: "reader", service: "agents", server: srv, url: srvURL, tool: "fetch", session: "s3", digest: "f1", at: t0.Add(-time.Minute)},
		call{agent: "legacy", service: "agents", server: srv, url: srvURL, tool: "search", session: "s4", at: t0.Add(-time.Minute)}, // no digest: neither side
	))

	recs := h.sendLogs(mixedLogs(t0))
	require.Len(t, recs, 3, "the mixed record, then search×writer (hurt now) and search×planner (at risk)")
	vs, _ := recs[0].Attributes().Get(semconv.MixedVariants)
	variant := vs.Slice().At(1).Map()
	agents, _ := variant.Get(semconv.ImpactAgents)
	sessions, _ := variant.Get(semconv.ImpactSessions)
	calls, _ := variant.Get(semconv.ImpactCalls)
	assert.Equal(t, []int64{1, 1, 1}, []int64{agents.Int(), sessions.Int(), calls.Int()}, "the variant reached writer's one session")
	_, onBaseline := vs.Slice().At(0).Map().Get(semconv.ImpactAgents)
	assert.False(t, onBaseline, "the baseline has no impact of its own")

	var order []string
	byAgent := map[string]impactOf{}
	for _, r := range recs[1:] {
		imp := readImpact(t, r)
		byAgent[imp.agent] = imp
		st, _ := r.Attributes().Get(semconv.ImpactStatus)
		order = append(order, imp.agent+":"+st.Str()+":"+imp.risk)
		d, _ := r.Attributes().Get(semconv.ContractDigest)
		assert.Equal(t, "contract-b", d.Str(), "the record names the variant")
		_, hasDrift := r.Attributes().Get(semconv.DriftID)
		assert.False(t, hasDrift)
	}
	assert.Equal(t, []string{"writer:hurt_now:high", "planner:at_risk_on_convergence:medium"}, order)
	assert.Equal(t, int64(1), byAgent["writer"].new, "writer's session was served the variant")
	assert.Equal(t, int64(1), byAgent["writer"].errors)
	assert.Contains(t, byAgent["writer"].body, "served the variant: hurt now")
	assert.Equal(t, int64(1), byAgent["planner"].before, "planner's session was served the baseline")
	assert.Zero(t, byAgent["planner"].new)
	assert.Contains(t, byAgent["planner"].body, "at risk when the fleet converges")

	// The control plane asks the same of the live index.
	p := instance(t, h)
	q := controlplane.VariantQuery{Server: srv, Baseline: map[string]string{"search": "d1"}, Variants: []controlplane.Variant{{ToolDigests: map[string]string{"search": "d2"},
		Changes: []contract.Change{{Rule: "input.property.added_required", Severity: contract.Breaking, Subject: contract.KindTool, Name: "search"},
			{Rule: "tool.description.changed", Severity: contract.Info, Subject: contract.KindTool, Name: "fetch"}}}}}
	out := variantImpactOf(t, p, q)
	assert.Equal(t, apiwire.VariantTotals{Agents: 1, Sessions: 1, Calls: 1}, out.HurtNow)
	assert.Equal(t, apiwire.VariantTotals{Agents: 1, Sessions: 1, Calls: 1}, out.AtRiskOnConvergence)
	require.Len(t, out.Tools, 1, "fetch's info change is no impact")
	require.Len(t, out.Tools[0].Agents, 2)
	w, pl := out.Tools[0].Agents[0], out.Tools[0].Agents[1]
	assert.Equal(t, []string{"writer", "hurt_now", "high", "s2"}, []string{*w.Agent, w.Status, w.Risk, w.SessionIDs[0]})
	assert.Equal(t, []string{"planner", "at_risk_on_convergence", "medium", "s1"}, []string{*pl.Agent, pl.Status, pl.Risk, pl.SessionIDs[0]})
	// A shorter window (mcpdrift impact --hours) leaves planner's older call out.
	q.Window = 150 * time.Second
	out = variantImpactOf(t, p, q)
	assert.Equal(t, apiwire.VariantTotals{Agents: 1, Sessions: 1, Calls: 1}, out.HurtNow)
	assert.Equal(t, apiwire.VariantTotals{}, out.AtRiskOnConvergence, "planner called 3 minutes ago")
	assert.InDelta(t, 150.0/3600, out.Hours, 1e-9)
	q.Window = 0
	q.Server = "nope"
	_, err := impactView{p}.VariantImpacts(context.Background(), q)
	assert.ErrorIs(t, err, controlplane.ErrUnknownServer)

	p.mu.Lock()
	current := p.state.contracts.servers[srv]
	p.mu.Unlock()
	require.NotNil(t, current)
	// A later drift from the baseline still sees d1 as the previous digest:
	// the mixed event did not move the server's contract.
	recs = h.sendLogs(driftLogs(searchDrift(t0.Add(time.Minute))))
	for _, r := range recs[1:] {
		if imp := readImpact(t, r); imp.agent == "planner" {
			assert.Equal(t, int64(1), imp.before)
		}
	}
}
