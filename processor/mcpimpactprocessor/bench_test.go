package mcpimpactprocessor

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/dev/benchspans"
	"github.com/mcpdrift/mcpdrift/dev/testkit/benchutil"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// benchBatch builds a batch of n spans as an agent fleet exports them: HTTP,
// database and LLM spans with their usual attributes, and one tool call in
// ten (70 % from the mcpdrift interceptor, 15 % Traceloop, 15 % Shinzo).
func benchBatch(rng *rand.Rand, n int, at time.Time) ptrace.Traces {
	td := ptrace.NewTraces()
	const perResource = 100
	for r := 0; r < n/perResource; r++ {
		rs := td.ResourceSpans().AppendEmpty()
		res := rs.Resource().Attributes()
		service := fmt.Sprintf("agent-%02d", rng.IntN(20))
		res.PutStr(semconv.ServiceName, service)
		res.PutStr("service.version", "1.4.2")
		res.PutStr("deployment.environment.name", "production")
		res.PutStr("host.name", fmt.Sprintf("node-%03d.cluster.local", rng.IntN(200)))
		res.PutStr("telemetry.sdk.language", "go")
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp")
		mcp := rs.ScopeSpans().AppendEmpty()
		mcp.Scope().SetName("@traceloop/instrumentation-mcp")
		for i := 0; i < perResource; i++ {
			start := at.Add(-time.Duration(rng.IntN(60_000)) * time.Millisecond)
			var span ptrace.Span
			switch k := rng.IntN(100); {
			case k < 7:
				span = ss.Spans().AppendEmpty()
				fillInterceptorCall(rng, span, start)
			case k < 8:
				span = mcp.Spans().AppendEmpty()
				tool := fmt.Sprintf("tool_%02d", rng.IntN(30))
				span.SetName(tool + ".tool")
				span.Attributes().PutStr(semconv.TraceloopSpanKind, semconv.TraceloopSpanKindTool)
				span.Attributes().PutStr(semconv.TraceloopEntityName, tool)
				span.Attributes().PutStr("traceloop.workflow.name", service+".mcp")
			case k < 10:
				span = ss.Spans().AppendEmpty()
				tool := fmt.Sprintf("tool_%02d", rng.IntN(30))
				span.SetName("tools/call " + tool)
				a := span.Attributes()
				a.PutStr(semconv.MCPMethodName, semconv.MCPMethodToolsCall)
				a.PutStr(semconv.MCPToolName, tool)
				a.PutStr(semconv.MCPSessionID, fmt.Sprintf("proc-%d", rng.IntN(50)))
				a.PutStr(semconv.ClientAddress, "10.1.2.3")
			default:
				span = ss.Spans().AppendEmpty()
				fillOrdinarySpan(rng, span, k)
			}
			span.SetTraceID(pcommon.TraceID{byte(r), byte(i), 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
			span.SetSpanID(pcommon.SpanID{byte(r), byte(i), 3, 4, 5, 6, 7, 8})
			span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			span.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(35 * time.Millisecond)))
		}
	}
	return td
}

func fillInterceptorCall(rng *rand.Rand, span ptrace.Span, _ time.Time) {
	benchspans.ToolCall{
		Server:       fmt.Sprintf("server-%d", rng.IntN(5)),
		Tool:         fmt.Sprintf("tool_%02d", rng.IntN(30)),
		Agent:        fmt.Sprintf("planner-%d", rng.IntN(10)),
		Conversation: fmt.Sprintf("conv-%08x", rng.IntN(10_000)),
		Session:      fmt.Sprintf("cs-%06x", rng.IntN(5000)),
		Digest:       fmt.Sprintf("%064x", rng.IntN(2)),
		SetDigest:    fmt.Sprintf("%064x", 7),
		RequestID:    rng.IntN(1000),
	}.Fill(span)
}

