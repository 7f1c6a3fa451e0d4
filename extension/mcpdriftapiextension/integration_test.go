package mcpdriftapiextension

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/mcpdrift/mcpdrift/dev/storagetest"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/processor/mcpimpactprocessor"
	"github.com/mcpdrift/mcpdrift/receiver/mcpdriftreceiver"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// The integration tests run the API on the real receiver and processor,
// wired as in a Collector (receiver logs → processor → sink; spans →
// processor), against a real MCP server (the Go SDK over Streamable HTTP)
// whose contract the test changes, with a real file_storage, and restart
// the lot on the same storage.

const (
	secretQuery  = "query-key-5566778899"
	secretHeader = "header-token-0011223344"
)

// drifting is an MCP server that serves v1 until switched to v2 (create_ticket
// gains a required parameter: breaking).
type drifting struct {
	v2      atomic.Bool
	v1, v2s *mcp.Server
	url     string
}

func newDrifting(t *testing.T) *drifting {
	ticket := func(required ...string) *mcp.Tool {
		schema, _ := json.Marshal(map[string]any{"type": "object", "required": required, "properties": map[string]any{
			"title": map[string]any{"type": "string"}, "project": map[string]any{"type": "string"}}})
		return &mcp.Tool{Name: "create_ticket", Description: "File a support ticket.", InputSchema: json.RawMessage(schema)}
	}
	search := &mcp.Tool{Name: "search_docs", Description: "Search the docs.", InputSchema: json.RawMessage(`{"type":"object"}`)}
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	d := &drifting{}
	d.v1 = mcp.NewServer(&mcp.Implementation{Name: "demo-tools", Version: "1.0.0"}, nil)
	d.v1.AddTool(ticket("title"), noop)
	d.v1.AddTool(search, noop)
	d.v2s = mcp.NewServer(&mcp.Implementation{Name: "demo-tools", Version: "2.0.0"}, nil)
	d.v2s.AddTool(ticket("title", "project"), noop)
	d.v2s.AddTool(search, noop)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		if d.v2.Load() {
			return d.v2s
		}
		return d.v1
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	d.url = ts.URL + "/mcp"
	return d
}

// collector is the extension, the receiver and the processor on one host.
type collector struct {
	api     *api
	logs    *consumertest.LogsSink
	traces  processor.Traces
	stopAll func()
}

func startCollector(t *testing.T, dir, serverURL string, baseline string) *collector {
	t.Helper()
	return startCollectorWith(t, dir, serverURL, baseline, nil)
}

