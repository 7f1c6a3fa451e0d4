// Package backends runs the real backends of the end-to-end tests and of
// docs/backends.md as child processes on loopback ports: a Prometheus
// (Debian package) that scrapes the collector's prometheus exporter and
// evaluates examples/prometheus/alerts.yml, and a Jaeger v2 all-in-one
// (built from the Go module proxy) that receives the collector's traces;
// and it queries them over their HTTP APIs.
package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/procs"
)

// PrometheusOptions describe a Prometheus to start.
type PrometheusOptions struct {
	Binary    string   // default: prometheus on PATH
	Dir       string   // prometheus.yml, the data directory and prometheus.log go here
	Job       string   // scrape job name; default "mcpdrift"
	Targets   []string // host:port of the collector's prometheus exporter
	RuleFiles []string // alerting rules, e.g. examples/prometheus/alerts.yml
	// ScrapeInterval and EvaluationInterval default to 1s: the tests want
	// an alert within seconds of a drift.
	ScrapeInterval, EvaluationInterval time.Duration
	StartTimeout                       time.Duration // default 30s
}

// Prometheus is a running Prometheus.
type Prometheus struct {
	proc *procs.Proc
	// URL is its base URL (HTTP API under /api/v1).
	URL    string
	client *http.Client
}

// StartPrometheus writes a prometheus.yml and starts Prometheus on a free
// loopback port with its data in Dir; it returns when Prometheus is ready.
func StartPrometheus(ctx context.Context, o PrometheusOptions) (*Prometheus, error) {
	if o.Binary == "" {
		o.Binary = "prometheus"
	}
	bin, err := exec.LookPath(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w (scripts/backends/install.sh installs it)", err)
	}
	if o.Job == "" {
		o.Job = "mcpdrift"
	}
	if o.ScrapeInterval == 0 {
		o.ScrapeInterval = time.Second
	}
	if o.EvaluationInterval == 0 {
		o.EvaluationInterval = time.Second
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 30 * time.Second
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "data"), 0o755); err != nil {
		return nil, err
	}
	config := filepath.Join(o.Dir, "prometheus.yml")
	if err := writePrometheusConfig(config, o); err != nil {
		return nil, err
	}
	ports, err := procs.FreePorts(1)
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	p, err := procs.Start("prometheus", bin, []string{
		"--config.file=" + config,
		"--storage.tsdb.path=" + filepath.Join(o.Dir, "data"),
		"--storage.tsdb.retention.time=1d",
		"--web.listen-address=" + addr,
		"--log.level=warn",
	}, nil, filepath.Join(o.Dir, "prometheus.log"))
	if err != nil {
		return nil, err
	}
	prom := &Prometheus{proc: p, URL: "http://" + addr, client: &http.Client{Timeout: 10 * time.Second}}
	if err := p.WaitHTTP(ctx, prom.URL+"/-/ready", o.StartTimeout, procs.StatusOK); err != nil {
		p.Stop(5 * time.Second)
		return nil, fmt.Errorf("prometheus did not become ready (see %s): %w", filepath.Join(o.Dir, "prometheus.log"), err)
	}
	return prom, nil
}

// writePrometheusConfig writes the configuration as JSON, which is YAML:
// no quoting rules to get wrong for paths and addresses.
func writePrometheusConfig(path string, o PrometheusOptions) error {
	rules := make([]string, len(o.RuleFiles))
	for i, f := range o.RuleFiles {
		abs, err := filepath.Abs(f)
		if err != nil {
			return err
		}
		rules[i] = abs
	}
	cfg := map[string]any{
		"global": map[string]any{
			"scrape_interval":     o.ScrapeInterval.String(),
			"evaluation_interval": o.EvaluationInterval.String(),
		},
		"rule_files": rules,
		"scrape_configs": []any{map[string]any{
			"job_name":       o.Job,
			"static_configs": []any{map[string]any{"targets": o.Targets}},
		}},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Stop stops Prometheus and waits for it.
func (p *Prometheus) Stop() { p.proc.Stop(10 * time.Second) }

// Sample is one element of an instant vector.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Query evaluates a PromQL expression now and returns its vector.
func (p *Prometheus) Query(ctx context.Context, expr string) ([]Sample, error) {
	var data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	if err := p.get(ctx, "/api/v1/query", url.Values{"query": {expr}}, &data); err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("query %q: result type %q, want vector", expr, data.ResultType)
	}
	out := make([]Sample, 0, len(data.Result))
	for _, r := range data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %q: value %v: %w", expr, r.Value[1], err)
		}
		out = append(out, Sample{Labels: r.Metric, Value: v})
	}
	return out, nil
}

// Alert is an active (pending or firing) alert.
type Alert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
	ActiveAt    time.Time         `json:"activeAt"`
}

// Alerts returns the active alerts.
func (p *Prometheus) Alerts(ctx context.Context) ([]Alert, error) {
	var data struct {
		Alerts []Alert `json:"alerts"`
	}
	err := p.get(ctx, "/api/v1/alerts", nil, &data)
	return data.Alerts, err
}

// RulesEvaluated returns the time by which every rule group has been
// evaluated (the oldest group's last evaluation); zero before the first.
func (p *Prometheus) RulesEvaluated(ctx context.Context) (time.Time, error) {
	var data struct {
		Groups []struct {
			Name           string    `json:"name"`
			LastEvaluation time.Time `json:"lastEvaluation"`
		} `json:"groups"`
	}
	if err := p.get(ctx, "/api/v1/rules", nil, &data); err != nil {
		return time.Time{}, err
	}
	if len(data.Groups) == 0 {
		return time.Time{}, errors.New("prometheus has no rule groups")
	}
	oldest := data.Groups[0].LastEvaluation
	for _, g := range data.Groups[1:] {
		if g.LastEvaluation.Before(oldest) {
			oldest = g.LastEvaluation
		}
	}
	return oldest, nil
}

// MetricNames returns the names of every series Prometheus holds.
func (p *Prometheus) MetricNames(ctx context.Context) ([]string, error) {
	var names []string
	err := p.get(ctx, "/api/v1/label/__name__/values", nil, &names)
	return names, err
}

// get calls a Prometheus HTTP API endpoint and decodes its data member.
func (p *Prometheus) get(ctx context.Context, path string, q url.Values, data any) error {
	u := p.URL + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return err
	}
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("prometheus %s: HTTP %d: %s", path, resp.StatusCode, truncate(body))
	}
	if env.Status != "success" {
		return fmt.Errorf("prometheus %s: %s", path, env.Error)
	}
	return json.Unmarshal(env.Data, data)
}

// Promtool runs promtool (bin; default: on PATH) with args, e.g. "test",
// "rules", "alerts_test.yml", and returns its output; a failed check or
// test is an error.
func Promtool(ctx context.Context, bin string, args ...string) (string, error) {
	if bin == "" {
		bin = "promtool"
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("promtool %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

func truncate(b []byte) string {
	const max = 512
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
