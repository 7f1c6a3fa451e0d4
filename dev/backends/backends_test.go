package backends

import (
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

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
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
