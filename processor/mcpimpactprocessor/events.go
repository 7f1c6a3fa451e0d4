package mcpimpactprocessor

import (
	"cmp"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mcpdrift/mcpdrift/semconv"
)

// Reading mcpdrift.snapshot and mcpdrift.drift events (docs/events.md).

// eventName returns a record's event name: the EventName field, else the
// event.name attribute.
func eventName(rec plog.LogRecord) string {
	if n := rec.EventName(); n != "" {
		return n
	}
	return strAttr(rec.Attributes(), semconv.EventName)
}

func strAttr(m pcommon.Map, key string) string {
	if v, ok := m.Get(key); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

// readListing reads the server and tool digests of a snapshot or drift
// event. The record's attributes win over its resource's. It returns nil
// when the event names no server.
func readListing(res pcommon.Map, rec plog.LogRecord, now int64) *listing {
	attrs := rec.Attributes()
	l := &listing{
		name: first(strAttr(attrs, semconv.ServerName), strAttr(res, semconv.ServerName)),
		url:  first(strAttr(attrs, semconv.ServerURL), strAttr(res, semconv.ServerURL)),
		info: strAttr(attrs, semconv.ServerInfoName),
		at:   int64(rec.Timestamp()),
	}
	if l.name == "" {
		return nil
	}
	if l.at == 0 {
		l.at = int64(rec.ObservedTimestamp())
	}
	if l.at == 0 {
		l.at = now
	}
	l.digests = readDigests(attrs, semconv.ToolDigests)
	l.previous = readDigests(attrs, semconv.PreviousToolDigests)
	return l
}

// readDigests reads a map of tool name → digest; nil when absent or not a
// map. Members that are not strings are skipped.
func readDigests(attrs pcommon.Map, key string) map[string]string {
	v, ok := attrs.Get(key)
	if !ok || v.Type() != pcommon.ValueTypeMap {
		return nil
	}
	out := make(map[string]string, v.Map().Len())
	for tool, d := range v.Map().All() {
		if d.Type() == pcommon.ValueTypeStr && tool != "" {
			out[clip(tool)] = d.Str()
		}
	}
	return out
}

// readToolChanges returns the tools a drift changed at warning or above,
// each with its worst severity: breaking first, then by name.
func readToolChanges(attrs pcommon.Map) []toolChange {
	return changedTools(readToolSeverities(attrs))
}

// changedTools lists the tools whose worst severity (worst: tool →
// severity) is warning or breaking, breaking first, then by name.
func changedTools(worst map[string]string) []toolChange {
	out := make([]toolChange, 0, len(worst))
	for tool, sev := range worst {
		if sev == semconv.DriftSeverityBreaking || sev == semconv.DriftSeverityWarning {
			out = append(out, toolChange{tool: tool, severity: sev})
		}
	}
	slices.SortFunc(out, func(a, b toolChange) int {
		if a.severity != b.severity {
			if a.severity == semconv.DriftSeverityBreaking {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.tool, b.tool)
	})
	return out
}

// severityRank orders severities, worst first; unknown ones last.
var severityRank = map[string]int{
	semconv.DriftSeverityBreaking: 0, semconv.DriftSeverityWarning: 1,
	semconv.DriftSeverityCompatible: 2, semconv.DriftSeverityInfo: 3,
}

// readToolSeverities reads the worst severity of each tool a drift event's
// changes name.
func readToolSeverities(attrs pcommon.Map) map[string]string {
	v, ok := attrs.Get(semconv.DriftChanges)
	if !ok || v.Type() != pcommon.ValueTypeSlice {
		return nil
	}
	worst := map[string]string{}
	changes := v.Slice()
	for i := 0; i < changes.Len(); i++ {
		c := changes.At(i)
		if c.Type() != pcommon.ValueTypeMap {
			continue
		}
		m := c.Map()
		noteWorst(worst, strAttr(m, semconv.ChangeSubject), strAttr(m, semconv.ChangeName), strAttr(m, semconv.ChangeSeverity))
	}
	return worst
}

// noteWorst records in worst a change's severity for its tool when it is
// the worst seen; a change of another subject, or of unknown severity, is
// left out.
func noteWorst(worst map[string]string, subject, tool, sev string) {
	rank, known := severityRank[sev]
	if subject != semconv.ChangeSubjectTool || tool == "" || !known {
		return
	}
	tool = clip(tool)
	if old, seen := worst[tool]; !seen || rank < severityRank[old] {
		worst[tool] = sev
	}
}
