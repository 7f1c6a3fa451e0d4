package proxy_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/integration/proxy/internal/testchild"
	"github.com/mcpdrift/mcpdrift/dev/testkit/benchutil"
	"github.com/mcpdrift/mcpdrift/proxy"
)

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
// costs: a second HTTP exchange); and through the proxy, spans recorded and
// trace context injected. ns/op and allocs/op are the proxied call's
// (client and server included, all in this process); overhead-ratio and
// relay-ratio are over the direct call's time; proxy-allocs/op is what the
// proxy allocates per call beyond the client and server. (The proxy's
// forwarder without its tap is an internal of the proxy module, out of this
// module's reach: proxy's BenchmarkHTTPForwarder times it.)
func BenchmarkHTTPRoundTrip(b *testing.B) {
	up := sdkHTTPServer(b, testchild.BenchServer(1))
	upURL, _ := url.Parse(up.URL)
	bare := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(upURL) },
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0), // streams cut at the end of the run
	})
	b.Cleanup(bare.Close)
	direct := &benchutil.Variant{Name: "direct", Call: sessionCaller(b, streamable(b, up.URL))}
	relay := &benchutil.Variant{Name: "reverse proxy", Call: sessionCaller(b, streamable(b, bare.URL))}
	proxied := &benchutil.Variant{Name: "proxy", Timed: true, Call: sessionCaller(b, streamable(b, httpProxyTo(b, up.URL).URL))}
	compareThree(b, direct, relay, proxied)
}

// BenchmarkHTTPLockCall measures what --lock costs a tools/call round trip
// through the HTTP → HTTP proxy (go-sdk server, answers as event streams):
// interleaved in one run, the proxy without a gate and with a lock that
// approves the tool, which reads every answer (each event held until it
// is whole, walked for listings) and judges every call. lock-ratio is the
// locked call's time over the unlocked one's; lock-allocs/op what the lock
// allocates per call.
func BenchmarkHTTPLockCall(b *testing.B) {
	up := sdkHTTPServer(b, testchild.BenchServer(1))
	lock := writeLock(b, map[string]string{"echo": `{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}}}}`})
	h, err := proxy.NewHandler(proxy.Config{Upstream: up.URL, Listen: "bench", InjectTraceContext: true, Lock: lock}, benchTelemetry(b))
	if err != nil {
		b.Fatal(err)
	}
	locked := httptest.NewServer(h)
	b.Cleanup(func() { locked.Close(); h.Close() })
	plain := &benchutil.Variant{Name: "proxy", Call: sessionCaller(b, streamable(b, httpProxyTo(b, up.URL).URL))}
	withLock := &benchutil.Variant{Name: "proxy --lock", Timed: true, Call: sessionCaller(b, streamable(b, locked.URL))}
	b.ReportAllocs()
	b.ResetTimer()
	benchutil.Interleave(b, 100, plain, withLock)
	b.ReportMetric(withLock.NsPerCall()/plain.NsPerCall(), "lock-ratio")
	b.ReportMetric(withLock.AllocsPerCall()-plain.AllocsPerCall(), "lock-allocs/op")
}

// BenchmarkHTTPSessions holds 1,000 concurrent Streamable HTTP sessions
// through one proxy to a go-sdk server with a 100-tool listing. The agents
// and the server run in a child process (testchild "sessions"), so this
// process holds the proxy alone: each session lists the tools and makes
// three calls, all at once; then, with every session open (each holds its
// standing GET stream through the proxy), the server changes its tools
// and every session must receive list_changed on its stream. A session
// that does not complete its calls, or a stream that does not deliver,
// fails the benchmark (stalled). B/session is the live memory (heap and
// goroutine stacks, after GC) the proxy holds per open session.
func BenchmarkHTTPSessions(b *testing.B) {
	const sessions, calls = 1000, 3
	var total float64
	for range b.N {
		total += proxySessions(b, sessions, calls)
	}
	b.ReportMetric(total/float64(b.N*sessions), "B/session")
}

// proxySessions runs the sessions child through a new proxy and returns
// the live memory the proxy holds with every session open.
func proxySessions(b *testing.B, n, calls int) float64 {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), testchild.Env+"=sessions",
		fmt.Sprintf("%s=%d", testchild.SessionsN, n), fmt.Sprintf("%s=%d", testchild.SessionsCalls, calls))
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	child := func() { stdin.Close(); _ = cmd.Wait() }
	defer child()
	out := bufio.NewScanner(stdout)
	line := func() string {
		if !out.Scan() {
			b.Fatalf("the sessions child ended: %v", out.Err())
		}
		return out.Text()
	}
	upstream := line()
	before := liveBytes()
	h, err := proxy.NewHandler(proxy.Config{Upstream: upstream, Listen: "bench", InjectTraceContext: true}, benchTelemetry(b))
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer func() { child(); hs.Close(); h.Close() }() // the sessions end with the child
	fmt.Fprintln(stdin, hs.URL)
	if got := line(); got != "open" {
		b.Fatal(got)
	}
	live := float64(liveBytes()) - float64(before)
	fmt.Fprintln(stdin, "notify")
	if got := line(); got != fmt.Sprintf("delivered %d", n) {
		b.Fatalf("%s of %d streams: the others stalled", got, n)
	}
	return live
}

