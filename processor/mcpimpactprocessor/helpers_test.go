package mcpimpactprocessor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"

	"github.com/mcpdrift/mcpdrift/processor/mcpimpactprocessor/internal/metadata"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// Test inputs are built with pdata in exactly the shape docs/events.md and
// DESIGN.md "Names on the wire" fix, and in the shapes the other
// instrumentations emit.

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// fakeClock is the processor's injected clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock { return &fakeClock{now: t0} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// call describes one tool call as the mcpdrift interceptor records it.
type call struct {
	agent   string // gen_ai.agent.name; "" leaves it to service.name
	service string // resource service.name
	server  string // mcpdrift.server.name
	url     string // mcpdrift.server.url
	tool    string
	session string // gen_ai.conversation.id
	digest  string // mcpdrift.tool.digest
	at      time.Time
	failed  bool
	took    time.Duration // span duration; 0: 20ms; negative: no end time
}

// interceptorSpan appends the span the interceptor emits for c.
func interceptorSpan(td ptrace.Traces, c call) ptrace.Span {
	rs := td.ResourceSpans().AppendEmpty()
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("github.com/mcpdrift/mcpdrift/interceptor")
	span := ss.Spans().AppendEmpty()
	setInterceptorSpan(rs, span, c)
	return span
}

// setInterceptorSpan makes span (in rs) the one the interceptor emits for
// c, also over a span made for an earlier call that a processor then
// annotated: its attributes are dropped first (their room is kept).
func setInterceptorSpan(rs ptrace.ResourceSpans, span ptrace.Span, c call) {
	all := func(string, pcommon.Value) bool { return true }
	rs.Resource().Attributes().RemoveIf(all)
	rs.Resource().Attributes().PutStr(semconv.ServiceName, c.service)
	span.Attributes().RemoveIf(all)
	span.Status().SetCode(ptrace.StatusCodeUnset)
	span.SetName(semconv.MCPMethodToolsCall + " " + c.tool)
	span.SetKind(ptrace.SpanKindClient)
	span.SetTraceID(pcommon.TraceID{1})
	span.SetSpanID(pcommon.SpanID{2})
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(c.at))
	switch {
	case c.took == 0:
		span.SetEndTimestamp(pcommon.NewTimestampFromTime(c.at.Add(20 * time.Millisecond)))
	case c.took > 0:
		span.SetEndTimestamp(pcommon.NewTimestampFromTime(c.at.Add(c.took)))
	default:
		span.SetEndTimestamp(0)
	}
	a := span.Attributes()
	a.PutStr(semconv.MCPMethodName, semconv.MCPMethodToolsCall)
	a.PutStr(semconv.GenAIOperationName, semconv.GenAIOperationExecTool)
	a.PutStr(semconv.GenAIToolName, c.tool)
	a.PutStr(semconv.JSONRPCRequestID, "7")
	a.PutStr(semconv.MCPProtocolVersion, "2025-11-25")
	a.PutStr(semconv.NetworkTransport, semconv.NetworkTransportTCP)
	a.PutStr(semconv.ServerAddress, "mcp.example.com")
	a.PutInt(semconv.ServerPort, 443)
	if c.agent != "" {
		a.PutStr(semconv.GenAIAgentName, c.agent)
	}
	if c.session != "" {
		a.PutStr(semconv.GenAIConversationID, c.session)
	}
	a.PutStr(semconv.ServerName, c.server)
	if c.url != "" {
		a.PutStr(semconv.ServerURL, c.url)
	}
	a.PutStr(semconv.ClientSession, "cs-"+c.session)
	if c.digest != "" {
		a.PutStr(semconv.ToolDigest, c.digest)
	}
	a.PutStr(semconv.ToolsSetDigest, "setdigest")
	a.PutBool(semconv.ToolKnown, true)
	if c.failed {
		a.PutStr(semconv.ErrorType, semconv.ErrorTypeToolError)
		span.Status().SetCode(ptrace.StatusCodeError)
	}
}

// traceloopSpan appends the client span @traceloop/instrumentation-mcp
// emits for tools/call (no server identity, no digest), but with no parent:
// without its mcp.client.session span it has no session. Real recordings:
// traceloop_test.go.
func traceloopSpan(td ptrace.Traces, service, tool string, at time.Time) ptrace.Span {
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(semconv.ServiceName, service)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("@traceloop/instrumentation-mcp")
	span := ss.Spans().AppendEmpty()
	span.SetName(tool + ".tool")
	span.SetKind(ptrace.SpanKindClient)
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(at))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(at.Add(time.Millisecond)))
	span.Attributes().PutStr("traceloop.span.kind", "tool")
	span.Attributes().PutStr("traceloop.entity.name", tool)
	span.Attributes().PutStr("traceloop.workflow.name", service+".mcp")
	span.Attributes().PutStr("traceloop.entity.input", `{"tool_name":"`+tool+`","arguments":{}}`)
	return span
}

