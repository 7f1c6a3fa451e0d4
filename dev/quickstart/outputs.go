package quickstart

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// Outputs is what the collector's file exporters wrote (OTLP JSON, one
// batch per line).
type Outputs struct {
	Logs    []plog.Logs
	Traces  []ptrace.Traces
	Metrics []pmetric.Metrics
}

// ReadOutputs reads logs.jsonl, traces.jsonl and metrics.jsonl from dir. A
// file that does not exist yet is empty; a last line still being written is
// skipped.
func ReadOutputs(dir string) (*Outputs, error) {
	o := &Outputs{}
	err := eachLine(filepath.Join(dir, "logs.jsonl"), func(b []byte) error {
		l, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(b)
		o.Logs = append(o.Logs, l)
		return err
	})
	if err == nil {
		err = eachLine(filepath.Join(dir, "traces.jsonl"), func(b []byte) error {
			t, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
			o.Traces = append(o.Traces, t)
			return err
		})
	}
	if err == nil {
		err = eachLine(filepath.Join(dir, "metrics.jsonl"), func(b []byte) error {
			m, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(b)
			o.Metrics = append(o.Metrics, m)
			return err
		})
	}
	return o, err
}

func eachLine(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return nil // an unterminated last line is still being written
		}
		if err != nil {
			return err
		}
		if line = bytes.TrimSpace(line); len(line) == 0 {
			continue
		}
		if err := fn(line); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
	}
}

// Event is a log record with its resource.
type Event struct {
	Resource pcommon.Map
	Record   plog.LogRecord
}

// Attr returns a record attribute as a string ("" when absent).
func (e Event) Attr(key string) string { return attr(e.Record.Attributes(), key) }

// Int returns an integer record attribute.
func (e Event) Int(key string) int64 {
	v, _ := e.Record.Attributes().Get(key)
	return v.Int()
}

// Events returns the records named name (event name field or attribute).
func (o *Outputs) Events(name string) []Event {
	var out []Event
	for _, l := range o.Logs {
		for i := 0; i < l.ResourceLogs().Len(); i++ {
			rl := l.ResourceLogs().At(i)
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				lrs := rl.ScopeLogs().At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					lr := lrs.At(k)
					n := lr.EventName()
					if v, ok := lr.Attributes().Get(semconv.EventName); n == "" && ok {
						n = v.Str()
					}
					if n == name {
						out = append(out, Event{Resource: rl.Resource().Attributes(), Record: lr})
					}
				}
			}
		}
	}
	return out
}

// Span is a span with its resource.
type Span struct {
	Resource pcommon.Map
	Span     ptrace.Span
}

// Attr returns a span attribute as a string ("" when absent).
func (s Span) Attr(key string) string { return attr(s.Span.Attributes(), key) }

// ServerName is the span's mcpdrift.server.name, from the span or, where a
// processor such as groupbyattrs moved it, from its resource.
func (s Span) ServerName() string {
	if v := s.Attr(semconv.ServerName); v != "" {
		return v
	}
	return attr(s.Resource, semconv.ServerName)
}

// attr returns an attribute as a string, "" when absent. The zero Value that
// Get returns for an absent key panics on AsString, so the ok must be checked.
func attr(m pcommon.Map, key string) string {
	v, ok := m.Get(key)
	if !ok {
		return ""
	}
	return v.AsString()
}

// ToolCalls returns the tools/call spans.
func (o *Outputs) ToolCalls() []Span {
	var out []Span
	for _, t := range o.Traces {
		for i := 0; i < t.ResourceSpans().Len(); i++ {
			rs := t.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				spans := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					sp := spans.At(k)
					if m, ok := sp.Attributes().Get(semconv.MCPMethodName); ok && m.Str() == "tools/call" {
						out = append(out, Span{Resource: rs.Resource().Attributes(), Span: sp})
					}
				}
			}
		}
	}
	return out
}

// GaugeValue returns the last value of an int gauge for a server, and whether any was seen.
func (o *Outputs) GaugeValue(metric, server string) (int64, bool) {
	points := o.GaugePoints(metric, server)
	if len(points) == 0 {
		return 0, false
	}
	return points[len(points)-1].IntValue(), true
}

// GaugePoints returns the first data point of every batch's gauge metric for
// a server, in the order written.
func (o *Outputs) GaugePoints(metric, server string) []pmetric.NumberDataPoint {
	var points []pmetric.NumberDataPoint
	for _, md := range o.Metrics {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			rm := md.ResourceMetrics().At(i)
			if n, _ := rm.Resource().Attributes().Get(semconv.ServerName); n.Str() != server {
				continue
			}
			for j := 0; j < rm.ScopeMetrics().Len(); j++ {
				ms := rm.ScopeMetrics().At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					if m := ms.At(k); m.Name() == metric && m.Type() == pmetric.MetricTypeGauge && m.Gauge().DataPoints().Len() > 0 {
						points = append(points, m.Gauge().DataPoints().At(0))
					}
				}
			}
		}
	}
	return points
}