// liveBytes is the heap in use and the goroutine stacks, after GC.
func liveBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse
}

// BenchmarkHTTPRelistCall measures what a list_changed costs the agent's
// next call through the HTTP → HTTP proxy with --on-stale refuse: each
// round, a plain tools/call, then the server changes its tools, the agent
// gets list_changed on its GET stream (the proxy starts its relist as it
// passes), and the agent calls at once; only the calls are timed.
// relist-ratio is the call after the announcement over the plain call;
// list-ns/op is a tools/list round trip, what relisting on the call path
// would add.
func BenchmarkHTTPRelistCall(b *testing.B) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	echo := &mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	srv.AddTool(echo, handler)
	up := sdkHTTPServer(b, srv)
	h, err := proxy.NewHandler(proxy.Config{Upstream: up.URL, Listen: "bench", InjectTraceContext: true, OnStale: proxy.OnStaleRefuse}, benchTelemetry(b))
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(h)
	b.Cleanup(func() { hs.Close(); h.Close() })
	changed := make(chan struct{}, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	ctx := context.Background()
	cs, err := c.Connect(ctx, streamable(b, hs.URL), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	var plain, relist, list time.Duration
	timed := func(d *time.Duration, f func() error) {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		*d += time.Since(start)
	}
	call := func() error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
		if err == nil && res.IsError {
			err = fmt.Errorf("echo refused: %v", res.StructuredContent)
		}
		return err
	}
	relisted := func() error { _, err := cs.ListTools(ctx, nil); return err }
	for b.Loop() {
		timed(&list, relisted)
		timed(&plain, call)
		srv.AddTool(echo, handler) // the same definition: announced, nothing stale
		waitChan(b, changed, "list_changed")
		timed(&relist, call)
	}
	n := float64(b.N)
	b.ReportMetric(float64(plain.Nanoseconds())/n, "plain-ns/op")
	b.ReportMetric(float64(relist.Nanoseconds())/n, "relist-ns/op")
	b.ReportMetric(float64(list.Nanoseconds())/n, "list-ns/op")
	b.ReportMetric(float64(relist)/float64(plain), "relist-ratio")
}

// BenchmarkUpstreamRoundTrip measures a tools/call round trip through the
// stdio → HTTP proxy (the agent's go-sdk client on in-process pipes, the
// proxy's Streamable HTTP session to an in-process go-sdk server on
// loopback, answers as event streams), telemetry off as a proxy with no
// exporter configured runs, interleaved in one run with the same client
// calling the server directly over HTTP. overhead-ratio is the proxied
// call's time over the direct one's; proxy-allocs/op and proxy-B/op are
// what the proxied call allocates beyond the direct one (the agent's
// stdio transport and the proxy's hop: its HTTP exchange replaces the
// client's own).
func BenchmarkUpstreamRoundTrip(b *testing.B) {
	up := sdkHTTPServer(b, testchild.BenchServer(1))
	direct := &benchutil.Variant{Name: "direct", Call: sessionCaller(b, streamable(b, up.URL))}
	proxied := &benchutil.Variant{Name: "proxy", Timed: true, Call: sessionCaller(b, stdioToUpstream(b,
		proxy.Config{Upstream: up.URL, InjectTraceContext: true, ShutdownGrace: time.Second}))}
	b.ReportAllocs()
	b.ResetTimer()
	benchutil.Interleave(b, 100, direct, proxied)
	b.ReportMetric(proxied.NsPerCall()/direct.NsPerCall(), "overhead-ratio")
	b.ReportMetric(proxied.AllocsPerCall()-direct.AllocsPerCall(), "proxy-allocs/op")
	b.ReportMetric(proxied.BytesPerCall()-direct.BytesPerCall(), "proxy-B/op")
}

// stdioToUpstream runs the stdio → HTTP proxy for cfg in the benchmark,
// telemetry off, and returns the agent's transport to it.
func stdioToUpstream(b *testing.B, cfg proxy.Config) mcp.Transport {
	return agentPipes(b, func(io proxy.Stdio) {
		_, _ = proxy.RunUpstream(context.Background(), cfg, proxy.NoTelemetry(), io)
	})
}
