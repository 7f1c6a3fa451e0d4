package docscheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// TestClickHouseQueries runs the SQL of docs/queries.md (the files under
// docs/examples/clickhouse) on the ClickHouse engine (chdb, in process),
// against tables shaped as the contrib clickhouse exporter creates them and
// filled as it fills them, from what otelcol-mcpdrift exported when the real
// server-everything drifted while three agents called it
// (testdata/clickhouse/capture.sh).
func TestClickHouseQueries(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		testservers.SkipLoudly(t, fmt.Sprintf("chdb's pinned binding is linux/amd64 only, not %s/%s, so the ClickHouse queries were NOT run", runtime.GOOS, runtime.GOARCH))
	}
	node := testservers.Node(t)
	binding := filepath.Dir(testservers.NPMPackage(t, "chdb", filepath.Join("@chdb", "lib-linux-x64-gnu", "index.js")))

	logs := readOTLP(t, "logs.json", func(b []byte) (plog.Logs, error) { return (&plog.JSONUnmarshaler{}).UnmarshalLogs(b) })
	traces := readOTLP(t, "traces.json", func(b []byte) (ptrace.Traces, error) { return (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b) })
	// The capture is in the past; move it so its last record is a minute
	// old, as the queries look back from now().
	shift := time.Now().Add(-time.Minute).Sub(latest(logs, traces))

	tables, err := os.ReadFile(filepath.Join("testdata", "clickhouse", "tables.sql"))
	if err != nil {
		t.Fatal(err)
	}
	var setup []string
	for _, stmt := range strings.Split(string(tables), ";") {
		if strings.TrimSpace(stmt) != "" {
			setup = append(setup, stmt)
		}
	}
	setup = append(setup,
		"INSERT INTO otel_logs SETTINGS date_time_input_format = 'best_effort' FORMAT JSONEachRow\n"+logRows(logs, shift),
		"INSERT INTO otel_traces SETTINGS date_time_input_format = 'best_effort' FORMAT JSONEachRow\n"+spanRows(traces, shift))

	type query struct {
		Name   string            `json:"name"`
		SQL    string            `json:"sql"`
		Params map[string]string `json:"params,omitempty"`
	}
	var queries []query
	for _, name := range []string{"drift-events", "drift-calls-hour-before", "stale-calls-by-agent", "old-digest-callers", "impact-by-drift"} {
		sql, err := os.ReadFile(filepath.Join(root, "docs", "examples", "clickhouse", name+".sql"))
		if err != nil {
			t.Fatal(err)
		}
		q := query{Name: name, SQL: string(sql)}
		if name == "old-digest-callers" {
			q.Params = map[string]string{"server": "everything", "tool": "startElicitation"}
		}
		queries = append(queries, q)
	}
	dir := t.TempDir()
	plan, _ := json.Marshal(map[string]any{"data": filepath.Join(dir, "data"), "setup": setup, "queries": queries})
	planFile := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(planFile, plan, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join("testdata", "clickhouse", "run.js"), binding, planFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chdb: %v\n%s", err, stderr.String())
	}
	var got map[string][]map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for name, rows := range got {
		t.Logf("%s:", name)
		for _, r := range rows {
			t.Logf("  %v", r)
		}
	}

	drifts := got["drift-events"]
	if len(drifts) != 1 || drifts[0]["severity"] != "warning" || drifts[0]["server"] != "everything" {
		t.Errorf("drift-events: %v", drifts)
	} else if changes := fmt.Sprint(drifts[0]["changes"]); !strings.Contains(changes, "[warning tool.description.changed startElicitation]") || !strings.Contains(changes, "[compatible tool.added zip]") {
		t.Errorf("drift-events changes: %s", changes)
	}

	// Before the switch: planner called startElicitation twice in one
	// session, writer once, reviewer only echo (not changed).
	wantRows(t, got, "drift-calls-hour-before", []string{"agent", "tool", "calls", "calls_with_old_digest", "sessions"}, [][]string{
		{"planner", "startElicitation", "2", "2", "1"},
		{"writer", "startElicitation", "1", "1", "1"},
	})
	// After the switch planner called again with the old digest (stale);
	// writer had refreshed its listing.
	wantRows(t, got, "stale-calls-by-agent", []string{"agent", "server", "tool", "stale_calls", "sessions"}, [][]string{
		{"planner", "everything", "startElicitation", "1", "1"},
	})
	wantRows(t, got, "old-digest-callers", []string{"agent", "session", "calls_with_old_digest", "after_the_change"}, [][]string{
		{"planner", "p-2", "1", "1"},
		{"planner", "p-1", "2", "0"},
		{"writer", "w-1", "1", "0"},
	})
	impact := got["impact-by-drift"]
	if len(impact) != 2 {
		t.Fatalf("impact-by-drift: %v", impact)
	}
	byAgent := map[string]map[string]any{}
	for _, r := range impact {
		byAgent[fmt.Sprint(r["agent"])] = r
	}
	// The records are the drift's: every call so far was made before the
	// change, with the previous definition (before); none is stale yet.
	for agent, want := range map[string]string{"planner": "medium startElicitation 2 1 [0 2 0 0 0] [p-1]", "writer": "medium startElicitation 1 1 [0 1 0 0 0] [w-1]"} {
		r := byAgent[agent]
		split := []any{r["stale_calls"], r["calls_before_change"], r["calls_with_new_digest"], r["ahead_calls"], r["unknown_calls"]}
		if got := fmt.Sprint(r["risk"], " ", r["tool"], " ", r["calls"], " ", r["sessions"], " ", split, " ", r["session_sample"]); got != want {
			t.Errorf("impact-by-drift %s: %s, want %s", agent, got, want)
		}
	}
}

