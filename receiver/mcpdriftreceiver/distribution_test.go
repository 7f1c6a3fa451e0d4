package mcpdriftreceiver

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/mcpdrift/mcpdrift/dev/procs"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// traceSink is an OTLP/HTTP endpoint that keeps the spans it receives, as
// JSON (the Collector's own spans, exported by its internal telemetry).
type traceSink struct {
	mu   sync.Mutex
	json bytes.Buffer
}

func (s *traceSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := ptraceotlp.NewExportRequest()
	if err != nil || req.UnmarshalProto(body) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var m ptrace.JSONMarshaler
	b, _ := m.MarshalTraces(req.Traces())
	s.mu.Lock()
	s.json.Write(b)
	s.json.WriteByte('\n')
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := ptraceotlp.NewExportResponse().MarshalProto()
	_, _ = w.Write(out)
}

func (s *traceSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.json.String()
}

const distributionConfig = `
extensions:
  bearertokenauth:
    token: %[1]q
receivers:
  mcpdrift:
    collection_interval: 200ms
    settle: 0s
    confirm_after: 1
    targets:
      - name: echo
        endpoint: %[2]q
        auth: { authenticator: bearertokenauth }
        headers: { X-Api-Key: %[3]q }
exporters:
  file/logs: { path: %[4]q, flush_interval: 100ms }
  file/metrics: { path: %[5]q, flush_interval: 100ms }
  debug: { verbosity: detailed }
service:
  extensions: [bearertokenauth]
  telemetry:
    logs: { level: debug }
    metrics: { level: none }
    traces:
      processors:
        - batch:
            schedule_delay: 100
            exporter:
              otlp: { protocol: http/protobuf, endpoint: %[6]q }
  pipelines:
    logs: { receivers: [mcpdrift], exporters: [file/logs, debug] }
    metrics: { receivers: [mcpdrift], exporters: [file/metrics, debug] }
`

// The built otelcol-mcpdrift, probing a server that echoes what it is sent,
// with the token of the real bearertokenauth extension, a static header and
// a key in the URL: none of them appears in the Collector's log, its
// exported events and metrics (debug exporter included) or its own spans.
func TestDistributionNeverShowsCredentials(t *testing.T) {
	bin := filepath.Join(testservers.RepoRoot(), "_build", "otelcol-mcpdrift", "otelcol-mcpdrift")
	if _, err := os.Stat(bin); err != nil {
		testservers.SkipLoudly(t, bin+" is not built, so the distribution's redaction was NOT tested; build it with: make distro")
	}
	const (
		token = "dist-token-0123456789"
		key   = "dist-apikey-2468013579"
		query = "dist-query-1357924680"
	)
	secrets := []string{token, key, query}
	srv := &echoServer{}
	srv.failing.Store(true)
	mcp := httptest.NewServer(srv)
	defer mcp.Close()
	sink := &traceSink{}
	otlp := httptest.NewServer(sink)
	defer otlp.Close()

	dir := t.TempDir()
	logsFile, metricsFile, collectorLog := filepath.Join(dir, "logs.jsonl"), filepath.Join(dir, "metrics.jsonl"), filepath.Join(dir, "collector.log")
	config := filepath.Join(dir, "config.yaml")
	src := fmt.Sprintf(distributionConfig, token, mcp.URL+"/mcp?api_key="+query, key, logsFile, metricsFile, otlp.URL)
	if err := os.WriteFile(config, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := procs.Start("otelcol-mcpdrift", bin, []string{"--config", config}, nil, collectorLog)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(10 * time.Second)
	read := func(path string) string {
		b, _ := os.ReadFile(path)
		return string(b)
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for !cond() {
			select {
			case <-p.Exited():
				t.Fatalf("the collector exited while waiting for %s:\n%s", what, read(collectorLog))
			case <-time.After(100 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s:\n%s", what, read(collectorLog))
			}
		}
	}

	waitUntil("the probe failure warning", func() bool { return strings.Contains(read(collectorLog), "MCP server probe failed") })
	srv.failing.Store(false)
	waitUntil("a snapshot event", func() bool { return strings.Contains(read(logsFile), semconv.EventSnapshot) })
	srv.version.Store(1)
	waitUntil("a drift event", func() bool { return strings.Contains(read(logsFile), semconv.EventDrift) })
	waitUntil("the client's spans", func() bool { return strings.Contains(sink.String(), semconv.URLFull) })
	p.Stop(10 * time.Second)

	outputs := map[string]string{
		"the collector's log": read(collectorLog),
		"the exported events": read(logsFile),
		"the metrics":         read(metricsFile),
		"the collector spans": sink.String(),
	}
	for what, text := range outputs {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s leaks %q", what, s)
			}
		}
	}
	// Not vacuous: the server did echo, and what it echoed was redacted.
	if !strings.Contains(outputs["the collector's log"], "Authorization=[REDACTED]") {
		t.Errorf("the probe failure should show the echoed header redacted:\n%s", outputs["the collector's log"])
	}
	if !strings.Contains(outputs["the exported events"], "[REDACTED]") {
		t.Error("the events should carry the echoed definitions, redacted")
	}
	if t.Failed() {
		for what, text := range outputs {
			t.Logf("==== %s\n%s", what, text)
		}
	}
}
