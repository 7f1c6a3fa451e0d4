//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/backends"
	"github.com/mcpdrift/mcpdrift/dev/quickstart"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestBackends runs the quickstart stack with e2e/testdata/collector-backends.yaml
// against a real Prometheus (scraping the collector, evaluating
// examples/prometheus/alerts.yml) and a real Jaeger v2 (receiving the
// collector's traces), switches the demo server to its breaking v2 and
// changes a second server compatibly, and checks what a user would see:
// the breaking-drift alert fires and nothing fires for the compatible drift;
// Jaeger's query API finds the stale calls (only after the switch, from both
// agents) and who called create_ticket with its old digest.
func TestBackends(t *testing.T) {
	t.Parallel()
	b := newBackendsRun(t)
	ctx := b.ctx

	t.Run("promtool", func(t *testing.T) {
		for _, args := range [][]string{
			{"check", "config", filepath.Join(b.root, "examples/prometheus/prometheus.yml")},
			{"check", "rules", filepath.Join(b.root, "examples/prometheus/alerts.yml")},
			{"test", "rules", filepath.Join(b.root, "examples/prometheus/alerts_test.yml")},
		} {
			out, err := backends.Promtool(ctx, b.promtool, args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !strings.Contains(out, "SUCCESS") {
				t.Fatalf("promtool %s: no SUCCESS in\n%s", strings.Join(args, " "), out)
			}
		}
	})

	began := time.Now()
	const agentService = "mcpdrift-demo-agent" // the demo agent's service.name

	// Before the switch: Prometheus scrapes both targets' counters at 0, the
	// rules have looked at them and nothing is active; Jaeger holds the
	// agents' calls, none stale.
	b.eventually("both targets' drift counters scraped at 0", func() (bool, string) {
		s, err := b.prom.Query(ctx, `mcpdrift_drift_count_total{mcpdrift_drift_severity="breaking"}`)
		return err == nil && len(s) == 2 && s[0].Value == 0 && s[1].Value == 0, fmt.Sprint(s, err)
	})
	b.rulesEvaluatedAfter(time.Now())
	b.checkRuleMetricsExist()
	if alerts := b.alerts(); len(alerts) != 0 {
		t.Errorf("alerts active before any drift: %v", alerts)
	}
	b.eventually("calls of create_ticket from both agents in Jaeger", func() (bool, string) {
		spans, err := b.jaeger.FindSpans(ctx, b.spanQuery(agentService, map[string]string{semconv.GenAIToolName: "create_ticket"}, began))
		return err == nil && len(agentsOf(spans)) == 2, fmt.Sprint(agentsOf(spans), err)
	})
	if stale := b.findSpans(agentService, map[string]string{semconv.ToolStale: "true"}, began); len(stale) != 0 {
		t.Errorf("%d stale calls in Jaeger before the switch", len(stale))
	}

	// The switch: demo-tools goes to v2 (breaking, warning, compatible),
	// compat-tools gains a tool (compatible only).
	switchAt := time.Now()
	if err := b.stack.SwitchServer(); err != nil {
		t.Fatal(err)
	}
	b.addCompatTool()

	// Prometheus pages on the breaking drift ...
	b.eventually("MCPServerBreakingDrift firing for demo-tools", func() (bool, string) {
		a := b.alerts()
		return slices.ContainsFunc(a, func(a backends.Alert) bool {
			return a.Labels["alertname"] == "MCPServerBreakingDrift" && a.Labels["mcpdrift_server_name"] == "demo-tools" && a.State == "firing"
		}), fmt.Sprint(a)
	})
	// ... and stays quiet on the compatible one, once the rules have seen it.
	b.eventually("compat-tools' compatible drift counted in Prometheus", func() (bool, string) {
		s, err := b.prom.Query(ctx, `mcpdrift_drift_count_total{mcpdrift_server_name="compat-tools",mcpdrift_drift_severity="compatible"} == 1`)
		return err == nil && len(s) == 1, fmt.Sprint(s, err)
	})
	b.rulesEvaluatedAfter(time.Now())
	for _, a := range b.alerts() {
		if a.Labels["mcpdrift_server_name"] != "demo-tools" || a.Labels["alertname"] != "MCPServerBreakingDrift" {
			t.Errorf("unexpected alert (want only MCPServerBreakingDrift for demo-tools): %v", a)
		}
		if a.ActiveAt.Before(switchAt) {
			t.Errorf("alert active since %s, before the switch at %s", a.ActiveAt, switchAt)
		}
		if a.Labels["severity"] != "page" {
			t.Errorf("breaking drift alert severity %q, want page", a.Labels["severity"])
		}
	}

	// The drift event gives each changed tool's previous digest.
	drift := b.demoDrift()
	prev, cur := digestMap(drift, semconv.PreviousToolDigests), digestMap(drift, semconv.ToolDigests)
	oldTicket := prev["create_ticket"]
	if oldTicket == "" || oldTicket == cur["create_ticket"] {
		t.Fatalf("create_ticket digests: previous %q, current %q", oldTicket, cur["create_ticket"])
	}

	// Jaeger: stale calls appear, from both agents.
	staleTags := map[string]string{semconv.ToolStale: "true"}
	b.eventually("stale calls from both agents in Jaeger", func() (bool, string) {
		spans, err := b.jaeger.FindSpans(ctx, b.spanQuery(agentService, staleTags, began))
		return err == nil && len(agentsOf(spans)) == 2, fmt.Sprint(agentsOf(spans), err)
	})

	// Stop the agent, let the pipelines drain, then Jaeger's answers must be
	// exactly the spans the collector exported (its file exporter's copy).
	b.stack.StopAgent()
	oldTags := map[string]string{semconv.GenAIToolName: "create_ticket", semconv.ToolDigest: oldTicket}
	var stale, old []backends.Span
	b.eventually("Jaeger's answers equal the collector's exported spans", func() (bool, string) {
		wantStale, wantOld := b.exportedSpans(staleTags), b.exportedSpans(oldTags)
		stale = b.findSpans(agentService, staleTags, began)
		old = b.findSpans(agentService, oldTags, began)
		ok := len(wantStale) > 0 && slices.Equal(wantStale, spanIDs(stale)) && slices.Equal(wantOld, spanIDs(old))
		return ok, fmt.Sprintf("stale: jaeger %d, exported %d; old digest: jaeger %d, exported %d", len(stale), len(wantStale), len(old), len(wantOld))
	})

	// Which calls used a stale definition: calls of the changed tools
	// (create_ticket: breaking, get_weather: warning) with the tool's
	// previous digest, all made after the switch, from both agents.
	for _, s := range stale {
		tool := s.Tags[semconv.GenAIToolName]
		if tool != "create_ticket" && tool != "get_weather" {
			t.Errorf("stale call of %s, which did not change", tool)
		}
		if s.Tags[semconv.ToolDigest] != prev[tool] || s.Tags[semconv.ToolCurrentDigest] != cur[tool] {
			t.Errorf("stale call of %s: digest %s, current %s; want %s, %s", tool, s.Tags[semconv.ToolDigest], s.Tags[semconv.ToolCurrentDigest], prev[tool], cur[tool])
		}
		if s.Start.Before(switchAt) {
			t.Errorf("stale call at %s, before the switch at %s", s.Start, switchAt)
		}
	}
	if got := agentsOf(stale); !slices.Equal(got, []string{"planner", "researcher"}) {
		t.Errorf("stale calls name agents %v, want planner and researcher", got)
	}

	// Who called create_ticket with the old digest: both agents, before the
	// switch (then current) and after it (stale).
	if got := agentsOf(old); !slices.Equal(got, []string{"planner", "researcher"}) {
		t.Errorf("old-digest calls name agents %v, want planner and researcher", got)
	}
	before, after := 0, 0
	for _, s := range old {
		if s.Start.Before(switchAt) {
			before++
		} else {
			after++
		}
	}
	if before == 0 || after == 0 {
		t.Errorf("old-digest calls: %d before the switch, %d after; want both", before, after)
	}
	t.Logf("Prometheus paged on the breaking drift; Jaeger: %d stale calls, %d calls of create_ticket with digest %.12s… (%d before the switch); %s",
		len(stale), len(old), oldTicket, before, time.Since(began).Round(time.Second))
}

// backendsRun is one run of the stack with both backends.
type backendsRun struct {
	t        *testing.T
	ctx      context.Context
	root     string
	dir      string
	promtool string
	prom     *backends.Prometheus
	jaeger   *backends.Jaeger
	stack    *quickstart.Stack
	compat   *mcp.Server
}

// newBackendsRun starts Jaeger, the compat-tools server, the quickstart
// stack and Prometheus; cleanup stops them all. Without prometheus (and no
// way to install it) the test skips, except in CI where it fails.
func newBackendsRun(t *testing.T) *backendsRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	b := &backendsRun{t: t, ctx: ctx, root: root, dir: t.TempDir()}

	prometheus, promtool, err := backends.EnsurePrometheus(ctx, root)
	if err != nil {
		testservers.SkipLoudly(t, fmt.Sprintf("the Prometheus/Jaeger end-to-end test did NOT run: %v", err))
	}
	b.promtool = promtool
	collector := b.binary("_build/otelcol-mcpdrift/otelcol-mcpdrift")
	server := b.binary("bin/quickstart-server")
	agent := b.binary("bin/demo-agent")
	jaegerBin, err := backends.EnsureJaeger(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dumpLogsOnFailure(t, b.dir) })

	b.jaeger, err = backends.StartJaeger(ctx, backends.JaegerOptions{Binary: jaegerBin, Config: filepath.Join(root, "examples/jaeger/config.yaml"), Dir: b.dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.jaeger.Stop)

	compatPort := b.startCompatServer()
	b.stack, err = quickstart.Start(ctx, quickstart.Options{
		Dir:       b.dir,
		Collector: collector,
		Config:    filepath.Join(root, "e2e/testdata/collector-backends.yaml"),
		Server:    server,
		Agent:     agent,
		Agents:    []string{"planner", "researcher"},
		Sessions:  2,
		Rate:      2,
		// The agents keep their v1 plan after the switch, as agents that
		// cached the contract do: their calls stay stale.
		ReplanAfter: -1,
		ExtraEnv: []string{
			fmt.Sprintf("E2E_JAEGER_OTLP_GRPC_PORT=%d", b.jaeger.Ports.OTLPGRPC),
			fmt.Sprintf("E2E_COMPAT_SERVER_PORT=%d", compatPort),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.stack.Stop)

	b.prom, err = backends.StartPrometheus(ctx, backends.PrometheusOptions{
		Binary:    prometheus,
		Dir:       filepath.Join(b.dir, "prometheus"),
		Targets:   []string{fmt.Sprintf("127.0.0.1:%d", b.stack.Ports.Prometheus)},
		RuleFiles: []string{filepath.Join(root, "examples/prometheus/alerts.yml")},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.prom.Stop)
	return b
}

func (b *backendsRun) binary(rel string) string {
	b.t.Helper()
	return built(b.t, rel)
}

// startCompatServer serves an MCP server (Go SDK) on a loopback port that
// the collector probes as compat-tools; addCompatTool changes it compatibly.
func (b *backendsRun) startCompatServer() int {
	b.compat = mcp.NewServer(&mcp.Implementation{Name: "compat-tools", Version: "1.0.0"}, nil)
	b.compat.AddTool(&mcp.Tool{
		Name:        "lookup",
		Description: "Look a word up in the glossary.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`),
	}, textResult("a definition"))
	return serveMCP(b.t, b.compat)
}

// addCompatTool adds a tool: a compatible change, nothing else.
func (b *backendsRun) addCompatTool() {
	b.compat.AddTool(&mcp.Tool{
		Name:        "synonyms",
		Description: "List synonyms of a word.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`),
	}, textResult("none"))
}

func textResult(text string) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	}
}

// eventually polls cond until it holds; it fails the test after a minute
// with cond's last description.
func (b *backendsRun) eventually(what string, cond func() (bool, string)) {
	b.t.Helper()
	waitUntil(b.t, b.ctx, what, time.Minute, cond)
}

// rulesEvaluatedAfter waits until Prometheus has evaluated every rule
// group after t: the alerts then reflect what it held at t.
func (b *backendsRun) rulesEvaluatedAfter(t time.Time) {
	b.t.Helper()
	b.eventually("a rule evaluation after "+t.Format(time.RFC3339Nano), func() (bool, string) {
		at, err := b.prom.RulesEvaluated(b.ctx)
		return err == nil && at.After(t), fmt.Sprint(at, err)
	})
}

func (b *backendsRun) alerts() []backends.Alert {
	b.t.Helper()
	a, err := b.prom.Alerts(b.ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	return a
}

// checkRuleMetricsExist checks that every mcpdrift metric the alert rules
// read is a series Prometheus scraped from the collector: a renamed metric
// would silently disable a rule.
func (b *backendsRun) checkRuleMetricsExist() {
	b.t.Helper()
	rules, err := os.ReadFile(filepath.Join(b.root, "examples/prometheus/alerts.yml"))
	if err != nil {
		b.t.Fatal(err)
	}
	var used []string
	for _, line := range strings.Split(string(rules), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		used = append(used, regexp.MustCompile(`\bmcpdrift_[a-z_]+_(?:total|ratio|seconds)\b`).FindAllString(line, -1)...)
	}
	slices.Sort(used)
	used = slices.Compact(used)
	if len(used) < 3 {
		b.t.Fatalf("found only %v in alerts.yml", used)
	}
	names, err := b.prom.MetricNames(b.ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	for _, n := range used {
		if !slices.Contains(names, n) {
			b.t.Errorf("alerts.yml reads %s, which Prometheus did not scrape (it has %v)", n, names)
		}
	}
}

// demoDrift returns demo-tools' drift event from the collector's file output.
func (b *backendsRun) demoDrift() quickstart.Event {
	b.t.Helper()
	var drift quickstart.Event
	b.eventually("demo-tools' drift event in logs.jsonl", func() (bool, string) {
		out, err := quickstart.ReadOutputs(b.dir)
		if err != nil {
			return false, err.Error()
		}
		var names []string
		for _, d := range out.Events(semconv.EventDrift) {
			names = append(names, d.Attr(semconv.ServerName))
			if d.Attr(semconv.ServerName) == "demo-tools" {
				drift = d
				return true, ""
			}
		}
		return false, fmt.Sprint("drifts of ", names)
	})
	return drift
}

func digestMap(e quickstart.Event, key string) map[string]string {
	v, _ := e.Record.Attributes().Get(key)
	out := map[string]string{}
	for k, d := range v.Map().All() {
		out[k] = d.Str()
	}
	return out
}

func (b *backendsRun) spanQuery(service string, tags map[string]string, since time.Time) backends.SpanQuery {
	return backends.SpanQuery{Service: service, Tags: tags, Start: since.Add(-time.Minute), End: time.Now().Add(time.Minute)}
}

func (b *backendsRun) findSpans(service string, tags map[string]string, since time.Time) []backends.Span {
	b.t.Helper()
	spans, err := b.jaeger.FindSpans(b.ctx, b.spanQuery(service, tags, since))
	if err != nil {
		b.t.Fatal(err)
	}
	return spans
}

// exportedSpans returns the sorted IDs of the tool-call spans the collector
// wrote to its file exporter that carry every tag.
func (b *backendsRun) exportedSpans(tags map[string]string) []string {
	b.t.Helper()
	out, err := quickstart.ReadOutputs(b.dir)
	if err != nil {
		b.t.Fatal(err)
	}
	var ids []string
	for _, s := range out.ToolCalls() {
		match := true
		for k, want := range tags {
			if s.Attr(k) != want {
				match = false
			}
		}
		if match {
			ids = append(ids, s.Span.SpanID().String())
		}
	}
	sort.Strings(ids)
	return ids
}

func spanIDs(spans []backends.Span) []string {
	ids := make([]string, len(spans))
	for i, s := range spans {
		ids[i] = s.SpanID
	}
	sort.Strings(ids)
	return ids
}

// agentsOf returns the sorted agent names (gen_ai.agent.name) of spans.
func agentsOf(spans []backends.Span) []string {
	var names []string
	for _, s := range spans {
		if n := s.Tags[semconv.GenAIAgentName]; n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}
