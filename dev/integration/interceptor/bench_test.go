package interceptor_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/dev/testkit/benchutil"
	"github.com/mcpdrift/mcpdrift/interceptor"
)

// A tools/call as the go-sdk sends it on 2026-07-28, and a typical result.
var (
	benchParams = json.RawMessage(`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"agent","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"message":"hello"}}`)
	benchResult = json.RawMessage(`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench","version":"1"}},"content":[{"type":"text","text":"hello"}],"resultType":"complete"}`)
)

// benchSession returns a session whose cached listing is the bench
// server's (echo plus extra tools), and a function recording one
// tools/call request and its response.
func benchSession(b *testing.B, ic *interceptor.Interceptor, extra int) func() error {
	raw := (&itest.GoServer{Server: itest.BenchServer(extra)}).RawToolsList(b)
	sess := ic.NewSession(interceptor.Endpoint{Pipe: true})
	ctx := context.Background()
	sess.Request(ctx, interceptor.IntID(1), "tools/list", nil)
	sess.Response(interceptor.IntID(1), raw, nil)
	id := int64(1)
	return func() error {
		id++
		sess.Request(ctx, interceptor.IntID(id), "tools/call", benchParams)
		sess.Response(interceptor.IntID(id), benchResult, nil)
		return nil
	}
}

// BenchmarkSessionToolCall is the interceptor's own cost per tools/call
// (span with its attributes, trace context injection, pairing, histogram),
// without any SDK: b's ns/op and allocs/op are with a 1-tool listing;
// listing501-ratio compares the same call with a 501-tool listing cached
// (≈ 1: the call path looks the digest up, it never computes one).
func BenchmarkSessionToolCall(b *testing.B) {
	ic := interceptor.New(itest.BenchProviders(b)...)
	small := &benchutil.Variant{Name: "1 tool", Call: benchSession(b, ic, 0), Timed: true}
	large := &benchutil.Variant{Name: "501 tools", Call: benchSession(b, ic, 500)}
	b.ReportAllocs()
	b.ResetTimer()
	benchutil.Interleave(b, 100, small, large)
	b.ReportMetric(large.NsPerCall()/small.NsPerCall(), "listing501-ratio")
}

// BenchmarkToolsListPage is the once-per-listing cost: caching a 501-tool
// tools/list page, digests and set digest included.
func BenchmarkToolsListPage(b *testing.B) {
	ic := interceptor.New(itest.BenchProviders(b)...)
	raw := (&itest.GoServer{Server: itest.BenchServer(500)}).RawToolsList(b)
	sess := ic.NewSession(interceptor.Endpoint{Pipe: true})
	ctx := context.Background()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	id := int64(0)
	for b.Loop() {
		id++
		sess.Request(ctx, interceptor.IntID(id), "tools/list", nil)
		sess.Response(interceptor.IntID(id), raw, nil)
	}
}

// guardSession returns a function recording one guarded tools/call (the
// guard's judgement, then the request and its response) on a session with
// WithStaleRefusal whose echo tool has changed once or never.
func guardSession(b *testing.B, ic *interceptor.Interceptor, changed bool) func() error {
	const (
		echoV1 = `{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}`
		echoV2 = `{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"},"lang":{"type":"string"}},"required":["message"]}}`
	)
	sess := ic.NewSession(interceptor.Endpoint{Pipe: true})
	ctx := context.Background()
	listings := []string{echoV2}
	if changed {
		listings = []string{echoV1, echoV2}
	}
	id := int64(0)
	for _, tool := range listings {
		id++
		sess.Request(ctx, interceptor.IntID(id), "tools/list", nil)
		sess.Response(interceptor.IntID(id), json.RawMessage(`{"tools":[`+tool+`]}`), nil)
	}
	return func() error {
		id++
		if r := sess.GuardCall(ctx, interceptor.IntID(id), benchParams); r != nil {
			return r
		}
		sess.Request(ctx, interceptor.IntID(id), "tools/call", benchParams)
		sess.Response(interceptor.IntID(id), benchResult, nil)
		return nil
	}
}

// BenchmarkGuardCall is what WithStaleRefusal adds to the interceptor's own
// cost per tools/call, interleaved with the unguarded call in one run:
// unchanged-ratio for a tool the session was never served another
// definition of (a lookup: ≈ 1), changed-ns/op the time the judgement adds
// for a tool that changed (its arguments validated against the current and
// the superseded definition), changed-allocs/op its allocations.
func BenchmarkGuardCall(b *testing.B) {
	plainIC := interceptor.New(itest.BenchProviders(b)...)
	guardIC := interceptor.New(append(itest.BenchProviders(b), interceptor.WithStaleRefusal(true))...)
	plain := &benchutil.Variant{Name: "unguarded", Call: guardSession(b, plainIC, false), Timed: true}
	unchanged := &benchutil.Variant{Name: "guarded, unchanged tool", Call: guardSession(b, guardIC, false)}
	changed := &benchutil.Variant{Name: "guarded, changed tool", Call: guardSession(b, guardIC, true)}
	b.ReportAllocs()
	b.ResetTimer()
	benchutil.Interleave(b, 100, plain, unchanged, changed)
	b.ReportMetric(unchanged.NsPerCall()/plain.NsPerCall(), "unchanged-ratio")
	b.ReportMetric(unchanged.AllocsPerCall()-plain.AllocsPerCall(), "unchanged-allocs/op")
	b.ReportMetric(changed.NsPerCall()-plain.NsPerCall(), "changed-ns/op")
	b.ReportMetric(changed.AllocsPerCall()-plain.AllocsPerCall(), "changed-allocs/op")
}