// startCollectorWith starts the collector with the receiver's and the
// processor's configuration changed by tweak.
func startCollectorWith(t testing.TB, dir, serverURL string, baseline string, tweak func(*mcpdriftreceiver.Config, *mcpimpactprocessor.Config)) *collector {
	t.Helper()
	storageID, apiID := component.MustNewID("file_storage"), component.MustNewID("mcpdrift_api")
	exts := map[component.ID]component.Component{storageID: storagetest.FileStorage(t, dir, nil)}
	a := startAPI(t, nil, exts)
	exts[apiID] = a.ext
	host := storagetest.NewHost(exts)
	ctx := context.Background()

	pf := mcpimpactprocessor.NewFactory()
	pcfg := pf.CreateDefaultConfig().(*mcpimpactprocessor.Config)
	pcfg.Storage, pcfg.ControlPlane = &storageID, &apiID
	pset := processortest.NewNopSettings(pf.Type())
	sink := new(consumertest.LogsSink)
	plogs, err := pf.CreateLogs(ctx, pset, pcfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	ptraces, err := pf.CreateTraces(ctx, pset, pcfg, new(consumertest.TracesSink))
	if err != nil {
		t.Fatal(err)
	}

	rf := mcpdriftreceiver.NewFactory()
	rcfg := rf.CreateDefaultConfig().(*mcpdriftreceiver.Config)
	rcfg.CollectionInterval, rcfg.ConfirmAfter, rcfg.ConfirmSamples, rcfg.Settle = 100*time.Millisecond, 1, 0, 0
	rcfg.Baseline, rcfg.Storage, rcfg.ControlPlane = baseline, &storageID, &apiID
	target := mcpdriftreceiver.NewTargetConfig("demo-tools")
	target.Endpoint = serverURL + "?api_key=" + secretQuery
	target.Headers = configopaque.MapList{{Name: "Authorization", Value: "Bearer " + secretHeader}}
	rcfg.Targets = []mcpdriftreceiver.TargetConfig{target}
	if tweak != nil {
		tweak(rcfg, pcfg)
	}
	rset := receivertest.NewNopSettings(rf.Type())
	rset.ID = component.MustNewID("mcpdrift")
	rcv, err := rf.CreateLogs(ctx, rset, rcfg, plogs)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []component.Component{ptraces, plogs, rcv} {
		if err := c.Start(ctx, host); err != nil {
			t.Fatal(err)
		}
	}
	c := &collector{api: a, logs: sink, traces: ptraces}
	stopped := false
	c.stopAll = func() {
		if stopped {
			return
		}
		stopped = true
		for _, comp := range []component.Component{rcv, plogs, ptraces, a.ext, exts[storageID]} {
			if err := comp.Shutdown(ctx); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(c.stopAll)
	return c
}

// until polls the API until cond holds on the decoded response.
func until[T any](t *testing.T, a *api, route, path, what string, cond func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var v T
		decode(t, a.get(route, path, http.StatusOK), &v)
		if cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// call sends tool-call spans for create_ticket as the interceptor records
// them, made with digest, the last a second ago.
func (c *collector) call(t testing.TB, agent, session, digest string, n int, took time.Duration) {
	t.Helper()
	c.callAt(t, agent, session, digest, n, time.Now().Add(-time.Second), took)
}

// callAt sends n such spans, one a second back from last.
func (c *collector) callAt(t testing.TB, agent, session, digest string, n int, last time.Time, took time.Duration) {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(semconv.ServiceName, agent)
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		s := spans.AppendEmpty()
		s.SetName("tools/call create_ticket")
		s.SetKind(ptrace.SpanKindClient)
		start := last.Add(-time.Duration(i) * time.Second)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(took)))
		a := s.Attributes()
		a.PutStr(semconv.MCPMethodName, semconv.MCPMethodToolsCall)
		a.PutStr(semconv.GenAIToolName, "create_ticket")
		a.PutStr(semconv.ServerName, "demo-tools")
		a.PutStr(semconv.GenAIConversationID, session)
		a.PutStr(semconv.ToolDigest, digest)
	}
	if err := c.traces.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
}

func toolDigest(t *testing.T, a *api, tool string) string {
	t.Helper()
	var d apiwire.ServerDetail
	decode(t, a.get("/api/v1/servers/{name}", "/api/v1/servers/demo-tools", http.StatusOK), &d)
	var snap struct {
		Tools []struct{ Key, Digest string } `json:"tools"`
	}
	if err := json.Unmarshal(d.Snapshot, &snap); err != nil {
		t.Fatal(err)
	}
	for _, d := range snap.Tools {
		if d.Key == tool {
			return d.Digest
		}
	}
	t.Fatalf("no %s in the served contract", tool)
	return ""
}

func acceptedEvents(sink *consumertest.LogsSink) []plog.LogRecord {
	var out []plog.LogRecord
	for _, l := range sink.AllLogs() {
		rls := l.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			sls := rls.At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				recs := sls.At(j).LogRecords()
				for k := 0; k < recs.Len(); k++ {
					if recs.At(k).EventName() == semconv.EventDriftAccepted {
						out = append(out, recs.At(k))
					}
				}
			}
		}
	}
	return out
}

// TestIntegration: status, history, impact and accept from the real
// components, through the API, and the history and the index restored
// after a restart.
func TestIntegration(t *testing.T) {
	for _, baseline := range []string{mcpdriftreceiver.BaselinePinned, mcpdriftreceiver.BaselineAdvance} {
		t.Run(baseline, func(t *testing.T) { testIntegration(t, baseline) })
	}
}

