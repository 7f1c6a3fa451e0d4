package proxy_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpdrift/mcpdrift/dev/integration/proxy/internal/testchild"
	"github.com/mcpdrift/mcpdrift/dev/testkit/benchutil"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// benchTelemetry is what a production proxy pays up to the exporter: a
// batching tracer provider whose exporter does nothing, and a meter
// provider whose reader is never collected.
func benchTelemetry(b *testing.B) proxy.Telemetry {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return proxy.Telemetry{Tracer: tp, Meter: mp, Propagator: propagation.TraceContext{},
		Shutdown: func(context.Context) error { return nil }}
}

// BenchmarkStdioRoundTrip measures a tools/call round trip over a
// persistent stdio session to the same go-sdk server (a child process),
// interleaved in one run three ways: direct; through a bare byte relay
// (the agent's side on the same in-process pipes as the proxy's, the
// server's on OS pipes, io.Copy both ways: the extra hop every stdio proxy
// pays, and nothing else); and through the proxy, with spans recorded and
// trace context injected. ns/op and allocs/op are the proxied call's (the
// agent's go-sdk client included); overhead-ratio is its time over the
// direct call's, relay-ratio the bare relay's over the direct call's, and
// proxy-allocs/op what the proxy allocates per call beyond the client.
func BenchmarkStdioRoundTrip(b *testing.B) {
	b.Setenv(testchild.Env, "sdk")
	b.Setenv(testchild.Log, os.DevNull)
	argv := []string{os.Args[0], "-test.run=^$"}
	direct := &benchutil.Variant{Name: "direct", Call: sessionCaller(b, &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...)})}
	relay := &benchutil.Variant{Name: "relay", Call: sessionCaller(b, bareRelay(b, argv))}
	proxied := &benchutil.Variant{Name: "proxy", Timed: true, Call: sessionCaller(b, stdioThroughProxy(b, argv,
		proxy.Config{Command: argv, InjectTraceContext: true, ShutdownGrace: time.Second}))}
	compareThree(b, direct, relay, proxied)
}

// sessionCaller connects a go-sdk client (a 2025-11-25 session) over t, lists
// the tools once and returns a function making one tools/call.
func sessionCaller(b *testing.B, t mcp.Transport) func() error {
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	if _, err := cs.ListTools(ctx, nil); err != nil {
		b.Fatal(err)
	}
	params := &mcp.CallToolParams{Name: "echo"}
	return func() error {
		_, err := cs.CallTool(ctx, params)
		return err
	}
}

// compareThree interleaves the direct, relayed and proxied calls and
// reports the proxied call against the other two (proxied is b's own).
func compareThree(b *testing.B, direct, relay, proxied *benchutil.Variant) {
	b.ReportAllocs()
	b.ResetTimer()
	benchutil.Interleave(b, 100, direct, relay, proxied)
	b.ReportMetric(proxied.NsPerCall()/direct.NsPerCall(), "overhead-ratio")
	b.ReportMetric(relay.NsPerCall()/direct.NsPerCall(), "relay-ratio")
	b.ReportMetric(direct.NsPerCall(), "direct-ns/op")
	b.ReportMetric(proxied.AllocsPerCall()-direct.AllocsPerCall(), "proxy-allocs/op")
	b.ReportMetric(proxied.AllocsPerCall()-relay.AllocsPerCall(), "proxy-over-relay-allocs/op")
}

// stdioThroughProxy runs cfg in the benchmark and returns the agent's
// transport to it; the proxy has ended when the benchmark's cleanup is done.
func stdioThroughProxy(b *testing.B, argv []string, cfg proxy.Config) mcp.Transport {
	return agentPipes(b, func(io proxy.Stdio) {
		_, _ = proxy.RunCommand(context.Background(), cfg, benchTelemetry(b), io)
	})
}

// agentPipes runs a stdio proxy (run) on in-process pipes in the benchmark
// and returns the agent's transport to it; run has returned when the
// benchmark's cleanup is done.
func agentPipes(b *testing.B, run func(proxy.Stdio)) mcp.Transport {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(proxy.Stdio{In: inR, Out: outW, Err: io.Discard})
		outW.Close()
	}()
	b.Cleanup(func() { <-done }) // after the client's Close (cleanups run last first)
	return &mcp.IOTransport{Reader: outR, Writer: inW}
}

// bareRelay starts argv and relays bytes between the returned transport and
// the child with io.Copy: the floor any stdio proxy stands on.
func bareRelay(b *testing.B, argv []string) mcp.Transport {
	cmd := exec.Command(argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _, _ = io.Copy(stdin, inR); stdin.Close() }()
	go func() { _, _ = io.Copy(outW, stdout); outW.Close() }()
	b.Cleanup(func() { _ = cmd.Wait() })
	return &mcp.IOTransport{Reader: outR, Writer: inW}
}