// shinzoSpan appends the span @shinzolabs/instrumentation-mcp records in
// the server process: kind INTERNAL, client.address, mcp.tool.name, the
// server's name as service.name and a per-process mcp.session.id.
func shinzoSpan(td ptrace.Traces, serverService, tool, session string, at time.Time) ptrace.Span {
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(semconv.ServiceName, serverService)
	rs.Resource().Attributes().PutStr(semconv.MCPSessionID, session)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(serverService)
	span := ss.Spans().AppendEmpty()
	span.SetName(semconv.MCPMethodToolsCall + " " + tool)
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(at))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(at.Add(time.Millisecond)))
	a := span.Attributes()
	a.PutStr(semconv.MCPSessionID, session)
	a.PutStr(semconv.MCPMethodName, semconv.MCPMethodToolsCall)
	a.PutStr("mcp.tool.name", tool)
	a.PutStr("mcp.request.id", "5d3c")
	a.PutStr("client.address", "10.0.0.7")
	return span
}

func tracesOf(spans ...func(ptrace.Traces)) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, add := range spans {
		add(td)
	}
	return td
}

func callsOf(cs ...call) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, c := range cs {
		interceptorSpan(td, c)
	}
	return td
}

// snapshot is a mcpdrift.snapshot event.
type snapshot struct {
	server, url, info string
	at                time.Time
	tools             map[string]string
	attributeOnly     bool // event name only as the event.name attribute
}

func snapshotLogs(s snapshot) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	res := rl.Resource().Attributes()
	res.PutStr(semconv.ServerName, s.server)
	res.PutStr(semconv.ServerURL, s.url)
	rec := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	if !s.attributeOnly {
		rec.SetEventName(semconv.EventSnapshot)
	}
	rec.SetTimestamp(pcommon.NewTimestampFromTime(s.at))
	rec.SetObservedTimestamp(pcommon.NewTimestampFromTime(s.at))
	rec.SetSeverityNumber(plog.SeverityNumberInfo)
	rec.Body().SetStr("snapshot of " + s.server)
	a := rec.Attributes()
	a.PutStr(semconv.EventName, semconv.EventSnapshot)
	a.PutStr(semconv.ServerName, s.server)
	a.PutStr(semconv.ServerURL, s.url)
	a.PutStr(semconv.ContractDigest, "contract-"+s.server)
	a.PutStr(semconv.ServerInfoName, s.info)
	a.PutStr(semconv.ServerInfoVersion, "1.0.0")
	a.PutStr(semconv.Transport, "streamable-http")
	digests := a.PutEmptyMap(semconv.ToolDigests)
	for tool, d := range s.tools {
		digests.PutStr(tool, d)
	}
	a.PutInt(semconv.ToolsCount, int64(len(s.tools)))
	return ld
}

// change is one member of mcpdrift.drift.changes.
type change struct {
	severity, subject, name, rule string
}

// drift is a mcpdrift.drift event.
type drift struct {
	id, server, url   string
	at                time.Time
	previous, current map[string]string
	changes           []change
	attributeOnly     bool
}

func driftLogs(d drift) plog.Logs {
	ld := plog.NewLogs()
	appendDrift(ld, d)
	return ld
}

