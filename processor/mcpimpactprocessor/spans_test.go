package mcpimpactprocessor

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpdrift/mcpdrift/semconv"
)

// everything is a second server that, like search-api, offers "search".
func everythingSnapshot(at time.Time) snapshot {
	return snapshot{server: "everything-prod", url: "http://127.0.0.1:3001/mcp", info: "mcp-servers/everything", at: at,
		tools: map[string]string{"echo": "e1", "add": "a1"}}
}

func TestSpanDialects(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	h.sendLogs(snapshotLogs(everythingSnapshot(t0.Add(-time.Hour))))

	h.sendSpans(tracesOf(
		// GenAI / MCP semantic conventions from another SDK: server only
		// by address and port.
		func(td ptrace.Traces) {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr(semconv.ServiceName, "semconv-agent")
			span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			span.SetName("tools/call echo")
			span.SetKind(ptrace.SpanKindClient)
			span.SetStartTimestamp(ts(t0.Add(-time.Minute)))
			a := span.Attributes()
			a.PutStr(semconv.MCPMethodName, semconv.MCPMethodToolsCall)
			a.PutStr(semconv.GenAIToolName, "echo")
			a.PutStr(semconv.ServerAddress, "127.0.0.1")
			a.PutInt(semconv.ServerPort, 3001)
			a.PutStr(semconv.MCPSessionID, "sess-semconv")
		},
		// Traceloop: no server identity at all; "add" is offered by one
		// known server only, so its calls count there.
		func(td ptrace.Traces) { traceloopSpan(td, "traceloop-agent", "add", t0.Add(-2*time.Minute)) },
		// Traceloop's SDK uses the same shape for tools that are not MCP:
		// not from an MCP instrumentation scope, not a tool call.
		func(td ptrace.Traces) {
			traceloopSpan(td, "traceloop-agent", "add", t0)
			td.ResourceSpans().At(td.ResourceSpans().Len() - 1).ScopeSpans().At(0).Scope().SetName("@traceloop/node-server-sdk")
		},
		// Shinzo, in the server process: the server names itself by
		// service.name (its serverInfo name); no agent.
		func(td ptrace.Traces) {
			shinzoSpan(td, "mcp-servers/everything", "echo", "proc-1", t0.Add(-3*time.Minute))
		},
		// Not tool calls.
		func(td ptrace.Traces) {
			span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			span.SetName("tools/list")
			span.Attributes().PutStr(semconv.MCPMethodName, "tools/list")
			span2 := td.ResourceSpans().At(td.ResourceSpans().Len() - 1).ScopeSpans().At(0).Spans().AppendEmpty()
			span2.SetName("GET /")
			span2.Attributes().PutStr("http.request.method", "GET")
		},
	))

	assertCalls(t, h, map[string]int64{"semconv": 1, "traceloop": 1, "mcp_tool_name": 1})

	d := drift{id: "d-every", server: "everything-prod", url: "http://127.0.0.1:3001/mcp", at: t0,
		previous: map[string]string{"echo": "e1", "add": "a1"}, current: map[string]string{"echo": "e2", "add": "a2"},
		changes: []change{
			{severity: semconv.DriftSeverityBreaking, subject: "tool", name: "echo"},
			{severity: semconv.DriftSeverityWarning, subject: "tool", name: "add"},
		}}
	recs := h.sendLogs(driftLogs(d))
	require.Len(t, recs, 4)
	var got []impactOf
	for _, r := range recs[1:] {
		got = append(got, readImpact(t, r))
	}
	// echo: the semconv agent (matched by host and port) and the server-side
	// span (matched by serverInfo name, agent unknown); add: Traceloop.
	assert.Equal(t, "echo", got[0].tool)
	assert.Equal(t, "echo", got[1].tool)
	agents := map[string]impactOf{got[0].agent: got[0], got[1].agent: got[1]}
	require.Contains(t, agents, "semconv-agent")
	require.Contains(t, agents, "")
	assert.Equal(t, []string{"sess-semconv"}, agents["semconv-agent"].sessionIDs)
	assert.False(t, agents[""].hasAgent, "server-side spans do not name the agent")
	assert.Equal(t, []string{"proc-1"}, agents[""].sessionIDs)
	assert.Equal(t, int64(1), agents[""].unknown, "no digest on the span")
	assert.Equal(t, semconv.ImpactRiskMedium, agents[""].risk, "breaking, but no call is known to use the old definition")
	assert.Equal(t, "add", got[2].tool)
	assert.Equal(t, "traceloop-agent", got[2].agent)
	assert.Zero(t, got[2].sessions, "a Traceloop span with no parent session span has no session")
	assert.Empty(t, got[2].sessionIDs)
	assert.Equal(t, int64(1), got[2].calls)
	assert.Equal(t, semconv.ImpactRiskMedium, got[2].risk, "warning with a recent caller")
}

