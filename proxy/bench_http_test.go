package proxy_test

import (
	"bufio"
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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/internal/dev/testkit/benchutil"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/proxy/internal/testchild"
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
// loopback to an in-process go-sdk server, interleaved in one run four
// ways: direct; through a bare httputil.ReverseProxy (what any HTTP proxy
// costs: a second HTTP exchange); through the proxy's forwarder without
// its tap (the same second exchange with the proxy's code, recording
// nothing); and through the proxy, spans recorded and trace context
// injected. ns/op and allocs/op are the proxied call's (client and server
// included, all in this process); overhead-ratio, relay-ratio and
// forward-ratio are over the direct call's time; proxy-allocs/op is what
// the proxy allocates per call beyond the client and server.
func BenchmarkHTTPRoundTrip(b *testing.B) {
	up := sdkHTTPServer(b, testchild.BenchServer(1))
	upURL, _ := url.Parse(up.URL)
	bare := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(upURL) },
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0), // streams cut at the end of the run
	})
	b.Cleanup(bare.Close)
	fw, closeFw := proxy.PlainForwarder(up.URL)
	plain := httptest.NewServer(fw)
	b.Cleanup(func() { plain.Close(); closeFw() })
	direct := &benchutil.Variant{Name: "direct", Call: sessionCaller(b, streamable(b, up.URL))}
	relay := &benchutil.Variant{Name: "reverse proxy", Call: sessionCaller(b, streamable(b, bare.URL))}
	forward := &benchutil.Variant{Name: "forwarder", Call: sessionCaller(b, streamable(b, plain.URL))}
	proxied := &benchutil.Variant{Name: "proxy", Timed: true, Call: sessionCaller(b, streamable(b, httpProxyTo(b, up.URL).URL))}
	compareThree(b, direct, relay, proxied, forward)
	b.ReportMetric(forward.NsPerCall()/direct.NsPerCall(), "forward-ratio")
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