func fillOrdinarySpan(rng *rand.Rand, span ptrace.Span, k int) {
	a := span.Attributes()
	switch k % 3 {
	case 0:
		span.SetName("GET /api/v1/documents/{id}")
		span.SetKind(ptrace.SpanKindServer)
		a.PutStr("http.request.method", "GET")
		a.PutStr("url.path", fmt.Sprintf("/api/v1/documents/%d", rng.IntN(100000)))
		a.PutStr("url.scheme", "https")
		a.PutStr("http.route", "/api/v1/documents/{id}")
		a.PutInt("http.response.status_code", 200)
		a.PutStr(semconv.ServerAddress, "api.internal")
		a.PutInt(semconv.ServerPort, 8443)
		a.PutStr("network.protocol.version", "1.1")
		a.PutStr("user_agent.original", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36")
		a.PutStr(semconv.ClientAddress, "10.0.3.17")
	case 1:
		span.SetName("SELECT documents")
		span.SetKind(ptrace.SpanKindClient)
		a.PutStr("db.system.name", "postgresql")
		a.PutStr("db.namespace", "app")
		a.PutStr("db.collection.name", "documents")
		a.PutStr("db.operation.name", "SELECT")
		a.PutStr("db.query.text", "SELECT id, title, body FROM documents WHERE id = $1")
		a.PutStr(semconv.ServerAddress, "pg.internal")
		a.PutInt(semconv.ServerPort, 5432)
	default:
		span.SetName("chat gpt-5")
		span.SetKind(ptrace.SpanKindClient)
		a.PutStr(semconv.GenAIOperationName, "chat")
		a.PutStr("gen_ai.provider.name", "openai")
		a.PutStr("gen_ai.request.model", "gpt-5")
		a.PutStr("gen_ai.response.model", "gpt-5-2026-08-01")
		a.PutInt("gen_ai.usage.input_tokens", int64(rng.IntN(4000)))
		a.PutInt("gen_ai.usage.output_tokens", int64(rng.IntN(800)))
		a.PutStr(semconv.GenAIAgentName, "planner")
		a.PutStr(semconv.GenAIConversationID, fmt.Sprintf("conv-%08x", rng.IntN(10_000)))
		a.PutStr(semconv.ServerAddress, "api.openai.com")
		a.PutInt(semconv.ServerPort, 443)
	}
}

// BenchmarkThroughput compares spans per second through mcpimpact with a
// pass-through processor on the same batches. Each iteration is one
// collector hop's share of the work: decode the OTLP protobuf batch (what
// the OTLP receiver does) and push it through the processor.
func BenchmarkThroughput(b *testing.B) {
	const batches, spans = 16, 1000
	rng := rand.New(rand.NewPCG(1, 2))
	clock := newClock()
	var wire [][]byte
	for range batches {
		raw, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(benchBatch(rng, spans, clock.Now()))
		if err != nil {
			b.Fatal(err)
		}
		wire = append(wire, raw)
	}
	ctx := context.Background()
	set := processortest.NewNopSettings(processortest.NopType)
	p, err := newImpactProcessor(set, createDefaultConfig().(*Config), clock.Now)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = p.Shutdown(ctx) }()
	p.applyListing(ctx, &listing{name: "server-0", url: "https://mcp-0.internal/mcp", at: clock.Now().Add(-time.Hour).UnixNano(),
		digests: map[string]string{"tool_00": fmt.Sprintf("%064x", 1)}}, clock.Now())
	ours, err := processorhelper.NewTraces(ctx, set, nil, consumertest.NewNop(), p.processTraces, processorhelper.WithCapabilities(capabilities))
	if err != nil {
		b.Fatal(err)
	}
	passThrough, err := processorhelper.NewTraces(ctx, set, nil, consumertest.NewNop(),
		func(_ context.Context, td ptrace.Traces) (ptrace.Traces, error) { return td, nil })
	if err != nil {
		b.Fatal(err)
	}
	hop := func(proc interface {
		ConsumeTraces(context.Context, ptrace.Traces) error
	}, i int) {
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(wire[i%batches])
		if err != nil {
			b.Fatal(err)
		}
		if err := proc.ConsumeTraces(ctx, td); err != nil {
			b.Fatal(err)
		}
	}
	for i := range batches { // warm the index: steady state, not first sight
		hop(ours, i)
	}
	// Alternate the two on the same batches so that garbage collection and
	// cache state fall on both alike.
	var nsOurs, nsPass time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		hop(ours, i)
		mid := time.Now()
		hop(passThrough, i)
		nsOurs += mid.Sub(start)
		nsPass += time.Since(mid)
		i++
	}
	b.ReportMetric(float64(nsPass)/float64(nsOurs), "throughput-ratio")
	b.ReportMetric(float64(spans*i)/nsOurs.Seconds(), "spans/s")
	b.ReportMetric(float64(nsOurs-nsPass)/float64(spans*i), "added-ns/span")
}

