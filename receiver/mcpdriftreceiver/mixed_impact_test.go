package mcpdriftreceiver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/interceptor/gosdk"
	"github.com/mcpdrift/mcpdrift/processor/mcpimpactprocessor"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestE2EMixedImpactOfAGoAgent: issue 25's "the impact names the agents
// whose sessions hit the variant", with every part real: go-sdk servers of
// contracts A and B (B requires filters) behind testBalancer with session
// affinity, the receiver probing them, a Go agent on the official go-sdk
// through the interceptor with one session pinned to each backend (agent
// planner on A, writer on B), its spans exported over OTLP/HTTP into
// mcpimpact, and the receiver's records flowing through mcpimpact. The
// mixed state's open record must carry the variant's impact: writer and its
// session as served the variant (hurt now), planner and its session as
// served the baseline (at risk on convergence), each with its risk. The
// control plane, which both register with, must say the same: its answer
// for the server names writer, pinned to the variant, and its session.
//
// It is here, not in e2e/, because testBalancer and the manual probe tick
// live in this package and no collector build is needed: about 0.2 s.
func TestE2EMixedImpactOfAGoAgent(t *testing.T) {
	ctx := context.Background()
	a, b := sdkBackends(t, true)
	lb, url := newTestBalancer(t, a, b, perSession, true, 0)

	// The control plane, which the receiver and mcpimpact both name.
	apiID := component.MustNewID("mcpdrift_api")
	af := mcpdriftapiextension.NewFactory()
	acfg := af.CreateDefaultConfig().(*mcpdriftapiextension.Config)
	acfg.NetAddr.Endpoint = fmt.Sprintf("127.0.0.1:%d", testservers.FreePort(t))
	host := hostWith(t, apiID, af, acfg)

	// mcpimpact, both pipelines of one instance, as the collector builds it.
	f := mcpimpactprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*mcpimpactprocessor.Config)
	cfg.ControlPlane = &apiID
	set := processortest.NewNopSettings(f.Type())
	out := new(consumertest.LogsSink)
	impactLogs, err := f.CreateLogs(ctx, set, cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	impactTraces, err := f.CreateTraces(ctx, set, cfg, new(consumertest.TracesSink))
	if err != nil {
		t.Fatal(err)
	}
	if err := impactLogs.Start(ctx, host); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = impactLogs.Shutdown(context.Background()) })
	if err := impactTraces.Start(ctx, host); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = impactTraces.Shutdown(context.Background()) })

	rcfg := e2eConfig(httpTarget("svc", url))
	rcfg.ControlPlane = &apiID
	r, _, _ := startManualOn(t, rcfg, newProber(rcfg), host)
	r.setLogs(impactLogs)
	tgt := r.targets[0]
	// probe takes the target as the scheduler does: mcpimpact asks for
	// prompt probes (ProbeNow) that run beside the test's, and the receiver
	// never probes one target twice at once (with -race, the two probes
	// raced on the target's handshake hint).
	probe := func() {
		waitFor(t, "the target's prompt probe to end", func() bool { return tgt.running.CompareAndSwap(false, true) })
		r.probeAndAnswer(ctx, tgt)
	}
	for range 3 { // the baseline: A only
		probe()
	}
	if n := len(eventsNamed(out, semconv.EventSnapshot)); n != 1 {
		t.Fatalf("%d snapshots of the baseline, want 1", n)
	}

	// The agent: one go-sdk client through the interceptor, its spans
	// exported as each ends.
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(otlpInto(t, impactTraces)+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	inst := gosdk.New(interceptor.WithTracerProvider(tp), interceptor.WithServerName("svc"))
	client := mcp.NewClient(&mcp.Implementation{Name: "go-agent", Version: "1.0.0"}, nil)
	inst.Instrument(client)
	// session opens a session for agent on the backend share picks, lists the
	// tools (the interceptor learns their digests from this listing) and
	// calls search, and says whether the listing was B's.
	session := func(share float64, agent, conv string) (onB bool) {
		lb.setShare(share) // the session's initialize picks its backend; affinity keeps it
		cs, err := client.Connect(ctx, inst.Transport(&mcp.StreamableClientTransport{Endpoint: url}), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		actx := interceptor.ContextWithConversationID(interceptor.ContextWithAgent(ctx, interceptor.Agent{Name: agent}), conv)
		list, err := cs.ListTools(actx, nil)
		if err != nil || len(list.Tools) != 1 {
			t.Fatalf("%s lists %v (%v), want search", agent, list, err)
		}
		args := map[string]any{"query": "otel"}
		schema, _ := list.Tools[0].InputSchema.(map[string]any)
		required, _ := schema["required"].([]any)
		onB = slices.Contains(required, any("filters"))
		if onB {
			args["filters"] = map[string]any{}
		}
		if res, err := cs.CallTool(actx, &mcp.CallToolParams{Name: "search", Arguments: args}); err != nil || res.IsError {
			t.Fatalf("%s's call failed: %v", agent, err)
		}
		return onB
	}
	if session(0, "planner", "conv-planner") {
		t.Fatal("planner's session listed B's search, want A's: share 0")
	}
	if !session(1, "writer", "conv-writer") {
		t.Fatal("writer's session listed A's search, want B's: share 1")
	}

	// The canary: half of the probes' sessions reach B, until the mixed
	// state opens.
	lb.setShare(0.5)
	var open plog.LogRecord
	probes := 0
	for ; open == (plog.LogRecord{}); probes++ {
		if probes == 40 {
			t.Fatalf("no mixed state opened in %d probes of a 50/50 fleet", probes)
		}
		probe()
		for _, m := range eventsNamed(out, semconv.EventMixedContract) {
			if attrStr(m, semconv.MixedState) == "open" {
				open = m
			}
		}
	}

	// The variant's totals, on the open record: writer's session reached it.
	vs, _ := open.Attributes().Get(semconv.MixedVariants)
	var variant string
	for _, v := range vs.Slice().All() {
		m := v.Map()
		if base, _ := m.Get(semconv.MixedVariantBaseline); base.Bool() {
			if _, ok := m.Get(semconv.ImpactAgents); ok {
				t.Error("the baseline carries an impact of its own")
			}
			continue
		}
		d, _ := m.Get(semconv.MixedVariantDigest)
		variant = d.Str()
		agents, _ := m.Get(semconv.ImpactAgents)
		sessions, _ := m.Get(semconv.ImpactSessions)
		calls, _ := m.Get(semconv.ImpactCalls)
		if agents.Int() != 1 || sessions.Int() != 1 || calls.Int() != 1 {
			t.Errorf("variant impact: %d agents, %d sessions, %d calls; want 1, 1, 1", agents.Int(), sessions.Int(), calls.Int())
		}
	}

	// One impact record per (search, agent), naming the variant.
	type seen struct {
		before, new, errors int64
		sessions            []string
		risk, status        string
	}
	byAgent := map[string]seen{}
	for _, rec := range eventsNamed(out, semconv.EventImpact) {
		attrs := rec.Attributes()
		if attrStr(rec, semconv.ContractDigest) != variant || attrStr(rec, semconv.GenAIToolName) != "search" {
			t.Errorf("impact record for %s on %s, want search on the variant %s", attrStr(rec, semconv.GenAIToolName), short(attrStr(rec, semconv.ContractDigest)), short(variant))
		}
		if _, ok := attrs.Get(semconv.DriftID); ok {
			t.Error("a variant's impact record carries a drift id: the fleet has not converged")
		}
		used, _ := attrs.Get(semconv.ImpactDigestsUsed)
		before, _ := used.Map().Get(semconv.ImpactDigestBefore)
		newer, _ := used.Map().Get(semconv.ImpactDigestNew)
		errs, _ := attrs.Get(semconv.ImpactErrors)
		sample, _ := attrs.Get(semconv.ImpactSessionSample)
		var ids []string
		for _, s := range sample.Slice().All() {
			ids = append(ids, s.Str())
		}
		byAgent[attrStr(rec, semconv.GenAIAgentName)] = seen{before.Int(), newer.Int(), errs.Int(), ids, attrStr(rec, semconv.ImpactRisk), attrStr(rec, semconv.ImpactStatus)}
	}
	t.Logf("mixed state open after %d canary probes; impact by agent %+v", probes, byAgent)
	if len(byAgent) != 2 {
		t.Fatalf("impact records for agents %v, want planner and writer", byAgent)
	}
	// writer's session was pinned to B: the variant served it, and its
	// breaking change meets writer's calls now: high.
	if w := byAgent["writer"]; w.new != 1 || w.before != 0 || w.errors != 0 || !slices.Equal(w.sessions, []string{"conv-writer"}) ||
		w.risk != semconv.ImpactRiskHigh || w.status != semconv.ImpactStatusHurtNow {
		t.Errorf("writer: %+v, want 1 call the variant served, session conv-writer, hurt now, risk high", w)
	}
	// planner's session was pinned to A: the baseline served it, not the
	// variant. Its calls are made with the definition B breaks, so they
	// will fail once the fleet converges on B, not before: at risk on
	// convergence, medium (docs/mcpimpact.md, Risk).
	if p := byAgent["planner"]; p.new != 0 || p.before != 1 || p.errors != 0 || !slices.Equal(p.sessions, []string{"conv-planner"}) ||
		p.risk != semconv.ImpactRiskMedium || p.status != semconv.ImpactStatusAtRiskOnConvergence {
		t.Errorf("planner: %+v, want 1 call the baseline served, none failed, session conv-planner, at risk on convergence, risk medium", p)
	}

	// The control plane's answer for the server, over HTTP.
	resp, err := http.Get("http://" + acfg.NetAddr.Endpoint + "/api/v1/servers/svc")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var detail apiwire.ServerDetail
	if err := json.NewDecoder(resp.Body).Decode(&detail); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/servers/svc: %d, %v", resp.StatusCode, err)
	}
	var got []string
	for _, v := range detail.Variants {
		if v.Baseline || v.Impact == nil {
			continue
		}
		for _, tool := range v.Impact.Tools {
			for _, a := range tool.Agents {
				got = append(got, fmt.Sprintf("%s %s %s %s %s", short(v.Digest), tool.Tool, *a.Agent, a.Status, strings.Join(a.SessionIDs, ",")))
			}
		}
	}
	want := []string{short(variant) + " search writer hurt_now conv-writer", short(variant) + " search planner at_risk_on_convergence conv-planner"}
	if !detail.Mixed || !slices.Equal(got, want) {
		t.Errorf("the API's mixed view names %q, want %q", got, want)
	}
}

// otlpInto serves OTLP/HTTP traces (protobuf) into next and returns the
// server's base URL.
func otlpInto(t *testing.T, next consumer.Traces) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		req := ptraceotlp.NewExportRequest()
		if err == nil {
			err = req.UnmarshalProto(body)
		}
		if err == nil {
			err = next.ConsumeTraces(r.Context(), req.Traces())
		}
		if err != nil {
			http.Error(w, strings.TrimSpace(err.Error()), http.StatusBadRequest)
			return
		}
		raw, _ := ptraceotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(raw)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