// wantRows compares the named columns of a query's rows, in order.
func wantRows(t *testing.T, got map[string][]map[string]any, query string, cols []string, want [][]string) {
	t.Helper()
	rows := got[query]
	var have [][]string
	for _, r := range rows {
		var row []string
		for _, c := range cols {
			row = append(row, fmt.Sprint(r[c]))
		}
		have = append(have, row)
	}
	if fmt.Sprint(have) != fmt.Sprint(want) {
		t.Errorf("%s %v:\n got %v\nwant %v", query, cols, have, want)
	}
}

// readOTLP reads a file exporter's output: one OTLP JSON request per line.
func readOTLP[T any](t *testing.T, name string, unmarshal func([]byte) (T, error)) []T {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "clickhouse", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var all []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		v, err := unmarshal(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		all = append(all, v)
	}
	if err := sc.Err(); err != nil || len(all) == 0 {
		t.Fatalf("%s: %d batches, %v", name, len(all), err)
	}
	return all
}

func latest(logs []plog.Logs, traces []ptrace.Traces) time.Time {
	var max pcommon.Timestamp
	eachLog(logs, func(_ plog.ResourceLogs, _ plog.ScopeLogs, r plog.LogRecord) { max = later(max, logTime(r)) })
	eachSpan(traces, func(_ ptrace.ResourceSpans, _ ptrace.ScopeSpans, s ptrace.Span) { max = later(max, s.StartTimestamp()) })
	return max.AsTime()
}

func later(a, b pcommon.Timestamp) pcommon.Timestamp {
	if b > a {
		return b
	}
	return a
}

// logTime is the timestamp the exporter stores: the record's, else the
// observed one.
func logTime(r plog.LogRecord) pcommon.Timestamp {
	if r.Timestamp() != 0 {
		return r.Timestamp()
	}
	return r.ObservedTimestamp()
}

func eachLog(all []plog.Logs, f func(plog.ResourceLogs, plog.ScopeLogs, plog.LogRecord)) {
	for _, ld := range all {
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, r := range sl.LogRecords().All() {
					f(rl, sl, r)
				}
			}
		}
	}
}

