package mcpimpactprocessor

import (
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// Writing the impact of a drift: totals on the drift record, then one
// mcpdrift.impact record per changed tool and agent (docs/events.md).

// enrichDrift adds the impact totals to a drift record.
func enrichDrift(drift plog.LogRecord, imp *driftImpact) {
	attrs := drift.Attributes()
	attrs.PutInt(semconv.ImpactAgents, int64(imp.agents))
	attrs.PutInt(semconv.ImpactSessions, int64(imp.sessions))
	attrs.PutInt(semconv.ImpactCalls, imp.calls)
}

// appendImpactRecords appends the impact records of one drift to dst and
// returns how many it appended per risk level.
func appendImpactRecords(dst plog.LogRecordSlice, drift plog.LogRecord, l *listing, imp *driftImpact, window time.Duration, now pcommon.Timestamp) map[string]int64 {
	byRisk := map[string]int64{}
	driftID := strAttr(drift.Attributes(), semconv.DriftID)
	for i := range imp.tools {
		ti := &imp.tools[i]
		if len(ti.agents) == 0 {
			rec := newImpactRecord(dst, drift, driftID, l, ti, now)
			writeNoCallers(rec, ti, window)
			byRisk[semconv.ImpactRiskLow]++
			continue
		}
		for j := range ti.agents {
			rec := newImpactRecord(dst, drift, driftID, l, ti, now)
			writeAgent(rec, ti, &ti.agents[j], window)
			byRisk[ti.agents[j].risk]++
		}
	}
	return byRisk
}

func newImpactRecord(dst plog.LogRecordSlice, drift plog.LogRecord, driftID string, l *listing, ti *toolImpact, now pcommon.Timestamp) plog.LogRecord {
	rec := dst.AppendEmpty()
	rec.SetEventName(semconv.EventImpact)
	rec.SetTimestamp(drift.Timestamp())
	rec.SetObservedTimestamp(now)
	attrs := rec.Attributes()
	attrs.PutStr(semconv.EventName, semconv.EventImpact)
	if driftID != "" { // a mixed fleet's variant has none
		attrs.PutStr(semconv.DriftID, driftID)
	}
	attrs.PutStr(semconv.ServerName, l.name)
	if l.url != "" {
		attrs.PutStr(semconv.ServerURL, l.url)
	}
	attrs.PutStr(semconv.GenAIToolName, ti.tool)
	attrs.PutStr(semconv.DriftSeverity, ti.severity)
	return rec
}

func writeNoCallers(rec plog.LogRecord, ti *toolImpact, window time.Duration) {
	rec.SetSeverityNumber(plog.SeverityNumberInfo)
	rec.SetSeverityText(semconv.ImpactRiskLow)
	rec.Body().SetStr(fmt.Sprintf("%s (%s): no recent callers in the last %s",
		contract.SanitizeText(ti.tool), ti.severity, formatWindow(window)))
	attrs := rec.Attributes()
	writeCounts(attrs, &agentImpact{risk: semconv.ImpactRiskLow})
	attrs.PutBool(semconv.ImpactNoRecentCaller, true)
}

func writeAgent(rec plog.LogRecord, ti *toolImpact, ai *agentImpact, window time.Duration) {
	rec.SetSeverityNumber(riskSeverity(ai.risk))
	rec.SetSeverityText(ai.risk)
	attrs := rec.Attributes()
	if ai.agent != "" {
		attrs.PutStr(semconv.GenAIAgentName, ai.agent)
	}
	writeCounts(attrs, ai)
	if ai.status != "" {
		attrs.PutStr(semconv.ImpactStatus, ai.status)
	}
	attrs.PutStr(semconv.ImpactLastCall, time.Unix(int64(ai.last), 0).UTC().Format(time.RFC3339))
	attrs.PutBool(semconv.ImpactNoRecentCaller, false)
	rec.Body().SetStr(agentSummary(ti, ai, window))
}

func writeCounts(attrs pcommon.Map, ai *agentImpact) {
	attrs.PutInt(semconv.ImpactSessions, int64(ai.sessions))
	attrs.PutInt(semconv.ImpactCalls, ai.calls)
	attrs.PutInt(semconv.ImpactErrors, ai.errors)
	used := attrs.PutEmptyMap(semconv.ImpactDigestsUsed)
	used.PutInt(semconv.ImpactDigestBefore, ai.beforeCalls)
	used.PutInt(semconv.ImpactDigestStale, ai.staleCalls)
	used.PutInt(semconv.ImpactDigestNew, ai.newCalls)
	used.PutInt(semconv.ImpactDigestAhead, ai.aheadCalls)
	used.PutInt(semconv.ImpactDigestUnknown, ai.unknownCalls)
	sample := attrs.PutEmptySlice(semconv.ImpactSessionSample)
	sample.EnsureCapacity(len(ai.sessionSample))
	for _, s := range ai.sessionSample {
		sample.AppendEmpty().SetStr(s)
	}
	attrs.PutStr(semconv.ImpactRisk, ai.risk)
}

// agentSummary is the one-line body of an impact record.
func agentSummary(ti *toolImpact, ai *agentImpact, window time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): ", contract.SanitizeText(ti.tool), ti.severity)
	if ai.agent != "" {
		fmt.Fprintf(&b, "agent %s", contract.QuoteForDisplay(ai.agent))
	} else {
		b.WriteString("an unnamed agent")
	}
	fmt.Fprintf(&b, " made %d %s in %d %s in the last %s", ai.calls, plural(ai.calls, "call"),
		ai.sessions, plural(int64(ai.sessions), "session"), formatWindow(window))
	if ai.staleCalls > 0 {
		fmt.Fprintf(&b, ", %d stale", ai.staleCalls)
	}
	switch ai.status {
	case semconv.ImpactStatusHurtNow:
		b.WriteString(", served the variant: hurt now")
	case semconv.ImpactStatusAtRiskOnConvergence:
		b.WriteString(", served the baseline: at risk when the fleet converges")
	default:
		if ai.beforeCalls > 0 {
			fmt.Fprintf(&b, ", %d with the previous definition before the change", ai.beforeCalls)
		}
	}
	fmt.Fprintf(&b, "; risk %s", ai.risk)
	return b.String()
}

func plural(n int64, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// formatWindow prints a duration without trailing zero units: 24h, 90m, 1h30m.
func formatWindow(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func riskSeverity(risk string) plog.SeverityNumber {
	switch risk {
	case semconv.ImpactRiskHigh:
		return plog.SeverityNumberError
	case semconv.ImpactRiskMedium:
		return plog.SeverityNumberWarn
	}
	return plog.SeverityNumberInfo
}

// insertAfter rebuilds recs so that extra[i] follows recs[at[i]]: each
// drift is followed by its impact records. at is ascending.
func insertAfter(recs plog.LogRecordSlice, at []int, extra []plog.LogRecordSlice) {
	out := plog.NewLogRecordSlice()
	total := recs.Len()
	for _, e := range extra {
		total += e.Len()
	}
	out.EnsureCapacity(total)
	next := 0
	for i := 0; i < recs.Len(); i++ {
		recs.At(i).MoveTo(out.AppendEmpty())
		if next < len(at) && at[next] == i {
			extra[next].MoveAndAppendTo(out)
			next++
		}
	}
	recs.RemoveIf(func(plog.LogRecord) bool { return true })
	out.MoveAndAppendTo(recs)
}
