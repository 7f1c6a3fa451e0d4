package docscheck

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcpdrift/mcpdrift/dev/procs"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/probe"
)

// TestPrometheusRules runs promtool's unit tests of the rules docs/queries.md
// points to (examples/prometheus/alerts.yml).
func TestPrometheusRules(t *testing.T) {
	t.Parallel()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		testservers.SkipLoudly(t, "promtool is not installed (Debian: apt-get install prometheus), so the PromQL of docs/queries.md was NOT tested")
	}
	out, err := exec.Command(promtool, "test", "rules", filepath.Join(root, "examples", "prometheus", "alerts_test.yml")).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	out, err = exec.Command(promtool, "check", "rules", filepath.Join(root, "examples", "prometheus", "recording.yml")).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules recording.yml: %v\n%s", err, out)
	}
}

// promNames are the names docs/queries.md says the Collector's Prometheus
// endpoints show: the receiver's metrics through the prometheus exporter, and
// mcpimpact's counters through the internal telemetry (index_evictions only
// appears after an eviction and is left out).
var promNames = map[string][]string{
	"exporter": {
		"mcpdrift_probe_up_ratio", "mcpdrift_probe_duration_seconds", "mcpdrift_probe_last_success_seconds",
		"mcpdrift_definitions", "mcpdrift_drift_changes_total", "mcpdrift_drift_count_total",
		"mcpdrift_drift_open_ratio", "mcpdrift_contract_mixed_ratio",
	},
	"telemetry": {
		"otelcol_processor_mcpimpact_tool_calls", "otelcol_processor_mcpimpact_stale_calls",
		"otelcol_processor_mcpimpact_impact_records", "otelcol_processor_mcpimpact_index_entries",
	},
}

// TestPrometheusNames runs otelcol-mcpdrift with docs/examples/prometheus.yaml
// (its target swapped for the real npm server-everything on stdio, its ports
// for free local ones), makes the server drift and sends one stale tool call,
// then scrapes both endpoints and checks every name docs/queries.md lists,
// and that series are labelled with the server.
func TestPrometheusNames(t *testing.T) {
	t.Parallel()
	bin, err := filepath.Abs(filepath.Join(root, "_build", defaultDistribution, defaultDistribution))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		testservers.SkipLoudly(t, bin+" is not built (make distro), so the Prometheus names of docs/queries.md were NOT checked")
	}
	node := testservers.Node(t)
	v1, v2 := testservers.Everything(t, "2025.9.25"), testservers.Everything(t, "2025.11.25")
	dir := t.TempDir()
	current := filepath.Join(dir, "everything.js")
	if err := os.Symlink(v1, current); err != nil {
		t.Fatal(err)
	}
	ports, err := procs.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	otlpAddr, promAddr, telemetryPort := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1]), ports[2]

	src, err := os.ReadFile(filepath.Join(root, "docs", "examples", "prometheus.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(src, &cfg); err != nil {
		t.Fatal(err)
	}
	receivers := cfg["receivers"].(map[string]any)
	receivers["mcpdrift"] = map[string]any{
		"collection_interval": "1s",
		"targets":             []any{map[string]any{"name": "everything", "command": []any{node, current, "stdio"}}},
	}
	receivers["otlp"] = map[string]any{"protocols": map[string]any{"http": map[string]any{"endpoint": otlpAddr}}}
	// One series, so the second agent's stale call lands in the overflow series.
	cfg["processors"].(map[string]any)["mcpimpact"] = map[string]any{"metric_cardinality_limit": 1}
	prom := cfg["exporters"].(map[string]any)["prometheus"].(map[string]any)
	prom["endpoint"] = promAddr
	reader := cfg["service"].(map[string]any)["telemetry"].(map[string]any)["metrics"].(map[string]any)["readers"].([]any)[0]
	pull := reader.(map[string]any)["pull"].(map[string]any)["exporter"].(map[string]any)["prometheus"].(map[string]any)
	pull["host"], pull["port"] = "127.0.0.1", telemetryPort
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgFile, out, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var log bytes.Buffer
	cmd := exec.Command(bin, "--config", cfgFile)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("collector log:\n%s", log.String())
		}
	}()

	exporterURL := "http://" + promAddr + "/metrics"
	telemetryURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", telemetryPort)
	waitFor(ctx, t, "the first probe", func() bool { return strings.Contains(scrape(exporterURL), "mcpdrift_definitions{") })
	if err := os.Remove(current); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(v2, current); err != nil {
		t.Fatal(err)
	}
	// drift_count is exported at 0 from the first probe; the per-rule change
	// counter appears with the first drift.
	waitFor(ctx, t, "the drift", func() bool { return strings.Contains(scrape(exporterURL), "mcpdrift_drift_changes_total{") })
	tool, digest := changedTool(t, node, v1, v2)
	postStaleCall(t, "http://"+otlpAddr+"/v1/traces", "planner", tool, digest)
	postStaleCall(t, "http://"+otlpAddr+"/v1/traces", "researcher", tool, digest)
	overflow := `otelcol_processor_mcpimpact_stale_calls{otel_metric_overflow="true"`
	waitFor(ctx, t, "the stale calls", func() bool {
		page := scrape(telemetryURL)
		return strings.Contains(page, `gen_ai_agent_name="planner"`) && strings.Contains(page, overflow)
	})

	pages := map[string]string{"exporter": scrape(exporterURL), "telemetry": scrape(telemetryURL)}
	for page, names := range promNames {
		for _, name := range names {
			if !hasSeries(pages[page], name) {
				t.Errorf("%s endpoint has no series %s", page, name)
			}
		}
	}
	if !strings.Contains(pages["exporter"], `mcpdrift_server_name="everything"`) {
		t.Error("exporter series lack the mcpdrift_server_name label (resource_constant_labels)")
	}
	if hasSeries(pages["telemetry"], "otelcol_processor_mcpimpact_stale_calls_total") {
		t.Error("internal telemetry now adds _total: update docs/queries.md and examples/prometheus/alerts.yml")
	}
}