func appendDrift(ld plog.Logs, d drift) plog.LogRecord {
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(semconv.ServerName, d.server)
	rl.Resource().Attributes().PutStr(semconv.ServerURL, d.url)
	rec := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	if !d.attributeOnly {
		rec.SetEventName(semconv.EventDrift)
	}
	rec.SetTimestamp(pcommon.NewTimestampFromTime(d.at))
	rec.SetSeverityNumber(plog.SeverityNumberError)
	rec.SetSeverityText(semconv.DriftSeverityBreaking)
	rec.Body().SetStr("drift of " + d.server)
	a := rec.Attributes()
	a.PutStr(semconv.EventName, semconv.EventDrift)
	a.PutStr(semconv.DriftID, d.id)
	a.PutStr(semconv.ServerName, d.server)
	a.PutStr(semconv.ServerURL, d.url)
	a.PutStr(semconv.DriftSeverity, semconv.DriftSeverityBreaking)
	a.PutStr(semconv.PreviousContract, "contract-before")
	a.PutStr(semconv.ContractDigest, "contract-after")
	counts := map[string]int64{}
	changes := a.PutEmptySlice(semconv.DriftChanges)
	for _, c := range d.changes {
		m := changes.AppendEmpty().SetEmptyMap()
		m.PutStr(semconv.ChangeRule, c.rule)
		m.PutStr(semconv.ChangeSeverity, c.severity)
		m.PutStr(semconv.ChangeSubject, c.subject)
		m.PutStr(semconv.ChangeName, c.name)
		m.PutStr(semconv.ChangePath, "/inputSchema/required")
		m.PutStr(semconv.ChangeBefore, `["q"]`)
		m.PutStr(semconv.ChangeAfter, `["q","filters"]`)
		m.PutStr(semconv.ChangeMessage, "callers that omit filters now fail")
		counts[c.severity]++
	}
	a.PutInt(semconv.DriftBreaking, counts[semconv.DriftSeverityBreaking])
	a.PutInt(semconv.DriftWarning, counts[semconv.DriftSeverityWarning])
	a.PutInt(semconv.DriftCompatible, counts[semconv.DriftSeverityCompatible])
	a.PutInt(semconv.DriftInfo, counts[semconv.DriftSeverityInfo])
	prev := a.PutEmptyMap(semconv.PreviousToolDigests)
	for tool, dg := range d.previous {
		prev.PutStr(tool, dg)
	}
	cur := a.PutEmptyMap(semconv.ToolDigests)
	for tool, dg := range d.current {
		cur.PutStr(tool, dg)
	}
	return rec
}

// harness runs one processor instance in a traces and a logs pipeline.
type harness struct {
	t       *testing.T
	clock   *fakeClock
	tel     *componenttest.Telemetry
	factory *factory
	traces  processor.Traces
	logs    processor.Logs
	spans   *consumertest.TracesSink
	events  *consumertest.LogsSink
	stopped bool
}

type harnessOptions struct {
	clock  *fakeClock
	host   component.Host
	logger *zap.Logger
}

type harnessOption func(*harnessOptions)

func withClock(c *fakeClock) harnessOption    { return func(o *harnessOptions) { o.clock = c } }
func withHost(h component.Host) harnessOption { return func(o *harnessOptions) { o.host = h } }
func withLogger(l *zap.Logger) harnessOption  { return func(o *harnessOptions) { o.logger = l } }

func newHarness(t *testing.T, cfg *Config, opts ...harnessOption) *harness {
	t.Helper()
	o := harnessOptions{clock: newClock(), host: componenttest.NewNopHost()}
	for _, opt := range opts {
		opt(&o)
	}
	h := &harness{t: t, clock: o.clock, tel: componenttest.NewTelemetry(), spans: new(consumertest.TracesSink), events: new(consumertest.LogsSink)}
	t.Cleanup(func() { require.NoError(t, h.tel.Shutdown(context.Background())) })
	h.factory = newFactory(h.clock.Now)
	pf := h.factory.processorFactory()
	if cfg == nil {
		cfg = pf.CreateDefaultConfig().(*Config)
	}
	set := processortest.NewNopSettings(pf.Type())
	set.TelemetrySettings = h.tel.NewTelemetrySettings()
	if o.logger != nil {
		set.Logger = o.logger
	}
	var err error
	h.traces, err = pf.CreateTraces(context.Background(), set, cfg, h.spans)
	require.NoError(t, err)
	h.logs, err = pf.CreateLogs(context.Background(), set, cfg, h.events)
	require.NoError(t, err)
	require.NoError(t, h.traces.Start(context.Background(), o.host))
	require.NoError(t, h.logs.Start(context.Background(), o.host))
	t.Cleanup(h.stop)
	return h
}

// stop shuts both pipelines' processors down, as the collector does.
func (h *harness) stop() {
	if h.stopped {
		return
	}
	h.stopped = true
	require.NoError(h.t, h.traces.Shutdown(context.Background()))
	require.NoError(h.t, h.logs.Shutdown(context.Background()))
}

func (h *harness) sendSpans(td ptrace.Traces) ptrace.Traces {
	h.t.Helper()
	h.spans.Reset()
	require.NoError(h.t, h.traces.ConsumeTraces(context.Background(), td))
	all := h.spans.AllTraces()
	require.Len(h.t, all, 1)
	return all[0]
}

