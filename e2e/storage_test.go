//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/quickstart"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestDamagedStorageFile starts the quickstart collector on a file_storage
// directory whose receiver file holds random bytes (issue 11: the Collector
// used to exit with "invalid database" on every start). It must start,
// probe with an in-memory baseline, log the file and the remedy, and report
// the store as unavailable on its own metrics endpoint.
func TestDamagedStorageFile(t *testing.T) {
	t.Parallel()
	o := binaries(t)
	o.Agent = ""
	file := filepath.Join(o.Dir, "storage", "receiver_mcpdrift_")
	garbage := make([]byte, 64<<10)
	_, _ = rand.Read(garbage)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := quickstart.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()

	eventually(t, o.Dir, "a baseline kept in memory", 30*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.Events(semconv.EventSnapshot)) >= 1
	})
	log, err := os.ReadFile(s.LogFile("collector"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "Storage cannot be used") || !strings.Contains(string(log), "delete "+file) {
		t.Errorf("the collector log does not name %s and the remedy:\n%s", file, log)
	}
	metrics := get(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", s.Ports.Telemetry))
	if !hasSample(metrics, "otelcol_receiver_mcpdrift_storage_available", "0") {
		t.Errorf("no otelcol_receiver_mcpdrift_storage_available 0 on the telemetry endpoint:\n%s", metrics)
	}
	if after, _ := os.ReadFile(file); string(after) != string(garbage) {
		t.Error("the damaged file was changed without recreate")
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hasSample reports whether the Prometheus text has a sample of name (any
// labels) with value v.
func hasSample(text, name, v string) bool {
	for _, line := range strings.Split(text, "\n") {
		if (strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ")) && strings.HasSuffix(line, " "+v) {
			return true
		}
	}
	return false
}
