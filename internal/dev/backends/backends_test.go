package backends

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpdrift/mcpdrift/internal/dev/testkit/testservers"
)

// A real Prometheus scrapes a target, evaluates a rule file, and answers
// Query, Alerts, RulesEvaluated and MetricNames.
func TestPrometheus(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		testservers.SkipLoudly(t, "prometheus is not installed (scripts/backends/install.sh), so the Prometheus helper was NOT tested")
	}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# TYPE demo_drifts_total counter\ndemo_drifts_total{server=\"a\"} 2\n")
	}))
	defer target.Close()
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(rules, []byte(`groups:
  - name: demo
    rules:
      - alert: Drifted
        expr: demo_drifts_total > 1
        labels: { severity: page }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := StartPrometheus(ctx, PrometheusOptions{Binary: bin, Dir: dir, Targets: []string{target.Listener.Addr().String()}, RuleFiles: []string{rules}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()

	waitUntil(t, "the alert fires", func() bool {
		a, err := p.Alerts(ctx)
		return err == nil && len(a) == 1 && a[0].State == "firing" && a[0].Labels["alertname"] == "Drifted" && a[0].Labels["server"] == "a"
	})
	s, err := p.Query(ctx, `demo_drifts_total{job="mcpdrift"}`)
	if err != nil || len(s) != 1 || s[0].Value != 2 || s[0].Labels["server"] != "a" {
		t.Errorf("query: %v %v", s, err)
	}
	if _, err := p.Query(ctx, `demo_drifts_total{`); err == nil {
		t.Error("a bad expression is no error")
	}
	if at, err := p.RulesEvaluated(ctx); err != nil || at.IsZero() {
		t.Errorf("rules evaluated at %v, %v", at, err)
	}
	if names, err := p.MetricNames(ctx); err != nil || !slices.Contains(names, "demo_drifts_total") {
		t.Errorf("metric names %v, %v", names, err)
	}
}

// A real Jaeger receives a span over OTLP/HTTP and FindSpans finds it by
// its string and bool attributes, and not by a value it does not have.
func TestJaeger(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	bin := filepath.Join(root, "_build", "jaeger")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("_build/jaeger not built (make jaeger)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	j, err := StartJaeger(ctx, JaegerOptions{Binary: bin, Config: filepath.Join(root, "examples/jaeger/config.yaml"), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Stop()

	now := time.Now()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "agent-x")
	for i, stale := range []bool{true, false} {
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID([16]byte{1, byte(i + 1)}))
		sp.SetSpanID(pcommon.SpanID([8]byte{2, byte(i + 1)}))
		sp.SetName("tools/call search")
		sp.SetKind(ptrace.SpanKindClient)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Millisecond)))
		sp.Attributes().PutStr("gen_ai.tool.name", "search")
		sp.Attributes().PutBool("mcpdrift.tool.stale", stale)
		sp.Attributes().PutInt("server.port", 8080)
	}
	body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/v1/traces", j.Ports.OTLPHTTP), "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("OTLP export: HTTP %d", resp.StatusCode)
	}

	q := SpanQuery{Service: "agent-x", Tags: map[string]string{"mcpdrift.tool.stale": "true", "gen_ai.tool.name": "search"}, Start: now.Add(-time.Minute), End: now.Add(time.Minute)}
	var spans []Span
	waitUntil(t, "the stale span in Jaeger", func() bool {
		spans, err = j.FindSpans(ctx, q)
		return err == nil && len(spans) == 1
	})
	s := spans[0]
	if s.SpanID != "0201000000000000" || s.Service != "agent-x" || s.Operation != "tools/call search" || s.Tags["server.port"] != "8080" || !s.Start.Equal(now.Truncate(time.Microsecond)) {
		t.Errorf("span %+v", s)
	}
	q.Tags = map[string]string{"gen_ai.tool.name": "other"}
	if spans, err := j.FindSpans(ctx, q); err != nil || len(spans) != 0 {
		t.Errorf("other tool: %v %v", spans, err)
	}
	q.Tags, q.Limit = nil, 2
	if _, err := j.FindSpans(ctx, q); err == nil {
		t.Error("a result at the limit is no error")
	}
	if _, err := j.FindSpans(ctx, SpanQuery{}); err == nil {
		t.Error("a query without service is no error")
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