func testIntegration(t *testing.T, baseline string) {
	srv := newDrifting(t)
	dir := t.TempDir()
	c := startCollector(t, dir, srv.url, baseline)
	a := c.api

	var info apiwire.Info
	decode(t, a.get("/api/v1/info", "/api/v1/info", http.StatusOK), &info)
	if !info.Drift.Available || !info.Impact.Available || info.Drift.Components[0] != "mcpdrift" || info.Impact.WindowHours != 24 {
		t.Fatalf("info %+v", info)
	}
	until(t, a, "/api/v1/servers", "/api/v1/servers", "the first probe", func(l apiwire.ServerList) bool {
		return l.Summary.Up == 1
	})
	v1 := toolDigest(t, a, "create_ticket")
	c.call(t, "planner", "p-1", v1, 5, 12*time.Millisecond)
	c.call(t, "planner", "p-2", v1, 3, 12*time.Millisecond)

	srv.v2.Store(true)
	st := until(t, a, "/api/v1/servers/{name}", "/api/v1/servers/demo-tools", "the drift", func(d apiwire.ServerDetail) bool {
		return d.Status == apiwire.StatusDrifted
	})
	if st.OpenDrift == nil || st.OpenDrift.Severity != "breaking" {
		t.Fatalf("status %+v", st.ServerStatus)
	}
	v2 := toolDigest(t, a, "create_ticket")

	var page apiwire.DriftPage
	decode(t, a.get("/api/v1/servers/{name}/drifts", "/api/v1/servers/demo-tools/drifts?limit=10", http.StatusOK), &page)
	if len(page.Drifts) != 1 || page.Drifts[0].State != apiwire.DriftOpen || page.Drifts[0].Changes[0].Name != "create_ticket" {
		t.Fatalf("history %+v", page)
	}
	// The researcher's session starts after the change, on v2. Its calls
	// are stamped after the drift's date (its first observation of v2),
	// not a fixed time back from now: how long the drift took to confirm
	// varies with the machine's load, and calls straddling the change would
	// make the session one that recovered.
	c.callAt(t, "researcher", "r-1", v2, 2, later(time.Now(), page.Drifts[0].At.Add(2*time.Second)), 30*time.Millisecond)
	var detail apiwire.DriftDetail
	decode(t, a.get("/api/v1/drifts/{id}", "/api/v1/drifts/"+page.Drifts[0].ID, http.StatusOK), &detail)
	// create_ticket (breaking) first, then the server (serverInfo.version: info).
	if len(detail.Definitions) != 2 || detail.Definitions[0].BeforeDigest != v1 || detail.Definitions[0].AfterDigest != v2 ||
		!strings.Contains(string(detail.Definitions[0].After), `"project"`) || detail.Definitions[1].Subject != "server" ||
		!strings.Contains(string(detail.Definitions[1].After), `"2.0.0"`) {
		t.Errorf("definitions %d: %s / %s", len(detail.Definitions), detail.Definitions[0].After, detail.Definitions[1].After)
	}

	var imp apiwire.Impact
	decode(t, a.get("/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=create_ticket&hours=1", http.StatusOK), &imp)
	// p-1 and p-2 have not called since the change; r-1 started after it
	// with the current definition, so it needed no recovery.
	if imp.Totals.Recovery == nil || *imp.Totals.Recovery != (apiwire.Recovery{Idle: 2}) {
		t.Errorf("recovery %+v", imp.Totals.Recovery)
	}
	imp.Totals.Recovery = nil
	if imp.Totals != (apiwire.ImpactTotals{Agents: 2, Sessions: 3, Calls: 10, Before: 8}) || imp.Change == nil || imp.Change.DriftID != page.Drifts[0].DriftID ||
		*imp.PreviousDigest != v1 || *imp.CurrentDigest != v2 || len(imp.Agents) != 2 {
		t.Fatalf("impact %+v", imp)
	}
	// One change, one time: the impact's (the processor's, from the drift
	// event) is the history's changed_at (the receiver's), confirmed later.
	if d := page.Drifts[0]; !imp.Change.At.Equal(d.ChangedAt) || d.ChangedAt.After(d.At) {
		t.Errorf("the impact says the tool changed at %v, the history at %v (confirmed at %v)", imp.Change.At, d.ChangedAt, d.At)
	}
	if p := imp.Agents[0]; *p.Agent != "planner" || p.Risk != "high" || p.Digests != (apiwire.DigestUsed{Before: 8}) || *p.AvgLatencyMS != 12 {
		t.Errorf("planner %+v", p)
	}
	if r := imp.Agents[1]; *r.Agent != "researcher" || r.Digests != (apiwire.DigestUsed{New: 2}) || *r.AvgLatencyMS != 30 {
		t.Errorf("researcher %+v", r)
	}
	a.get("/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=nope", http.StatusNotFound)

	// Calls by definition, for the server's authors.
	var usage apiwire.DigestUsage
	decode(t, a.get("/api/v1/servers/{name}/digests", "/api/v1/servers/demo-tools/digests?tool=create_ticket&days=2", http.StatusOK), &usage)
	if len(usage.Digests) != 2 || *usage.Digests[0].Digest != v1 || usage.Digests[0].Calls != 8 || usage.Digests[0].Current ||
		*usage.Digests[1].Digest != v2 || usage.Digests[1].Calls != 2 || !usage.Digests[1].Current || *usage.CurrentDigest != v2 {
		t.Errorf("digests %+v", usage)
	}

	// Nothing secret anywhere in what the API serves.
	for _, p := range []string{"/api/v1/servers", "/api/v1/servers/demo-tools", "/api/v1/servers/demo-tools/drifts", "/api/v1/drifts/" + page.Drifts[0].ID} {
		body := string(a.do(http.MethodGet, p, "").body)
		if strings.Contains(body, secretQuery) || strings.Contains(body, secretHeader) || strings.Contains(body, "api_key") {
			t.Errorf("%s leaks a credential: %s", p, body)
		}
	}

	var res apiwire.AcceptResult
	decode(t, a.post("/api/v1/servers/{name}/accept", "/api/v1/servers/demo-tools/accept", `{"drift":"`+page.Drifts[0].ID+`","by":"alice","comment":"project is required now"}`,
		http.StatusOK, "Content-Type", "application/json"), &res)
	if res.Status != apiwire.StatusUp || res.BaselineDigest != st.Contract.Digest || len(res.Accepted) != 1 || res.Accepted[0].Accepted.By != "alice" {
		t.Errorf("accept %+v", res)
	}
	if ev := acceptedEvents(c.logs); len(ev) != 1 {
		t.Errorf("%d drift_accepted events passed the processor", len(ev))
	}
	a.post("/api/v1/servers/{name}/accept", "/api/v1/servers/demo-tools/accept", "{}", http.StatusConflict, "Content-Type", "application/json")
	c.stopAll()

	// Restart on the same storage: the history, the accept and the index
	// are back.
	c = startCollector(t, dir, srv.url, baseline)
	a = c.api
	decode(t, a.get("/api/v1/servers/{name}/drifts", "/api/v1/servers/demo-tools/drifts", http.StatusOK), &page)
	if len(page.Drifts) != 1 || page.Drifts[0].State != apiwire.DriftAccepted || page.Drifts[0].Accepted.Comment == nil || *page.Drifts[0].Accepted.Comment != "project is required now" {
		t.Fatalf("restored history %+v", page)
	}
	decode(t, a.get("/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=create_ticket", http.StatusOK), &imp)
	if imp.Totals.Calls != 10 || imp.Change == nil {
		t.Errorf("restored index: %+v", imp.Totals)
	}
	until(t, a, "/api/v1/servers", "/api/v1/servers", "a probe after the restart", func(l apiwire.ServerList) bool {
		return l.Summary.Up == 1 && l.Servers[0].Probe != nil && l.Servers[0].Contract.BaselineDigest == res.BaselineDigest
	})
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