// Summary is what the quickstart shows.
type Summary struct {
	Drifts  []Event
	Impacts []Event
	// StaleByAgent counts tool calls marked mcpdrift.tool.stale=true, by agent.
	StaleByAgent map[string]int
	ToolCalls    int
}

// Summarize collects drift events, impact records and stale calls.
func Summarize(o *Outputs) Summary {
	s := Summary{Drifts: o.Events(semconv.EventDrift), Impacts: o.Events(semconv.EventImpact), StaleByAgent: map[string]int{}}
	for _, sp := range o.ToolCalls() {
		s.ToolCalls++
		if sp.Attr(semconv.ToolStale) == "true" {
			s.StaleByAgent[sp.Attr(semconv.GenAIAgentName)]++
		}
	}
	return s
}

// Render writes the summary for a terminal. Server text is sanitized.
func (s Summary) Render(w io.Writer) {
	for _, d := range s.Drifts {
		fmt.Fprintf(w, "\n== DRIFT on %s: %s\n", d.Attr(semconv.ServerName), strings.ToUpper(d.Record.SeverityText()))
		fmt.Fprintf(w, "   %s\n", contract.SanitizeText(d.Record.Body().AsString()))
		if changes, ok := d.Record.Attributes().Get(semconv.DriftChanges); ok {
			for i := 0; i < changes.Slice().Len(); i++ {
				c := changes.Slice().At(i).Map()
				get := func(k string) string { v, _ := c.Get(k); return contract.SanitizeText(v.AsString()) }
				fmt.Fprintf(w, "   %-10s %-15s %-30s %s\n", get(semconv.ChangeSeverity), get(semconv.ChangeName), get(semconv.ChangeRule), get(semconv.ChangeMessage))
			}
		}
		fmt.Fprintf(w, "   impact: %d agents, %d sessions, %d calls in the window\n",
			d.Int(semconv.ImpactAgents), d.Int(semconv.ImpactSessions), d.Int(semconv.ImpactCalls))
	}
	if len(s.Impacts) > 0 {
		fmt.Fprintf(w, "\n== WHO IS AFFECTED (mcpdrift.impact)\n")
		fmt.Fprintf(w, "   %-6s %-15s %-12s %8s %6s %7s  %s\n", "risk", "tool", "agent", "sessions", "calls", "errors", "digests used")
		// Riskiest first, then by tool and agent: the records arrive in no
		// fixed order, and the summary must read the same run after run.
		impacts := slices.Clone(s.Impacts)
		slices.SortFunc(impacts, func(a, b Event) int {
			return cmp.Or(strings.Compare(riskOrder(a.Attr(semconv.ImpactRisk)), riskOrder(b.Attr(semconv.ImpactRisk))),
				strings.Compare(a.Attr(semconv.GenAIToolName), b.Attr(semconv.GenAIToolName)),
				strings.Compare(a.Attr(semconv.GenAIAgentName), b.Attr(semconv.GenAIAgentName)))
		})
		for _, e := range impacts {
			agent := e.Attr(semconv.GenAIAgentName)
			if e.Attr(semconv.ImpactNoRecentCaller) == "true" {
				agent = "(no recent callers)"
			}
			fmt.Fprintf(w, "   %-6s %-15s %-12s %8d %6d %7d  %s\n", e.Attr(semconv.ImpactRisk), contract.SanitizeText(e.Attr(semconv.GenAIToolName)),
				contract.SanitizeText(agent), e.Int(semconv.ImpactSessions), e.Int(semconv.ImpactCalls), e.Int(semconv.ImpactErrors), digestsUsed(e))
		}
	}
	total := 0
	var parts []string
	for _, a := range slices.Sorted(maps.Keys(s.StaleByAgent)) {
		total += s.StaleByAgent[a]
		parts = append(parts, fmt.Sprintf("%s %d", contract.SanitizeText(a), s.StaleByAgent[a]))
	}
	fmt.Fprintf(w, "\n== STALE CALLS: %d of %d tool calls were made with a definition the server no longer serves (%s)\n",
		total, s.ToolCalls, strings.Join(parts, ", "))
}

func riskOrder(r string) string {
	return map[string]string{"high": "0", "medium": "1", "low": "2"}[r] + r
}

func digestsUsed(e Event) string {
	v, ok := e.Record.Attributes().Get(semconv.ImpactDigestsUsed)
	if !ok {
		return ""
	}
	var parts []string
	for _, k := range []string{semconv.ImpactDigestStale, semconv.ImpactDigestBefore, semconv.ImpactDigestNew, semconv.ImpactDigestAhead, semconv.ImpactDigestUnknown} {
		if n, ok := v.Map().Get(k); ok && n.Int() > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n.Int()))
		}
	}
	return strings.Join(parts, ", ")
}