func TestUnidentifiedSpansNeedAnUnambiguousTool(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	other := snapshot{server: "other-search", url: "https://other.example.com/mcp", at: t0.Add(-time.Hour), tools: map[string]string{"search": "o1"}}
	h.sendLogs(snapshotLogs(other))
	h.sendSpans(tracesOf(func(td ptrace.Traces) { traceloopSpan(td, "traceloop-agent", "search", t0) }))

	recs := h.sendLogs(driftLogs(searchDrift(t0)))
	assert.True(t, readImpact(t, recs[1]).noCallers, "two servers offer search: a span that names neither is attributed to none")
}

func TestServerSideSpansCanBeLeftOut(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.IndexServerSpans = false
	h := newHarness(t, cfg)
	h.sendLogs(snapshotLogs(everythingSnapshot(t0.Add(-time.Hour))))
	h.sendSpans(tracesOf(func(td ptrace.Traces) { shinzoSpan(td, "mcp-servers/everything", "echo", "proc-1", t0) }))
	d := drift{id: "x", server: "everything-prod", at: t0, previous: map[string]string{"echo": "e1"}, current: map[string]string{"echo": "e2"},
		changes: []change{{severity: semconv.DriftSeverityBreaking, subject: "tool", name: "echo"}}}
	recs := h.sendLogs(driftLogs(d))
	assert.True(t, readImpact(t, recs[1]).noCallers)
}

func TestSpansMatchOnceASnapshotArrives(t *testing.T) {
	h := newHarness(t, nil)
	// The interceptor defaulted mcpdrift.server.name to serverInfo.name;
	// the receiver's target is called everything-prod.
	c := call{agent: "planner", server: "mcp-servers/everything", tool: "echo", session: "s1", digest: "e1", at: t0.Add(-time.Minute)}
	out := h.sendSpans(callsOf(c))
	_, _, judged := spanVerdict(onlySpan(t, out))
	assert.False(t, judged, "nothing known about the server yet: the span passes untouched")

	h.sendLogs(snapshotLogs(everythingSnapshot(t0.Add(-time.Hour))))
	c.at, c.digest = t0, "e0"
	out = h.sendSpans(callsOf(c))
	cur, stale, judged := spanVerdict(onlySpan(t, out))
	require.True(t, judged, "matched by serverInfo name")
	assert.Equal(t, "e1", cur)
	assert.False(t, stale, "e0 is a digest no probe has shown")
	assert.Equal(t, semconv.StalenessAhead, spanStaleness(onlySpan(t, out)))

	d := drift{id: "x", server: "everything-prod", at: t0, previous: map[string]string{"echo": "e1", "add": "a1"}, current: map[string]string{"echo": "e2", "add": "a1"},
		changes: []change{{severity: semconv.DriftSeverityBreaking, subject: "tool", name: "echo"}}}
	recs := h.sendLogs(driftLogs(d))
	im := readImpact(t, recs[1])
	assert.Equal(t, int64(2), im.calls, "the span indexed before the snapshot counts too")
	assert.Equal(t, int64(1), im.before)
	assert.Equal(t, int64(1), im.unknown, "e0 settled: the drift's listing, as recent as the call, did not show it")
	assert.Zero(t, im.ahead)
}

