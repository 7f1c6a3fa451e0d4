package mcpdriftreceiver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/bearertokenauthextension"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// echoServer is an MCP server (2026-07-28, JSON responses) that sends back
// the credentials it receives: in a JSON-RPC error while failing, then in
// its serverInfo, instructions and tool descriptions. version changes what
// it lists, to make drift.
type echoServer struct {
	failing atomic.Bool
	version atomic.Int32
}

// echoed are the request headers the server repeats.
func echoed(r *http.Request) string {
	var b strings.Builder
	for _, k := range []string{"Authorization", "X-Api-Key", "Cookie"} {
		fmt.Fprintf(&b, "%s=%s ", k, r.Header.Get(k))
	}
	return b.String() + "url=" + r.URL.String()
}

func (e *echoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, method, ok := testservers.ReadRequest(w, r)
	if !ok {
		return
	}
	echo, _ := json.Marshal(echoed(r))
	w.Header().Set("Content-Type", "application/json")
	var result string
	switch {
	case method == "tools/list" && e.failing.Load():
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%s}}`, id, echo)
		return
	case method == "server/discover":
		result = fmt.Sprintf(`{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"instructions":%s,`+
			`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":%s,"version":"1"}}}`, echo, echo)
	case method == "tools/list":
		result = fmt.Sprintf(`{"tools":[{"name":"whoami","description":%s,"inputSchema":{"type":"object"}}`, echo)
		if e.version.Load() > 0 {
			result += fmt.Sprintf(`,{"name":"login","description":%s,"inputSchema":{"type":"object","required":["user"],"properties":{"user":{"type":"string","default":%s}}}}`, echo, echo)
		}
		result += "]}"
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, id)
		return
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

// authHost holds a started bearertokenauth extension.
func authHost(t *testing.T, id component.ID, token string) *storageHost {
	t.Helper()
	f := bearertokenauthextension.NewFactory()
	cfg := f.CreateDefaultConfig().(*bearertokenauthextension.Config)
	cfg.BearerToken = configopaque.String(token)
	return hostWith(t, id, f, cfg)
}

// No credential (static header, auth extension token, cookie, URL query)
// reaches the receiver's log, its events, its metrics or its HTTP client's
// spans, even from a server that echoes every request header and the URL:
// in its errors, its serverInfo, instructions and tool definitions (so in
// snapshot and drift events).
func TestSecretsEchoedByTheServerNeverLeave(t *testing.T) {
	const (
		static = "static-0123456789-token"
		apiKey = "apikey-1357924680"
		cookie = "cookie-5566778899"
		minted = "extension-9876543210-token"
		query  = "querykey-1122334455"
	)
	secrets := []string{static, apiKey, cookie, minted, query}
	srv := &echoServer{}
	srv.failing.Store(true)
	ts := httptest.NewServer(srv)
	defer ts.Close()

	headers := httpTarget("static", ts.URL+"/mcp")
	headers.Headers = configopaque.MapList{
		{Name: "Authorization", Value: "Bearer " + static},
		{Name: "X-Api-Key", Value: apiKey},
		{Name: "Cookie", Value: "sid=" + cookie},
	}
	authID := component.MustNewID("bearertokenauth")
	withAuth := httpTarget("extension", ts.URL+"/mcp")
	withAuth.Auth = configoptional.Some(configauth.Config{AuthenticatorID: authID})
	// The key in the query reaches the server (which echoes it) and the HTTP
	// client's spans; the closed port makes a transport error that quotes
	// the request URL.
	inQuery := httpTarget("query", ts.URL+"/mcp?api_key="+query)
	down := httpTarget("down", closedPort(t)+"?api_key="+query)
	cfg := e2eConfig(headers, withAuth, inQuery, down)

	core, observed := observer.New(zapcore.DebugLevel)
	spans := tracetest.NewSpanRecorder()
	set := receiverSettings()
	set.Logger = zap.New(core)
	set.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	r, err := newDriftReceiver(set, cfg, newProber(cfg))
	if err != nil {
		t.Fatal(err)
	}
	logs, metrics := new(consumertest.LogsSink), new(consumertest.MetricsSink)
	r.setLogs(logs)
	r.setMetrics(metrics)
	if err := r.Start(context.Background(), authHost(t, authID, minted)); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Shutdown(context.Background()) }()

	failures := func() []observer.LoggedEntry {
		return observed.FilterMessage("MCP server probe failed").All()
	}
	waitFor(t, "every target's failure", func() bool { return len(failures()) == 4 })
	for _, e := range failures() {
		if e.ContextMap()["target"] == "down" {
			continue
		}
		if !strings.Contains(fmt.Sprint(e.ContextMap()), "[REDACTED]") {
			t.Errorf("the server's echo should be in the warning, redacted: %v", e.ContextMap())
		}
	}

	// The server recovers; its contract then changes: snapshot and drift.
	srv.failing.Store(false)
	waitFor(t, "baselines", func() bool { return len(eventsNamed(logs, semconv.EventSnapshot)) == 3 })
	srv.version.Store(1)
	waitFor(t, "drifts", func() bool { return len(eventsNamed(logs, semconv.EventDrift)) == 3 })

	leaks := func(what, text string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s leaks %q: %s", what, s, text)
			}
		}
	}
	for _, e := range observed.All() {
		leaks("the collector log", fmt.Sprint(e.Message, e.ContextMap()))
	}
	var plm plog.JSONMarshaler
	for _, l := range logs.AllLogs() {
		b, err := plm.MarshalLogs(l)
		if err != nil {
			t.Fatal(err)
		}
		leaks("the events", string(b))
	}
	snap := eventsNamed(logs, semconv.EventSnapshot)[0]
	if v, _ := snap.Attributes().Get(semconv.ServerInfoName); !strings.Contains(v.Str(), "[REDACTED]") {
		t.Errorf("the echoed serverInfo name should read [REDACTED]: %q", v.Str())
	}
	urls, failed := 0, 0
	for _, sp := range spans.Ended() {
		leaks("a span", fmt.Sprint(sp.Name(), sp.Attributes(), sp.Status(), sp.Events()))
		for _, a := range sp.Attributes() {
			if a.Key == semconv.URLFull {
				urls++
			}
		}
		if sp.Status().Code == codes.Error {
			failed++
		}
	}
	if urls == 0 || failed == 0 {
		t.Errorf("want client spans with url.full and failed ones, got %d and %d of %d", urls, failed, len(spans.Ended()))
	}
	var pmm pmetric.JSONMarshaler
	for _, m := range metrics.AllMetrics() {
		b, err := pmm.MarshalMetrics(m)
		if err != nil {
			t.Fatal(err)
		}
		leaks("the metrics", string(b))
	}
}
