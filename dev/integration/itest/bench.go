package itest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpdrift/mcpdrift/interceptor"
)

// BenchProviders are the providers both sides of a benchmark share: a
// batching tracer provider with an exporter that does nothing, and a meter
// provider whose reader is never collected. The uninstrumented side does
// not use them; the instrumented side pays what a production setup pays up
// to the exporter.
func BenchProviders(b *testing.B) []interceptor.Option {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return []interceptor.Option{interceptor.WithTracerProvider(tp), interceptor.WithMeterProvider(mp)}
}

type echoIn struct {
	Message string `json:"message"`
}

// BenchServer is a go-sdk server with an echo tool and extra generated
// tools (each with a schema of a few parameters), for listings of any size.
func BenchServer(extra int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
	})
	for i := range extra {
		schema := fmt.Sprintf(`{"type":"object","properties":{"query":{"type":"string","description":"what to look for in corpus %d"},"limit":{"type":"integer","minimum":1,"maximum":100},"filters":{"type":"array","items":{"type":"string","enum":["a","b","c"]}}},"required":["query"]}`, i)
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool_%03d", i), Description: fmt.Sprintf("Generated tool number %d, for benchmarks.", i), InputSchema: json.RawMessage(schema)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	return s
}

// BenchCaller connects c over t, lists the tools once (so an instrumented
// client has its listing cached) and returns a function making one
// tools/call of the bench server's echo tool.
func BenchCaller(b *testing.B, c *mcp.Client, t mcp.Transport) func() error {
	ctx := context.Background()
	cs, err := c.Connect(ctx, t, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	if _, err := cs.ListTools(ctx, nil); err != nil {
		b.Fatal(err)
	}
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}}
	return func() error {
		_, err := cs.CallTool(ctx, params)
		return err
	}
}