func TestURLMatching(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	for _, u := range []string{
		"HTTPS://user:secret@MCP.Example.com:443/mcp/?tenant=a#x",
		"https://mcp.example.com/mcp",
	} {
		out := h.sendSpans(callsOf(call{agent: "a", server: "configured-elsewhere", url: u, tool: "search", session: "s", digest: "d1", at: t0}))
		cur, stale, judged := spanVerdict(onlySpan(t, out))
		assert.True(t, judged, u)
		assert.Equal(t, "d1", cur, u)
		assert.False(t, stale, u)
	}
	out := h.sendSpans(callsOf(call{agent: "a", server: "configured-elsewhere", url: "https://mcp.example.com/other", tool: "search", session: "s", digest: "d1", at: t0}))
	_, _, judged := spanVerdict(onlySpan(t, out))
	assert.False(t, judged, "another path is another server")
}

func TestSecretsInURLsAreNotKept(t *testing.T) {
	h := newHarness(t, nil)
	h.sendSpans(callsOf(call{agent: "a", server: "x", url: "https://user:hunter2@mcp.example.com/mcp?api_key=s3cret", tool: "t", session: "s", at: t0}))
	var kept []string
	for _, id := range instance(t, h).state.index.servers.vals {
		kept = append(kept, id.url)
	}
	assert.NotContains(t, strings.Join(kept, " "), "hunter2")
	assert.NotContains(t, strings.Join(kept, " "), "s3cret")
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spanName string
		mcpScope bool
		attrs    spanAttrs
		dialect  dialect
		tool     string
	}{
		{"semconv", "tools/call x", false, spanAttrs{method: "tools/call", genaiTool: "search"}, dialectSemconv, "search"},
		{"semconv, tool from the span name", "tools/call search", false, spanAttrs{method: "tools/call"}, dialectSemconv, "search"},
		{"semconv with mcp.tool.name", "tools/call", false, spanAttrs{method: "tools/call", mcpTool: "search"}, dialectToolName, "search"},
		{"mcp.tool.name alone", "mcp.tool.search", false, spanAttrs{mcpTool: "search"}, dialectToolName, "search"},
		{"mcp.tool.name on another method", "resources/read", false, spanAttrs{method: "resources/read", mcpTool: "search"}, dialectNone, ""},
		{"traceloop", "search.tool", true, spanAttrs{tlKind: "tool", tlEntity: "search"}, dialectTraceloop, "search"},
		{"traceloop outside an MCP scope", "search.tool", false, spanAttrs{tlKind: "tool", tlEntity: "search"}, dialectNone, ""},
		{"traceloop name mismatch", "other.tool", true, spanAttrs{tlKind: "tool", tlEntity: "search"}, dialectNone, ""},
		{"traceloop other kind", "tools/list.mcp", true, spanAttrs{tlKind: "unknown", tlEntity: "tools/list"}, dialectNone, ""},
		{"execute_tool without MCP", "execute_tool search", false, spanAttrs{genaiTool: "search"}, dialectNone, ""},
		{"tools/list", "tools/list", false, spanAttrs{method: "tools/list"}, dialectNone, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, tool := classify(tc.spanName, tc.mcpScope, &tc.attrs)
			assert.Equal(t, tc.dialect, d)
			assert.Equal(t, tc.tool, tool)
		})
	}
	assert.True(t, isMCPScope("@traceloop/instrumentation-mcp"))
	assert.True(t, isMCPScope("opentelemetry.instrumentation.mcp.instrumentation"))
	assert.False(t, isMCPScope("@traceloop/node-server-sdk"))
}
