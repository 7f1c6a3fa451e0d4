package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/proxy"
)

// BenchmarkHTTPForwarder measures what the HTTP → HTTP proxy's tap (its
// parsing, spans and trace context) adds over the forwarder under it, and
// what that forwarder (PlainForwarder: the second HTTP exchange with the
// proxy's code, recording nothing) adds over calling the upstream directly.
// Each iteration POSTs one tools/call to each in turn on loopback, over
// keep-alive connections, to an upstream that answers as an event stream
// (as the go-sdk's Streamable HTTP server does): forward-ratio is the
// forwarder's time over the direct call's, tap-ratio the proxy's over the
// forwarder's; the -ns/op figures are each one's time a call. (The whole
// go-sdk session, beside a bare reverse proxy, is dev/integration/proxy's
// BenchmarkHTTPRoundTrip.)
func BenchmarkHTTPForwarder(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"echo\"}]}}\n\n")
	}))
	b.Cleanup(up.Close)
	fw, closeFw := proxy.PlainForwarder(up.URL)
	forwarder := httptest.NewServer(fw)
	b.Cleanup(func() { forwarder.Close(); closeFw() })
	h, err := proxy.NewHandler(proxy.Config{Upstream: up.URL, Listen: "bench", InjectTraceContext: true}, sdkTelemetry(b))
	if err != nil {
		b.Fatal(err)
	}
	proxied := httptest.NewServer(h)
	b.Cleanup(func() { proxied.Close(); h.Close() })

	rt := http.DefaultTransport.(*http.Transport).Clone()
	b.Cleanup(rt.CloseIdleConnections)
	client := &http.Client{Transport: rt}
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`
	post := func(url string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(call))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"text":"echo"`) {
			b.Fatalf("%s: %d %q %v", url, res.StatusCode, body, err)
		}
	}
	targets := []string{up.URL, forwarder.URL, proxied.URL}
	spent := make([]time.Duration, len(targets))
	for b.Loop() {
		for i, url := range targets {
			start := time.Now()
			post(url)
			spent[i] += time.Since(start)
		}
	}
	direct, forward, tapped := spent[0], spent[1], spent[2]
	n := float64(b.N)
	b.ReportMetric(float64(forward)/float64(direct), "forward-ratio")
	b.ReportMetric(float64(tapped)/float64(forward), "tap-ratio")
	b.ReportMetric(float64(direct.Nanoseconds())/n, "direct-ns/op")
	b.ReportMetric(float64(forward.Nanoseconds())/n, "forwarder-ns/op")
	b.ReportMetric(float64(tapped.Nanoseconds())/n, "proxy-ns/op")
}