func eachSpan(all []ptrace.Traces, f func(ptrace.ResourceSpans, ptrace.ScopeSpans, ptrace.Span)) {
	for _, td := range all {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					f(rs, ss, s)
				}
			}
		}
	}
}

// attrs is what the exporter stores in a Map(String, String) column: every
// value as pcommon.Value.AsString (maps and slices as JSON text).
func attrs(m pcommon.Map) map[string]string {
	out := make(map[string]string, m.Len())
	for k, v := range m.All() {
		out[k] = v.AsString()
	}
	return out
}

// serviceName is the resource's service.name, as the exporter's
// ServiceName column holds it.
func serviceName(res pcommon.Map) string {
	if v, ok := res.Get("service.name"); ok {
		return v.AsString()
	}
	return ""
}

func ts(t pcommon.Timestamp, shift time.Duration) string {
	return t.AsTime().Add(shift).UTC().Format(time.RFC3339Nano)
}

func hexOrEmpty(empty bool, s string) string {
	if empty {
		return ""
	}
	return s
}

// jsonEachRow renders rows as ClickHouse's JSONEachRow input.
func jsonEachRow(rows []map[string]any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, row := range rows {
		_ = enc.Encode(row)
	}
	return b.String()
}

// logRows renders log records as the exporter's logs insert fills otel_logs.
func logRows(all []plog.Logs, shift time.Duration) string {
	var rows []map[string]any
	eachLog(all, func(rl plog.ResourceLogs, sl plog.ScopeLogs, r plog.LogRecord) {
		rows = append(rows, map[string]any{
			"TraceFlags":         uint8(r.Flags()),
			"SeverityNumber":     uint8(r.SeverityNumber()),
			"SeverityText":       r.SeverityText(),
			"EventName":          r.EventName(),
			"Body":               r.Body().AsString(),
			"LogAttributes":      attrs(r.Attributes()),
			"Timestamp":          ts(logTime(r), shift),
			"TraceId":            hexOrEmpty(r.TraceID().IsEmpty(), r.TraceID().String()),
			"SpanId":             hexOrEmpty(r.SpanID().IsEmpty(), r.SpanID().String()),
			"ServiceName":        serviceName(rl.Resource().Attributes()),
			"ResourceSchemaUrl":  rl.SchemaUrl(),
			"ResourceAttributes": attrs(rl.Resource().Attributes()),
			"ScopeSchemaUrl":     sl.SchemaUrl(),
			"ScopeName":          sl.Scope().Name(),
			"ScopeVersion":       sl.Scope().Version(),
			"ScopeAttributes":    attrs(sl.Scope().Attributes()),
		})
	})
	return jsonEachRow(rows)
}

// spanRows renders spans as the exporter's traces insert fills otel_traces
// (these spans have no events or links).
func spanRows(all []ptrace.Traces, shift time.Duration) string {
	var rows []map[string]any
	eachSpan(all, func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, s ptrace.Span) {
		rows = append(rows, map[string]any{
			"Duration":           uint64(s.EndTimestamp() - s.StartTimestamp()),
			"StatusCode":         s.Status().Code().String(),
			"StatusMessage":      s.Status().Message(),
			"SpanKind":           s.Kind().String(),
			"SpanName":           s.Name(),
			"TraceState":         s.TraceState().AsRaw(),
			"SpanAttributes":     attrs(s.Attributes()),
			"Timestamp":          ts(s.StartTimestamp(), shift),
			"TraceId":            hexOrEmpty(s.TraceID().IsEmpty(), s.TraceID().String()),
			"SpanId":             hexOrEmpty(s.SpanID().IsEmpty(), s.SpanID().String()),
			"ParentSpanId":       hexOrEmpty(s.ParentSpanID().IsEmpty(), s.ParentSpanID().String()),
			"ServiceName":        serviceName(rs.Resource().Attributes()),
			"ResourceAttributes": attrs(rs.Resource().Attributes()),
			"ScopeName":          ss.Scope().Name(),
			"ScopeVersion":       ss.Scope().Version(),
		})
	})
	return jsonEachRow(rows)
}
