package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/internal/dev/testkit/benchutil"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// benchServer is a go-sdk server with an echo tool and tools-1 generated
// ones, each with a schema of a few parameters (a listing of realistic size).
func benchServer(tools int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo"}}}, nil
		})
	for i := 1; i < tools; i++ {
		schema := fmt.Sprintf(`{"type":"object","properties":{"query":{"type":"string","description":"what to look for in index %d"},"limit":{"type":"integer","minimum":1,"maximum":100},"fields":{"type":"array","items":{"type":"string","enum":["title","body","author"]}}},"required":["query"]}`, i)
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("search_%03d", i), Description: fmt.Sprintf("Searches index %d and returns the matching documents.", i), InputSchema: json.RawMessage(schema)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return &mcp.CallToolResult{}, nil })
	}
	return s
}

// sdkHTTPServer serves s over Streamable HTTP in the benchmark: sessions
// with Mcp-Session-Id, responses as event streams (the go-sdk's defaults).
func sdkHTTPServer(b *testing.B, s *mcp.Server) *httptest.Server {
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	b.Cleanup(hs.Close)
	return hs
}

// httpProxyTo serves the HTTP → HTTP proxy to upstream in the benchmark.
func httpProxyTo(b *testing.B, upstream string) *httptest.Server {
	h, err := proxy.NewHandler(proxy.Config{Upstream: upstream, Listen: "bench", InjectTraceContext: true}, benchTelemetry(b))
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(h)
	b.Cleanup(func() { hs.Close(); h.Close() })
	return hs
}

// streamable is a go-sdk client transport to url with an HTTP transport of
// its own (no connection shared with another variant).
func streamable(b *testing.B, url string) mcp.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	b.Cleanup(t.CloseIdleConnections)
	return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: t}}
}

// BenchmarkHTTPRoundTrip measures a tools/call round trip over a persistent
// Streamable HTTP session (2025-11-25, Mcp-Session-Id, SSE responses) on
// loopback to an in-process go-sdk server, interleaved in one run three
// ways: direct; through a bare httputil.ReverseProxy (what any HTTP proxy
// costs: a second HTTP exchange); and through the proxy, spans recorded
// and trace context injected. ns/op and allocs/op are the proxied call's
// (client and server included, all in this process); overhead-ratio and
// relay-ratio are over the direct call's time; proxy-allocs/op is what
// the proxy allocates per call beyond the client and server.
func BenchmarkHTTPRoundTrip(b *testing.B) {
	up := sdkHTTPServer(b, benchServer(1))
	upURL, _ := url.Parse(up.URL)
	bare := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(upURL) },
		FlushInterval: -1,
	})
	b.Cleanup(bare.Close)
	direct := &benchutil.Variant{Name: "direct", Call: sessionCaller(b, streamable(b, up.URL))}
	relay := &benchutil.Variant{Name: "reverse proxy", Call: sessionCaller(b, streamable(b, bare.URL))}
	proxied := &benchutil.Variant{Name: "proxy", Timed: true, Call: sessionCaller(b, streamable(b, httpProxyTo(b, up.URL).URL))}
	b.ReportAllocs()
	b.ResetTimer()
	benchutil.Interleave(b, 100, direct, relay, proxied)
	b.ReportMetric(proxied.NsPerCall()/direct.NsPerCall(), "overhead-ratio")
	b.ReportMetric(relay.NsPerCall()/direct.NsPerCall(), "relay-ratio")
	b.ReportMetric(direct.NsPerCall(), "direct-ns/op")
	b.ReportMetric(proxied.AllocsPerCall()-direct.AllocsPerCall(), "proxy-allocs/op")
}

// BenchmarkHTTPSessions opens 1,000 concurrent Streamable HTTP sessions to a
// go-sdk server with a 100-tool listing, direct and then through one proxy:
// each session lists the tools and makes three calls, all at once; then,
// with every session open (each holds its standing GET stream), the server
// changes its tools and every session must receive list_changed on its
// stream. A session that does not complete its calls, or a stream that
// does not deliver, fails the benchmark (stalled). proxy-B/session is the
// live memory (heap and goroutine stacks, after GC) the proxy holds per open
// session: the same sessions' memory through the proxy less direct.
func BenchmarkHTTPSessions(b *testing.B) {
	const sessions, calls = 1000, 3
	srv := benchServer(100)
	up := sdkHTTPServer(b, srv)
	px := httpProxyTo(b, up.URL)
	var direct, proxied uint64
	for range b.N {
		direct += openSessions(b, srv, up.URL, sessions, calls)
		proxied += openSessions(b, srv, px.URL, sessions, calls)
	}
	b.ReportMetric((float64(proxied)-float64(direct))/float64(b.N*sessions), "proxy-B/session")
	b.ReportMetric(float64(direct)/float64(b.N*sessions), "direct-B/session")
}

// openSessions runs n sessions to url at once (list, then calls calls
// each), checks that every open session's stream delivers a list_changed,
// and returns the live memory the open sessions hold.
func openSessions(b *testing.B, srv *mcp.Server, url string, n, calls int) uint64 {
	before := liveBytes()
	var changed atomic.Int64
	notified := make(chan struct{}, n)
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			changed.Add(1)
			notified <- struct{}{}
		},
	})
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 0, n
	defer t.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		open     []*mcp.ClientSession
		firstErr error
	)
	for range n {
		wg.Go(func() {
			cs, err := session(ctx, c, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: t}}, calls)
			mu.Lock()
			defer mu.Unlock()
			if cs != nil {
				open = append(open, cs)
			}
			if err != nil && firstErr == nil {
				firstErr = err
			}
		})
	}
	wg.Wait()
	defer func() {
		for _, cs := range open {
			cs.Close()
		}
	}()
	if len(open) != n || firstErr != nil {
		b.Fatalf("%s: %d of %d sessions completed their calls (stalled or failed): %v", url, n-len(open), n, firstErr)
	}
	live := liveBytes() - before
	// Every standing stream delivers: the server's tools change, each
	// session hears of it.
	srv.AddTool(&mcp.Tool{Name: "added", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return &mcp.CallToolResult{}, nil })
	defer srv.RemoveTools("added")
	for range n {
		select {
		case <-notified:
		case <-ctx.Done():
			b.Fatalf("%s: %d of %d streams stalled (no list_changed)", url, n-int(changed.Load()), n)
		}
	}
	return live
}

// session connects, lists the tools and makes calls tools/call requests.
func session(ctx context.Context, c *mcp.Client, t mcp.Transport, calls int) (*mcp.ClientSession, error) {
	cs, err := c.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, err
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return cs, err
	}
	for range calls {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}); err != nil {
			return cs, err
		}
	}
	return cs, nil
}

// liveBytes is the heap in use and the goroutine stacks, after GC.
func liveBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse
}
