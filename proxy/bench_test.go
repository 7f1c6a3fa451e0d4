package proxy_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/proxy/internal/testchild"
)

// BenchmarkStdioRoundTrip measures a tools/call round trip over a
// persistent stdio session to the same go-sdk server (a child process),
// direct and through the proxy (with spans recorded), interleaved in one
// run. ns/op and allocs/op are the proxied call; overhead-ratio is its time
// over the direct call's.
func BenchmarkStdioRoundTrip(b *testing.B) {
	b.Setenv(testchild.Env, "sdk")
	b.Setenv(testchild.Log, os.DevNull)
	argv := []string{os.Args[0], "-test.run=^$"}
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	opts := &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	direct, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...)}, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()

	tel := newTelemetry(b)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = proxy.RunCommand(ctx, proxy.Config{Command: argv, InjectTraceContext: true, ShutdownGrace: time.Second}, tel.Telemetry,
			proxy.Stdio{In: inR, Out: outW, Err: io.Discard})
		outW.Close()
	}()
	proxied, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { proxied.Close(); <-done }()
	for _, cs := range []*mcp.ClientSession{direct, proxied} {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
	call := func(cs *mcp.ClientSession) {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo"}); err != nil {
			b.Fatal(err)
		}
	}
	var directTime time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		start := time.Now()
		call(direct)
		directTime += time.Since(start)
		b.StartTimer()
		call(proxied)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed())/float64(directTime), "overhead-ratio")
	b.ReportMetric(float64(directTime.Nanoseconds())/float64(b.N), "direct-ns/op")
}
