package mcpimpactprocessor

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// The spans of @traceloop/instrumentation-mcp 0.27 instrumenting a real
// @modelcontextprotocol/sdk 1.32 client that talks to server-everything
// 2026.1.26, as its OTLP/HTTP exporter sent them (one request per line):
// two connections, echo twice and get-sum once on the first, echo once on
// the second. Recorded by testdata/npm/traceloop-mcp-0.27/capture.cjs;
// TestTraceloopLive records them afresh.
const traceloopFixture = "testdata/traceloop-0.27.jsonl"

// readOTLPLines reads OTLP/JSON trace requests, one per line, and moves
// their times so that the last span ends at end (the harness's clock is
// fixed; the recording is not).
func readOTLPLines(t *testing.T, raw []byte, end time.Time) []ptrace.Traces {
	t.Helper()
	var batches []ptrace.Traces
	var last pcommon.Timestamp
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(sc.Bytes())
		require.NoError(t, err)
		eachSpan(td, func(s ptrace.Span) { last = max(last, s.EndTimestamp()) })
		batches = append(batches, td)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, batches)
	shift := int64(pcommon.NewTimestampFromTime(end)) - int64(last)
	for _, td := range batches {
		eachSpan(td, func(s ptrace.Span) {
			s.SetStartTimestamp(pcommon.Timestamp(int64(s.StartTimestamp()) + shift))
			s.SetEndTimestamp(pcommon.Timestamp(int64(s.EndTimestamp()) + shift))
		})
	}
	return batches
}

func eachSpan(td ptrace.Traces, f func(ptrace.Span)) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				f(s)
			}
		}
	}
}

// traceloopSessions returns the "trace/span" IDs of the recording's
// mcp.client.session spans.
func traceloopSessions(batches []ptrace.Traces) []string {
	var ids []string
	for _, td := range batches {
		eachSpan(td, func(s ptrace.Span) {
			if s.Name() == "mcp.client.session" {
				ids = append(ids, s.TraceID().String()+"/"+s.SpanID().String())
			}
		})
	}
	slices.Sort(ids)
	return ids
}

// checkTraceloopImpact replays a recording batch by batch (each session
// span arrives after its calls) and checks the impact of a drift of echo
// and get-sum.
func checkTraceloopImpact(t *testing.T, batches []ptrace.Traces) {
	t.Helper()
	sessions := traceloopSessions(batches)
	require.Len(t, sessions, 2, "two connections, two mcp.client.session spans")
	for _, td := range batches {
		eachSpan(td, func(s ptrace.Span) {
			if s.Name() == "echo.tool" || s.Name() == "get-sum.tool" {
				for _, k := range []string{semconv.ServerAddress, semconv.ServerURL, semconv.ServerName, semconv.URLFull, semconv.MCPSessionID} {
					_, ok := s.Attributes().Get(k)
					assert.False(t, ok, "Traceloop 0.27 does not set %s (docs/mcpimpact.md says so)", k)
				}
			}
		})
	}

	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(snapshot{server: "everything-prod", url: "http://127.0.0.1:3001/mcp", info: "mcp-servers/everything", at: t0.Add(-time.Hour),
		tools: map[string]string{"echo": "e1", "get-sum": "s1"}}))
	for _, td := range batches {
		h.sendSpans(td)
	}
	assertCalls(t, h, map[string]int64{"traceloop": 4})

	d := drift{id: "d-tl", server: "everything-prod", url: "http://127.0.0.1:3001/mcp", at: t0,
		previous: map[string]string{"echo": "e1", "get-sum": "s1"}, current: map[string]string{"echo": "e2", "get-sum": "s2"},
		changes: []change{
			{severity: semconv.DriftSeverityBreaking, subject: "tool", name: "echo"},
			{severity: semconv.DriftSeverityWarning, subject: "tool", name: "get-sum"},
		}}
	recs := h.sendLogs(driftLogs(d))
	require.Len(t, recs, 3)
	echo, sum := readImpact(t, recs[1]), readImpact(t, recs[2])
	assert.Equal(t, "echo", echo.tool)
	assert.Equal(t, "traceloop-agent", echo.agent)
	assert.Equal(t, int64(3), echo.calls)
	assert.Equal(t, int64(2), echo.sessions, "one session per connection")
	got := slices.Clone(echo.sessionIDs)
	slices.Sort(got)
	assert.Equal(t, sessions, got, "a session is named by its mcp.client.session span")
	assert.Equal(t, "get-sum", sum.tool)
	assert.Equal(t, int64(1), sum.calls)
	assert.Equal(t, int64(1), sum.sessions)
	assert.Contains(t, sessions, sum.sessionIDs[0])
	assert.Equal(t, int64(3), echo.unknown, "Traceloop spans carry no digest")
}