func (h *harness) sendLogs(ld plog.Logs) []plog.LogRecord {
	h.t.Helper()
	h.events.Reset()
	require.NoError(h.t, h.logs.ConsumeLogs(context.Background(), ld))
	var out []plog.LogRecord
	for _, l := range h.events.AllLogs() {
		for i := 0; i < l.ResourceLogs().Len(); i++ {
			sls := l.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				recs := sls.At(j).LogRecords()
				for k := 0; k < recs.Len(); k++ {
					out = append(out, recs.At(k))
				}
			}
		}
	}
	return out
}

// impactOf is an impact record read back into plain values.
type impactOf struct {
	driftID, server, tool, agent, severity, risk, lastCall string
	hasAgent                                               bool
	sessions, calls, errors                                int64
	before, stale, new, ahead, unknown                     int64
	sessionIDs                                             []string
	noCallers                                              bool
	body                                                   string
}

func readImpact(t *testing.T, rec plog.LogRecord) impactOf {
	t.Helper()
	require.Equal(t, semconv.EventImpact, rec.EventName())
	a := rec.Attributes()
	str := func(k string) string { v, _ := a.Get(k); return v.Str() }
	num := func(k string) int64 { v, ok := a.Get(k); require.True(t, ok, k); return v.Int() }
	out := impactOf{
		driftID: str(semconv.DriftID), server: str(semconv.ServerName), tool: str(semconv.GenAIToolName),
		agent: str(semconv.GenAIAgentName), severity: str(semconv.DriftSeverity), risk: str(semconv.ImpactRisk),
		lastCall: str(semconv.ImpactLastCall), sessions: num(semconv.ImpactSessions), calls: num(semconv.ImpactCalls),
		errors: num(semconv.ImpactErrors), body: rec.Body().Str(),
	}
	_, out.hasAgent = a.Get(semconv.GenAIAgentName)
	used, ok := a.Get(semconv.ImpactDigestsUsed)
	require.True(t, ok)
	get := func(k string) int64 { v, ok := used.Map().Get(k); require.True(t, ok, k); return v.Int() }
	out.before, out.stale, out.new = get(semconv.ImpactDigestBefore), get(semconv.ImpactDigestStale), get(semconv.ImpactDigestNew)
	out.ahead, out.unknown = get(semconv.ImpactDigestAhead), get(semconv.ImpactDigestUnknown)
	ids, ok := a.Get(semconv.ImpactSessionSample)
	require.True(t, ok)
	for _, v := range ids.Slice().All() {
		out.sessionIDs = append(out.sessionIDs, v.Str())
	}
	nc, ok := a.Get(semconv.ImpactNoRecentCaller)
	require.True(t, ok)
	out.noCallers = nc.Bool()
	return out
}

// spanVerdict reads the staleness attributes the processor set on a span.
func spanVerdict(span ptrace.Span) (current string, stale, judged bool) {
	c, ok1 := span.Attributes().Get(semconv.ToolCurrentDigest)
	s, ok2 := span.Attributes().Get(semconv.ToolStale)
	if !ok1 || !ok2 {
		return "", false, false
	}
	return c.Str(), s.Bool(), true
}

// spanStaleness reads mcpdrift.tool.staleness ("" when not set).
func spanStaleness(span ptrace.Span) string {
	v, _ := span.Attributes().Get(semconv.ToolStaleness)
	return v.Str()
}

func onlySpan(t *testing.T, td ptrace.Traces) ptrace.Span {
	t.Helper()
	require.Equal(t, 1, td.SpanCount())
	return td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
}

func ts(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }

// assertCalls checks the tool-call counter by dialect.
func assertCalls(t *testing.T, h *harness, want map[string]int64) {
	t.Helper()
	m, err := h.tel.GetMetric("otelcol_processor_mcpimpact_tool_calls")
	require.NoError(t, err)
	got := map[string]int64{}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		v, _ := dp.Attributes.Value("dialect")
		got[v.AsString()] += dp.Value
	}
	assert.Equal(t, want, got)
}

// instance returns the processor behind the harness's pipelines.
func instance(t *testing.T, h *harness) *impactProcessor {
	t.Helper()
	c, err := h.factory.instances.LoadOrStore(component.NewID(metadata.Type), func() (*impactProcessor, error) {
		return nil, errors.New("no instance")
	})
	require.NoError(t, err)
	return c.Unwrap()
}