func hasSeries(page, name string) bool {
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			return true
		}
	}
	return false
}

func scrape(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func waitFor(ctx context.Context, t *testing.T, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting for %s", what)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// postStaleCall sends one tools/call span of agent whose digest is no
// definition the server ever had, so mcpimpact marks it stale.
// changedTool is a tool both releases serve with different definitions,
// and its digest in the first: a call planned on that digest after the
// change is stale (a digest no server ever served would be ahead, never
// stale: docs/mcpimpact.md).
func changedTool(t *testing.T, node, v1, v2 string) (tool, digest string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	digests := func(release string) map[string]string {
		s, err := probe.Probe(ctx, probe.Target{Name: "everything", Command: node, Args: []string{release, "stdio"}}, probe.Options{})
		if err != nil {
			t.Fatalf("probing %s: %v", release, err)
		}
		m := map[string]string{}
		for _, d := range s.Tools {
			m[d.Key] = d.Digest
		}
		return m
	}
	before, after := digests(v1), digests(v2)
	names := slices.Sorted(maps.Keys(before))
	for _, name := range names {
		if d, ok := after[name]; ok && d != before[name] {
			return name, before[name]
		}
	}
	t.Fatalf("no tool of %s changed in %s: the test needs one", v1, v2)
	return "", ""
}

func postStaleCall(t *testing.T, url, agent, tool, digest string) {
	t.Helper()
	now := time.Now().UnixNano()
	body := fmt.Sprintf(`{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"%s"}}]},
"scopeSpans":[{"scope":{"name":"docscheck"},"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"%016x",
"name":"tools/call %s","kind":3,"startTimeUnixNano":"%d","endTimeUnixNano":"%d","attributes":[
{"key":"mcp.method.name","value":{"stringValue":"tools/call"}},{"key":"gen_ai.tool.name","value":{"stringValue":"%s"}},
{"key":"mcpdrift.server.name","value":{"stringValue":"everything"}},
{"key":"mcpdrift.tool.digest","value":{"stringValue":"%s"}}]}]}]}]}`, agent, now, tool, now, now+1000, tool, digest)
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("OTLP export: %s", resp.Status)
	}
}