// BenchmarkProcessTraces is the processor's own cost per span, without the
// decoding the throughput comparison includes: the same batches, already
// decoded, through processTraces alone.
func BenchmarkProcessTraces(b *testing.B) {
	const batches, spans = 16, 1000
	rng := rand.New(rand.NewPCG(1, 2))
	clock := newClock()
	var src []ptrace.Traces
	for range batches {
		src = append(src, benchBatch(rng, spans, clock.Now()))
	}
	p, err := newImpactProcessor(processortest.NewNopSettings(processortest.NopType), createDefaultConfig().(*Config), clock.Now)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	fresh := make([]ptrace.Traces, batches)
	refill := func() {
		for i, td := range src {
			fresh[i] = ptrace.NewTraces()
			td.CopyTo(fresh[i])
		}
	}
	refill()
	for _, td := range fresh { // warm the index
		_, _ = p.processTraces(context.Background(), td)
	}
	refill()
	i := 0
	for b.Loop() {
		if i == batches {
			b.StopTimer()
			refill()
			i = 0
			b.StartTimer()
		}
		if _, err := p.processTraces(context.Background(), fresh[i]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(benchutil.Elapsed(b)/spans, "ns/span")
}

// fillIndex records n distinct entries, spread over servers × tools ×
// agents, each with its own session id (as a cardinality flood would).
func fillIndex(st *state, n, servers, tools, agents int, now time.Time) {
	at := unixSec(now.UnixNano())
	cutoff := unixSec(now.Add(-st.cfg.Window).UnixNano())
	digests := [2]string{fmt.Sprintf("%064x", 1), fmt.Sprintf("%064x", 2)}
	var k callKey
	for i := range n {
		k.server = identity{name: fmt.Sprintf("server-%d", i%servers)}
		k.tool = fmt.Sprintf("tool_%02d", (i/servers)%tools)
		k.agent = fmt.Sprintf("agent-%d", (i/servers/tools)%agents)
		k.session = fmt.Sprintf("%08x-4b1e-4c2d-9f3a-%012x", i, i)
		k.digest = digests[i%2]
		st.index.record(&k, entry{first: at - uint32(i%3600), last: at - uint32(i%3600), calls: 1}, cutoff)
	}
}

// BenchmarkIndexBytesPerEntry reports the heap one index entry costs,
// everything included (its share of the maps, the interned session id, the
// bucket slices), with a distinct 36-byte session id per entry.
func BenchmarkIndexBytesPerEntry(b *testing.B) {
	const n = 1_000_000
	cfg := createDefaultConfig().(*Config)
	cfg.MaxIndexEntries = n
	var perEntry float64
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		st := newState(cfg)
		fillIndex(st, n, 20, 50, 10, t0)
		runtime.GC()
		runtime.ReadMemStats(&after)
		if st.index.size != n {
			b.Fatalf("index holds %d entries, want %d", st.index.size, n)
		}
		perEntry = float64(after.HeapAlloc-before.HeapAlloc) / n
		runtime.KeepAlive(st)
	}
	b.ReportMetric(perEntry, "bytes/entry")
}

// BenchmarkImpact1M times the logs path for one drift (impact computation
// and the records) over an index of 1,000,000 entries, in two shapes:
// spread over 20 servers × 50 tools × 10 agents (a drift of one server
// changing 3 tools), and the worst case, every entry on the changed tool.
func BenchmarkImpact1M(b *testing.B) {
	for _, shape := range []struct {
		name                   string
		servers, tools, agents int
	}{
		{"spread", 20, 50, 10},
		{"all-on-changed-tool", 1, 1, 10},
	} {
		b.Run(shape.name, func(b *testing.B) {
			clock := newClock()
			p := filledProcessor(b, clock, shape.servers, shape.tools, shape.agents, 0)
			d := drift{id: "bench", server: "server-0", at: clock.Now(),
				previous: map[string]string{"tool_00": fmt.Sprintf("%064x", 1), "tool_01": "a", "tool_02": "b"},
				current:  map[string]string{"tool_00": fmt.Sprintf("%064x", 3), "tool_01": "c", "tool_02": "d"},
				changes: []change{
					{severity: semconv.DriftSeverityBreaking, subject: "tool", name: "tool_00"},
					{severity: semconv.DriftSeverityWarning, subject: "tool", name: "tool_01"},
					{severity: semconv.DriftSeverityBreaking, subject: "tool", name: "tool_02"},
				}}
			var records int
			for b.Loop() {
				ld := driftLogs(d)
				out, err := p.processLogs(context.Background(), ld)
				if err != nil {
					b.Fatal(err)
				}
				records = out.LogRecordCount()
			}
			b.ReportMetric(benchutil.Elapsed(b)/1e6, "ms/drift")
			b.ReportMetric(float64(records-1), "impact-records")
		})
	}
}

// BenchmarkImpactQuery1M times the control plane's impact query (one tool
// of one server, the processor's whole window) over an index of 1,000,000
// entries of which the tool has 100,000 (2 servers × 5 tools × 10 agents).
// It reports the 50th and 99th percentile of wall time, the 99th of the
// thread's CPU time (what the query costs when other processes keep the
// CPUs busy), and the ratio to the baseline: the scan a drift's impact
// records run for the same tool, without the view around it.
func BenchmarkImpactQuery1M(b *testing.B) {
	clock := newClock()
	p := filledProcessor(b, clock, 2, 5, 10, 0)
	cfg := p.cfg
	if _, err := p.processLogs(context.Background(), driftLogs(drift{id: "bench", server: "server-0", at: clock.Now(),
		previous: map[string]string{"tool_00": fmt.Sprintf("%064x", 1)}, current: map[string]string{"tool_00": fmt.Sprintf("%064x", 2)},
		changes: []change{{severity: semconv.DriftSeverityBreaking, subject: "tool", name: "tool_00"}}})); err != nil {
		b.Fatal(err)
	}
	view := impactView{p}
	q := controlplane.ImpactQuery{Server: "server-0", Tool: "tool_00", Window: cfg.Window}
	var lat benchutil.Latencies
	var calls int64
	lat.Loop(b, func() {
		out, err := view.Impact(context.Background(), q)
		if err != nil {
			b.Fatal(err)
		}
		calls = out.Totals.Calls
	})
	if calls != 100_000 {
		b.Fatalf("the query counted %d calls, want 100000", calls)
	}
	perQuery := benchutil.Elapsed(b)
	// The baseline: the drift-time scan of the same tool, without the view.
	srv := p.state.contracts.servers["server-0"]
	changed := []toolChange{{tool: "tool_00", severity: semconv.DriftSeverityBreaking}}
	scan := benchutil.NsPerOp(b.N, func() {
		p.mu.Lock()
		p.state.impact(srv, changed, map[string]string{"tool_00": fmt.Sprintf("%064x", 1)}, map[string]string{"tool_00": fmt.Sprintf("%064x", 2)}, clock.Now(), cfg.Window, 0, allCalls)
		p.mu.Unlock()
	})
	lat.Report(b)
	b.ReportMetric(perQuery/scan, "x-drift-scan")
}

// filledProcessor is a processor whose index holds 1,000,000 entries over
// servers × tools × agents (fillIndex), with room for as many more, shut
// down with the benchmark.
func filledProcessor(b *testing.B, clock *fakeClock, servers, tools, agents, room int) *impactProcessor {
	cfg := createDefaultConfig().(*Config)
	cfg.MaxIndexEntries = 1_000_000 + room
	p, err := newImpactProcessor(processortest.NewNopSettings(processortest.NopType), cfg, clock.Now)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	fillIndex(p.state, cfg.MaxIndexEntries-room, servers, tools, agents, clock.Now())
	return p
}

// BenchmarkRecovery1M times the impact of one tool with a known change
// (what an impact query runs) over an index of 1,000,000 entries of which
// the tool has 100,000 (2 servers × 5 tools × 10 agents), against the
// path it replaced in the same run, interleaved: the drift-time scan and
// then a second pass over the entries for the sessions' recovery
// (twoPassRecovery). With the change just seen, almost every session
// called before it; with the change 30 minutes ago, half the entries are
// after it. Reported: the ratio to the two-pass path, and to the scan
// without recovery (what a drift's impact records run).
func BenchmarkRecovery1M(b *testing.B) {
	clock := newClock()
	p := filledProcessor(b, clock, 2, 5, 10, 0)
	previous, current := map[string]string{"tool_00": fmt.Sprintf("%064x", 1)}, map[string]string{"tool_00": fmt.Sprintf("%064x", 2)}
	if _, err := p.processLogs(context.Background(), driftLogs(drift{id: "bench", server: "server-0", at: clock.Now(), previous: previous, current: current,
		changes: []change{{severity: semconv.DriftSeverityBreaking, subject: "tool", name: "tool_00"}}})); err != nil {
		b.Fatal(err)
	}
	st := p.state
	srv := st.contracts.servers["server-0"]
	changed := []toolChange{{tool: "tool_00", severity: semconv.DriftSeverityBreaking}}
	now, span := clock.Now(), p.cfg.Window
	servers := st.serverIDs(srv)
	if len(servers) == 0 {
		b.Fatal("server-0 has no index id")
	}
	for _, c := range []struct {
		name string
		ago  time.Duration
	}{{"change-just-seen", 0}, {"change-30m-ago", 30 * time.Minute}} {
		b.Run(c.name, func(b *testing.B) {
			at := unixSec(now.Add(-c.ago).UnixNano())
			before, after := make(bitset, len(st.scratch.before)), make(bitset, len(st.scratch.before))
			var one, two, scan time.Duration
			var got, want recovery
			for b.Loop() {
				start := time.Now()
				imp := st.impact(srv, changed, previous, current, now, span, at, allCalls)
				one += time.Since(start)
				got = recovery{}
				for _, ai := range imp.tools[0].agents {
					got.add(&ai.recovery)
				}

				start = time.Now()
				imp = st.impact(srv, changed, previous, current, now, span, 0, allCalls)
				scan += time.Since(start)
				win := window{cutoff: unixSec(now.Add(-span).UnixNano()), changeAt: at,
					newID: digestID(st.index, current["tool_00"]), seenID: noDigest}
				want = recovery{}
				for _, buckets := range st.bucketsByAgent(servers, srv, "tool_00") {
					r := twoPassRecovery(st.index, buckets, &win, before, after)
					want.add(&r)
				}
				two += time.Since(start)
			}
			if got.idle+got.recovered+got.stillStale+got.failed != want.idle+want.recovered+want.stillStale+want.failed || got.idle != want.idle {
				b.Fatalf("one pass %+v, two passes %+v", got, want)
			}
			b.ReportMetric(float64(one.Nanoseconds())/float64(b.N)/1e6, "ms/query")
			b.ReportMetric(float64(one)/float64(two), "x-two-pass")
			b.ReportMetric(float64(one)/float64(scan), "x-drift-scan")
		})
	}
}

// twoPassRecovery is the second pass the impact query ran for recovery
// before scanGroup gathered it in its own loop: kept as
// BenchmarkRecovery1M's baseline.
func twoPassRecovery(ix *index, buckets []uint32, w *window, before, after bitset) recovery {
	at := w.changeAt
	lo, hi := len(before), -1
	type calls struct{ lastStale, firstNew, lastNew uint32 }
	var since map[uint32]*calls
	for _, bid := range buckets {
		for i := range ix.buckets[bid].entries {
			e := &ix.buckets[bid].entries[i]
			if e.calls == 0 || e.session == 0 || e.last < max(w.cutoff, 1) {
				continue
			}
			word := int(e.session >> 6)
			lo, hi = min(lo, word), max(hi, word)
			if e.first < at {
				before.mark(e.session)
			}
			if e.last < at {
				continue
			}
			after.mark(e.session)
			if since == nil {
				since = map[uint32]*calls{}
			}
			s := since[e.session]
			if s == nil {
				s = &calls{}
				since[e.session] = s
			}
			if e.stale > 0 {
				s.lastStale = max(s.lastStale, e.last)
			}
			if e.digest == w.newID || e.digest == w.seenID {
				if first := max(e.first, at); s.firstNew == 0 || first < s.firstNew {
					s.firstNew = first
				}
				s.lastNew = max(s.lastNew, e.last)
			}
		}
	}
	var r recovery
	for session, s := range since {
		switch {
		case !before.has(session) && s.lastStale == 0:
		case s.lastNew > 0 && s.lastNew >= s.lastStale:
			r.recovered++
			r.took = append(r.took, s.firstNew-at)
		case s.lastStale > 0:
			r.stillStale++
		}
	}
	for i := lo; i <= hi; i++ {
		r.idle += bits.OnesCount64(before[i] &^ after[i])
		before[i], after[i] = 0, 0
	}
	return r
}

// BenchmarkVariantImpact1M times what the control plane's status of a mixed
// server costs the processor: one VariantImpacts query for every variant
// other than the baseline (the route's), over the index of
// BenchmarkImpactQuery1M (the tool has 100,000 of its 1,000,000 entries,
// made with the baseline's digest) and a canary's 10,000 calls of the tool
// made with the variants' digests, for 1 and 3 variants. Interleaved in the
// same run: the path it replaced, per variant one impact per side, each
// walking the tool's entries (perVariantImpact, x-per-variant), and one
// impact query of the tool (one walk of its entries, x-one-scan). The
// ratios are of thread CPU time, which the machine's load leaves out.
func BenchmarkVariantImpact1M(b *testing.B) {
	clock := newClock()
	const canary = 10_000
	p := filledProcessor(b, clock, 2, 5, 10, canary)
	// The server's digest table, as a snapshot or a drift fills it.
	if _, err := p.processLogs(context.Background(), driftLogs(drift{id: "bench", server: "server-0", at: clock.Now(),
		previous: map[string]string{"tool_00": fmt.Sprintf("%064x", 1)}, current: map[string]string{"tool_00": fmt.Sprintf("%064x", 2)},
		changes: []change{{severity: semconv.DriftSeverityBreaking, subject: "tool", name: "tool_00"}}})); err != nil {
		b.Fatal(err)
	}
	variantDigest := func(v int) string { return fmt.Sprintf("%064x", 2+v) }
	st := p.state
	at := unixSec(clock.Now().UnixNano())
	for i := range canary {
		k := callKey{server: identity{name: "server-0"}, tool: "tool_00", agent: fmt.Sprintf("agent-%d", i%10),
			session: fmt.Sprintf("canary-%08x", i), digest: variantDigest(i % 3)}
		st.index.record(&k, entry{first: at - uint32(i%3600), last: at - uint32(i%3600), calls: 1}, 0)
	}
	view := impactView{p}
	breaking := []contract.Change{{Rule: "input.property.added_required", Severity: contract.Breaking, Subject: contract.KindTool, Name: "tool_00"}}
	baseline := map[string]string{"tool_00": fmt.Sprintf("%064x", 1)}
	q := controlplane.ImpactQuery{Server: "server-0", Tool: "tool_00", Window: p.cfg.Window}
	for _, variants := range []int{1, 3} {
		b.Run(fmt.Sprintf("variants=%d", variants), func(b *testing.B) {
			vq := controlplane.VariantQuery{Server: "server-0", Baseline: baseline}
			var asked []variantChanges
			for v := range variants {
				vq.Variants = append(vq.Variants, controlplane.Variant{Changes: breaking, ToolDigests: map[string]string{"tool_00": variantDigest(v)}})
				asked = append(asked, variantChanges{changes: []toolChange{{tool: "tool_00", severity: semconv.DriftSeverityBreaking}},
					current: map[string]string{"tool_00": variantDigest(v)}})
			}
			srv := st.contracts.servers["server-0"]
			var hurt, later int64
			for v, r := range st.variantsImpact(srv, baseline, asked, clock.Now(), p.cfg.Window) {
				if want := perVariantImpact(st, srv, baseline, asked[v], clock.Now(), p.cfg.Window); !reflect.DeepEqual(r, want) {
					b.Fatalf("variant %d: one pass and per variant differ", v)
				}
				hurt, later = hurt+r.hurt.calls, later+r.later.calls
			}
			route := &benchutil.Variant{Name: "route", Timed: true, Call: func() error {
				_, err := view.VariantImpacts(context.Background(), vq)
				return err
			}}
			perVariant := &benchutil.Variant{Name: "per-variant", Call: func() error {
				p.mu.Lock()
				defer p.mu.Unlock()
				for _, vc := range asked {
					perVariantImpact(st, srv, baseline, vc, p.now(), p.cfg.Window)
				}
				return nil
			}}
			query := &benchutil.Variant{Name: "query", Call: func() error {
				_, err := view.Impact(context.Background(), q)
				return err
			}}
			benchutil.Interleave(b, 20, route, perVariant, query)
			b.ReportMetric(route.NsPerCall()/1e6, "ms/route")
			b.ReportMetric(route.CPUNsPerCall()/1e6, "cpu-ms/route")
			b.ReportMetric(route.CPUNsPerCall()/query.CPUNsPerCall(), "x-one-scan")
			b.ReportMetric(route.CPUNsPerCall()/perVariant.CPUNsPerCall(), "x-per-variant")
			b.ReportMetric(float64(hurt), "calls-hurt")
			b.ReportMetric(float64(later), "calls-at-risk")
		})
	}
}
