package gosdk_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/dev/testkit/benchutil"
	"github.com/mcpdrift/mcpdrift/interceptor/gosdk"
)

// benchClient connects a go-sdk client (instrumented or not) to s over the
// in-memory transport, lists the tools once, and returns a function making
// one tools/call round trip.
func benchClient(b *testing.B, s *mcp.Server, inst *gosdk.Instrumentation) func() error {
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	var t mcp.Transport = ct
	if inst != nil {
		inst.Instrument(c)
		t = inst.Transport(ct)
	}
	return itest.BenchCaller(b, c, t)
}

// BenchmarkToolCall measures a tools/call round trip over the in-memory
// transport with and without the interceptor, interleaved in one run, against
// a server listing 1 tool and one listing 501 tools. b's ns/op and allocs/op
// are the instrumented call with the small listing.
//
//	overhead-ratio      instrumented / uninstrumented, 1-tool listing (goal: median ≤ 1.05)
//	overhead-ratio-501  the same with a 501-tool listing
//	listing501-ratio    instrumented call, 501-tool / 1-tool listing (≈ 1:
//	                    no digest is computed on the call path)
//	extra-allocs/op     allocations the interceptor adds per call
func BenchmarkToolCall(b *testing.B) {
	opts := itest.BenchProviders(b)
	small, large := itest.BenchServer(0), itest.BenchServer(500)
	base := &benchutil.Variant{Name: "uninstrumented", Call: benchClient(b, small, nil)}
	inst := &benchutil.Variant{Name: "instrumented", Call: benchClient(b, small, gosdk.New(opts...)), Timed: true}
	baseLarge := &benchutil.Variant{Name: "uninstrumented-501", Call: benchClient(b, large, nil)}
	instLarge := &benchutil.Variant{Name: "instrumented-501", Call: benchClient(b, large, gosdk.New(opts...))}
	b.ReportAllocs()
	b.ResetTimer()
	benchutil.Interleave(b, 100, base, inst, baseLarge, instLarge)
	b.ReportMetric(inst.NsPerCall()/base.NsPerCall(), "overhead-ratio")
	b.ReportMetric(instLarge.NsPerCall()/baseLarge.NsPerCall(), "overhead-ratio-501")
	b.ReportMetric(instLarge.NsPerCall()/inst.NsPerCall(), "listing501-ratio")
	b.ReportMetric(base.NsPerCall(), "baseline-ns/op")
	b.ReportMetric(inst.AllocsPerCall()-base.AllocsPerCall(), "extra-allocs/op")
}
