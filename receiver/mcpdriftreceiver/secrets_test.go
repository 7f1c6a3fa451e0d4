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
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

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
	return b.String()
}

func (e *echoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	echo, _ := json.Marshal(echoed(r))
	w.Header().Set("Content-Type", "application/json")
	var result string
	switch {
	case req.Method == "tools/list" && e.failing.Load():
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%s}}`, req.ID, echo)
		return
	case req.Method == "server/discover":
		result = fmt.Sprintf(`{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"instructions":%s,`+
			`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":%s,"version":"1"}}}`, echo, echo)
	case req.Method == "tools/list":
		result = fmt.Sprintf(`{"tools":[{"name":"whoami","description":%s,"inputSchema":{"type":"object"}}`, echo)
		if e.version.Load() > 0 {
			result += fmt.Sprintf(`,{"name":"login","description":%s,"inputSchema":{"type":"object","required":["user"],"properties":{"user":{"type":"string","default":%s}}}}`, echo, echo)
		}
		result += "]}"
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID)
		return
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
}

// authHost holds a started bearertokenauth extension.
func authHost(t *testing.T, id component.ID, token string) *storageHost {
	t.Helper()
	f := bearertokenauthextension.NewFactory()
	cfg := f.CreateDefaultConfig().(*bearertokenauthextension.Config)
	cfg.BearerToken = configopaque.String(token)
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &storageHost{exts: map[component.ID]component.Component{id: ext}}
	if err := ext.Start(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ext.Shutdown(context.Background()) })
	return h
}

// No credential (static header, auth extension token, cookie) reaches the
// receiver's log, its events or its metrics, even from a server that echoes
// every request header: in its errors, its serverInfo, instructions and
// tool definitions (so in snapshot and drift events).
func TestSecretsEchoedByTheServerNeverLeave(t *testing.T) {
	const (
		static = "static-0123456789-token"
		apiKey = "apikey-1357924680"
		cookie = "cookie-5566778899"
		minted = "extension-9876543210-token"
	)
	secrets := []string{static, apiKey, cookie, minted}
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
	cfg := e2eConfig(headers, withAuth)

	core, observed := observer.New(zapcore.DebugLevel)
	set := receiverSettings()
	set.Logger = zap.New(core)
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
	waitFor(t, "both targets' failures", func() bool { return len(failures()) == 2 })
	for _, e := range failures() {
		if !strings.Contains(fmt.Sprint(e.ContextMap()), "Authorization=[REDACTED]") {
			t.Errorf("the server's echo should be in the warning, redacted: %v", e.ContextMap())
		}
	}

	// The server recovers; its contract then changes: snapshot and drift.
	srv.failing.Store(false)
	waitFor(t, "baselines", func() bool { return len(eventsNamed(logs, semconv.EventSnapshot)) == 2 })
	srv.version.Store(1)
	waitFor(t, "drifts", func() bool { return len(eventsNamed(logs, semconv.EventDrift)) == 2 })

	for _, e := range observed.All() {
		check := fmt.Sprint(e.Message, e.ContextMap())
		for _, s := range secrets {
			if strings.Contains(check, s) {
				t.Errorf("collector log leaks %q: %s", s, check)
			}
		}
	}
	var plm plog.JSONMarshaler
	for _, l := range logs.AllLogs() {
		b, err := plm.MarshalLogs(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("events leak %q: %s", s, b)
			}
		}
	}
	snap := eventsNamed(logs, semconv.EventSnapshot)[0]
	if v, _ := snap.Attributes().Get(semconv.ServerInfoName); !strings.Contains(v.Str(), "[REDACTED]") {
		t.Errorf("the echoed serverInfo name should read [REDACTED]: %q", v.Str())
	}
	var pmm pmetric.JSONMarshaler
	for _, m := range metrics.AllMetrics() {
		b, err := pmm.MarshalMetrics(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("metrics leak %q", s)
			}
		}
	}
}
