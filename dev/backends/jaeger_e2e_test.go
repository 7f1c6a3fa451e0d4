//go:build e2e

package backends

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// TestJaeger runs with make e2e, which builds Jaeger first (.ci/run builds
// it in the background while make test runs, so a unit test could not
// count on it).

// A real Jaeger receives a span over OTLP/HTTP and FindSpans finds it by
// its string and bool attributes, and not by a value it does not have.
func TestJaeger(t *testing.T) {
	root, _ := filepath.Abs("../..")
	bin := filepath.Join(root, "_build", "jaeger")
	if _, err := os.Stat(bin); err != nil {
		testservers.SkipLoudly(t, "_build/jaeger not built (make jaeger)")
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
