package proxy_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/integration/proxy/internal/testchild"
	"github.com/mcpdrift/mcpdrift/dev/testkit/benchutil"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/proxy/gate"
)

// BenchmarkStdioStaleGate is what the stale judgement adds to a relayed
// tools/call round trip (the agent's go-sdk client, the stdio proxy, a
// go-sdk server child), interleaved in one run: each call through a proxy
// with --on-stale observe and through one with --on-stale refuse. For echo,
// a tool that never changed, the gate compares two digests
// (unchanged-ratio, ≈ 1). For search, which the server changed (upgrade)
// before the agent listed again, the gate validates each call's arguments
// against the current definition (changed-ratio, the goal ≤ 1.05;
// changed-ns/op the time it adds; judge-ns/op the gate's check alone, timed
// in this process, and judge-share its share of the observed round trip).
// ns/op is the observed search call's.
func BenchmarkStdioStaleGate(b *testing.B) {
	b.Setenv(testchild.Env, "sdk")
	b.Setenv(testchild.Log, os.DevNull)
	argv := []string{os.Args[0], "-test.run=^$"}
	through := func(onStale, tool string, args map[string]any) func() error {
		cfg := proxy.Config{Command: argv, InjectTraceContext: true, ShutdownGrace: time.Second, OnStale: onStale}
		return upgradedCaller(b, stdioThroughProxy(b, argv, cfg), tool, args)
	}
	searchArgs := map[string]any{"q": "x", "limit": 1}
	observed := &benchutil.Variant{Name: "observe, changed tool", Timed: true, Call: through(proxy.OnStaleObserve, "search", searchArgs)}
	judged := &benchutil.Variant{Name: "refuse, changed tool", Call: through(proxy.OnStaleRefuse, "search", searchArgs)}
	observedEcho := &benchutil.Variant{Name: "observe, unchanged tool", Call: through(proxy.OnStaleObserve, "echo", nil)}
	judgedEcho := &benchutil.Variant{Name: "refuse, unchanged tool", Call: through(proxy.OnStaleRefuse, "echo", nil)}
	b.ReportAllocs()
	b.ResetTimer()
	benchutil.Interleave(b, 100, observed, judged, observedEcho, judgedEcho)
	b.ReportMetric(judged.NsPerCall()/observed.NsPerCall(), "changed-ratio")
	b.ReportMetric(judged.NsPerCall()-observed.NsPerCall(), "changed-ns/op")
	b.ReportMetric(judgedEcho.NsPerCall()/observedEcho.NsPerCall(), "unchanged-ratio")
	b.ReportMetric(judged.AllocsPerCall()-observed.AllocsPerCall(), "changed-allocs/op")
	// The judgement alone, timed in this process on the same call: its
	// share of the observed round trip does not drown in the machine's
	// noise as the ratio of two round trips can.
	g := gate.New(gate.Options{Refuse: true})
	g.Learn(gate.Definitions{"search": {Digest: "v1", Schema: testchild.SearchV1}})
	g.Learn(gate.Definitions{"search": {Digest: "v2", Schema: testchild.SearchV2}})
	call := gate.Call{Tool: "search", Planned: "v2", Listed: true, Arguments: json.RawMessage(`{"q":"x","limit":1}`)}
	check := benchutil.NsPerOp(b.N, func() {
		if g.Check(call) != nil {
			b.Fatal("refused")
		}
	})
	b.ReportMetric(check, "judge-ns/op")
	b.ReportMetric(check/observed.NsPerCall(), "judge-share")
}

// upgradedCaller connects a go-sdk client over t, lists the tools, has the
// server change search (upgrade), lists again, and returns a function
// calling tool with args.
func upgradedCaller(b *testing.B, t mcp.Transport, tool string, args map[string]any) func() error {
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	for _, step := range []func() error{
		func() error { _, err := cs.ListTools(ctx, nil); return err },
		func() error { _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "upgrade"}); return err },
		func() error { _, err := cs.ListTools(ctx, nil); return err },
	} {
		if err := step(); err != nil {
			b.Fatal(err)
		}
	}
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	return func() error {
		res, err := cs.CallTool(ctx, params)
		if err == nil && res.IsError {
			b.Fatalf("%s refused or failed: %v", tool, res.StructuredContent)
		}
		return err
	}
}