func TestTraceloopSessions(t *testing.T) {
	raw, err := os.ReadFile(traceloopFixture)
	require.NoError(t, err)
	checkTraceloopImpact(t, readOTLPLines(t, raw, t0.Add(-time.Minute)))
}

// An agent that opens both connections inside one request span puts them in
// one trace: they are still two sessions (keying by trace ID would merge them).
func TestTraceloopConnectionsInOneTrace(t *testing.T) {
	raw, err := os.ReadFile(traceloopFixture)
	require.NoError(t, err)
	batches := readOTLPLines(t, raw, t0.Add(-time.Minute))
	var trace pcommon.TraceID
	for _, td := range batches {
		eachSpan(td, func(s ptrace.Span) {
			if trace.IsEmpty() {
				trace = s.TraceID()
			}
			s.SetTraceID(trace)
		})
	}
	checkTraceloopImpact(t, batches)
}

// TestTraceloopLive records the spans afresh with the pinned install
// (testdata/npm/traceloop-mcp-0.27) and checks them as the recording is.
func TestTraceloopLive(t *testing.T) {
	entry := testservers.NPMPackage(t, "traceloop-mcp-0.27", filepath.Join("@traceloop", "instrumentation-mcp", "package.json"))
	modules := filepath.Dir(filepath.Dir(filepath.Dir(entry)))
	everything := testservers.Everything(t, "2026.1.26")
	// Generous: two server starts on a loaded 2-core machine; a hang fails.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testservers.Node(t), filepath.Join(testservers.RepoRoot(), "testdata", "npm", "traceloop-mcp-0.27", "capture.cjs"), everything)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	checkTraceloopImpact(t, readOTLPLines(t, out, t0.Add(-time.Minute)))
}

// Traceloop spans name no server. Where the app knows it, setting
// mcpdrift.server.url on them (a span processor in the agent, a resource
// attribute, or a transform processor before mcpimpact) gives them one, so
// they count even when several servers offer the tool.
func TestTraceloopServerURL(t *testing.T) {
	raw, err := os.ReadFile(traceloopFixture)
	require.NoError(t, err)
	batches := readOTLPLines(t, raw, t0.Add(-time.Minute))
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(snapshot{server: "everything-prod", url: "http://127.0.0.1:3001/mcp", at: t0.Add(-time.Hour), tools: map[string]string{"echo": "e1"}}))
	h.sendLogs(snapshotLogs(snapshot{server: "everything-staging", url: "http://127.0.0.1:3002/mcp", at: t0.Add(-time.Hour), tools: map[string]string{"echo": "e1"}}))
	for _, td := range batches {
		eachSpan(td, func(s ptrace.Span) {
			s.Attributes().PutStr(semconv.ServerURL, "http://127.0.0.1:3001/mcp")
		})
		h.sendSpans(td)
	}
	for _, c := range []struct {
		server string
		calls  int64
	}{{"everything-prod", 3}, {"everything-staging", 0}} {
		d := drift{id: "d-" + c.server, server: c.server, at: t0, previous: map[string]string{"echo": "e1"}, current: map[string]string{"echo": "e2"},
			changes: []change{{severity: semconv.DriftSeverityBreaking, subject: "tool", name: "echo"}}}
		im := readImpact(t, h.sendLogs(driftLogs(d))[1])
		assert.Equal(t, c.calls, im.calls, c.server)
	}
}
