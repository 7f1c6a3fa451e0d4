package httptap_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/dev/testkit/benchutil"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/interceptor/httptap"
)

// httpClient connects a go-sdk Streamable HTTP client to url, its HTTP
// client's transport being rt, and returns a function making one tools/call.
func httpClient(b *testing.B, url string, rt http.RoundTripper) func() error {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	return itest.BenchCaller(b, c, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}})
}

// BenchmarkRoundTripper measures a tools/call over loopback Streamable HTTP
// (2026-07-28, stateless, JSON responses) with the go-sdk client, with and
// without the tap under its HTTP client, interleaved in one run; b's ns/op
// and allocs/op are the tapped call.
func BenchmarkRoundTripper(b *testing.B) {
	s := itest.BenchServer(0)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	b.Cleanup(hs.Close)
	base := http.DefaultTransport.(*http.Transport).Clone()
	b.Cleanup(base.CloseIdleConnections)
	plain := &benchutil.Variant{Name: "plain", Call: httpClient(b, hs.URL, base)}
	tap := httptap.NewTransport(base, append(itest.BenchProviders(b), interceptor.WithServerName("bench"))...)
	tapped := &benchutil.Variant{Name: "tapped", Call: httpClient(b, hs.URL, tap), Timed: true}
	b.ReportAllocs()
	b.ResetTimer()
	benchutil.Interleave(b, 100, plain, tapped)
	b.ReportMetric(tapped.NsPerCall()/plain.NsPerCall(), "overhead-ratio")
	b.ReportMetric(plain.NsPerCall(), "baseline-ns/op")
	b.ReportMetric(tapped.AllocsPerCall()-plain.AllocsPerCall(), "extra-allocs/op")
}
