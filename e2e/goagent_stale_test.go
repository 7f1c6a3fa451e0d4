//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/interceptor/gosdk"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestGoAgentStaleCalls: issue 23's judgements (see checkStaleJudgements)
// for a Go agent on the official go-sdk, instrumented by the interceptor
// with its guard, against the same switching quickstart server and
// otelcol-mcpdrift: a v1 call, the switch right after a probe, the agent
// re-lists on list_changed, a v2 call at once, then a call planned against
// v1.
func TestGoAgentStaleCalls(t *testing.T) {
	t.Parallel()
	o := binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := startV1Stack(t, ctx, o)

	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(fmt.Sprintf("127.0.0.1:%d", s.Ports.OTLPHTTP)), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(200*time.Millisecond)))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	const agent = "go-agent"
	inst := gosdk.New(
		interceptor.WithTracerProvider(tp),
		interceptor.WithServerName("demo-tools"),
		interceptor.WithAgent(agent, agent+"-1"),
		interceptor.WithArgumentValidation(true),
		// The guard: a call planned against a definition the server no
		// longer serves is answered STALE_TOOL_SCHEMA and never sent.
		interceptor.WithStaleRefusal(true),
	)
	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: agent, Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	inst.Instrument(client)
	cs, err := client.Connect(ctx, inst.Transport(&mcp.StreamableClientTransport{Endpoint: s.ServerURL()}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := listedTicket(t, ctx, cs); v != "v1" {
		t.Fatalf("the agent lists create_ticket %s, want v1", v)
	}
	if failed, text := callTicket(ctx, cs, map[string]any{"title": "Printer on fire"}); failed {
		t.Fatalf("the v1 call before the change: %s", text)
	}

	probed(t, o.Dir, "demo-tools", 1)
	switchedAt := time.Now()
	if err := s.SwitchServer(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed after the switch")
	}
	if v := listedTicket(t, ctx, cs); v != "v2" {
		t.Fatalf("the agent re-listed create_ticket %s after list_changed, want v2", v)
	}
	v2Sent := time.Now()
	v2Failed, v2Answer := callTicket(ctx, cs, map[string]any{"title": "Printer on fire", "project": "DEMO"})
	v1Sent := time.Now()
	v1Failed, v1Answer := callTicket(ctx, cs, map[string]any{"title": "Toner low"})
	_ = cs.Close()
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	checkStaleJudgements(t, s, o.Dir, staleRun{
		agent: agent, calls: 3,
		switchedAt: switchedAt, v2Sent: v2Sent, v1Sent: v1Sent,
		v2Failed: v2Failed, v2Answer: v2Answer,
		v1Refused: v1Failed && strings.Contains(v1Answer, semconv.RefusalStaleToolSchema), v1Answer: v1Answer,
	})
}

// listedTicket lists the server's tools and says which create_ticket it
// serves: v2 requires project.
func listedTicket(t *testing.T, ctx context.Context, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name != "create_ticket" {
			continue
		}
		raw, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var schema struct{ Required []string }
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(schema.Required, "project") {
			return "v2"
		}
		return "v1"
	}
	t.Fatalf("the server lists no create_ticket")
	return ""
}

// callTicket calls create_ticket and returns whether it failed and the
// answer the agent got: the result's text, or the error.
func callTicket(ctx context.Context, cs *mcp.ClientSession, args map[string]any) (bool, string) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_ticket", Arguments: args})
	if err != nil {
		return true, err.Error()
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return res.IsError, strings.Join(texts, "\n")
}
