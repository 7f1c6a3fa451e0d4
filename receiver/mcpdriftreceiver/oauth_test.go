package mcpdriftreceiver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/oauth2clientauthextension"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpdrift/mcpdrift/semconv"
)

// Targets behind OAuth 2.0 client credentials use the contrib oauth2client
// extension (v0.161.0, which links with the v0.165 core): these tests run it
// against a token endpoint of their own on loopback, in front of an MCP
// server that accepts only the tokens it issued.

const (
	oauthClientID = "mcpdrift-probe"
	oauthSecret   = "client-secret-4455667788"
)

// tokenEndpoint issues access tokens for the client credentials grant, each
// valid for lifetime; fail makes it refuse the client, echoing what it sent.
type tokenEndpoint struct {
	mu       sync.Mutex
	issued   []string
	lifetime time.Duration
	fail     bool
}

func (e *tokenEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if e.fail || r.PostForm.Get("grant_type") != "client_credentials" || id != oauthClientID || secret != oauthSecret {
		w.WriteHeader(http.StatusUnauthorized)
		// A careless endpoint that repeats what it received.
		fmt.Fprintf(w, `{"error":"invalid_client","error_description":"bad credentials %s:%s"}`, id, secret)
		return
	}
	tok := fmt.Sprintf("access-token-%d-0123456789", len(e.issued)+1)
	e.issued = append(e.issued, tok)
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(e.lifetime.Seconds())})
}

func (e *tokenEndpoint) tokens() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.issued...)
}

// requireToken lets through only requests bearing an issued token.
func requireToken(e *tokenEndpoint, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, tok := range e.tokens() {
			if r.Header.Get("Authorization") == "Bearer "+tok {
				next.ServeHTTP(w, r)
				return
			}
		}
		w.WriteHeader(http.StatusUnauthorized)
	})
}

type oauthRun struct {
	tokens *tokenEndpoint
	logs   *consumertest.LogsSink
	logged *observer.ObservedLogs
	srv    *echoServer
	r      *driftReceiver
}

func runOAuth(t *testing.T, lifetime, buffer time.Duration) *oauthRun {
	t.Helper()
	run := &oauthRun{tokens: &tokenEndpoint{lifetime: lifetime}, srv: &echoServer{}}
	tokenSrv := httptest.NewServer(run.tokens)
	t.Cleanup(tokenSrv.Close)
	mcpSrv := httptest.NewServer(requireToken(run.tokens, run.srv))
	t.Cleanup(mcpSrv.Close)

	f := oauth2clientauthextension.NewFactory()
	ocfg := f.CreateDefaultConfig().(*oauth2clientauthextension.Config)
	ocfg.ClientID, ocfg.ClientSecret, ocfg.TokenURL, ocfg.ExpiryBuffer = oauthClientID, oauthSecret, tokenSrv.URL+"/token", buffer
	id := component.MustNewID("oauth2client")
	host := hostWith(t, id, f, ocfg)

	target := httpTarget("oauth", mcpSrv.URL+"/mcp")
	target.Auth = configoptional.Some(configauth.Config{AuthenticatorID: id})
	cfg := e2eConfig(target)
	core, logged := observer.New(zapcore.DebugLevel)
	set := receiverSettings()
	set.Logger = zap.New(core)
	r, err := newDriftReceiver(set, cfg, newProber(cfg))
	if err != nil {
		t.Fatal(err)
	}
	run.logs = new(consumertest.LogsSink)
	r.setLogs(run.logs)
	if err := r.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
	run.r, run.logged = r, logged
	return run
}

// leaks fails when a secret or an issued token appears in the receiver's
// log or events.
func (run *oauthRun) leaks(t *testing.T) {
	t.Helper()
	secrets := append([]string{oauthSecret}, run.tokens.tokens()...)
	check := func(what, text string) {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s leaks %q: %.300s", what, s, text)
			}
		}
	}
	for _, e := range run.logged.All() {
		check("the collector log", fmt.Sprint(e.Message, e.ContextMap()))
	}
	var m plog.JSONMarshaler
	for _, l := range run.logs.AllLogs() {
		b, _ := m.MarshalLogs(l)
		check("the events", string(b))
	}
}

// TestOAuthTarget: the token is fetched once and reused across probes,
// refreshed when it expires, and neither it nor the client secret leaves
// the receiver, although the server echoes the Authorization header into
// its contract.
func TestOAuthTarget(t *testing.T) {
	t.Run("cached", func(t *testing.T) {
		run := runOAuth(t, time.Hour, time.Minute)
		waitFor(t, "a snapshot", func() bool { return len(eventsNamed(run.logs, semconv.EventSnapshot)) == 1 })
		probes := run.r.targets[0].probes.Load()
		waitFor(t, "more probes", func() bool { return run.r.targets[0].probes.Load() >= probes+10 })
		if n := len(run.tokens.tokens()); n != 1 {
			t.Errorf("%d tokens requested for %d probes, want 1 (cached)", n, run.r.targets[0].probes.Load())
		}
		snap := eventsNamed(run.logs, semconv.EventSnapshot)[0]
		if v, _ := snap.Attributes().Get(semconv.ServerInfoName); !strings.Contains(v.Str(), "Authorization=[REDACTED]") {
			t.Errorf("the echoed token should read [REDACTED]: %q", v.Str())
		}
		run.srv.version.Store(1) // drift: the token is echoed in new definitions too
		waitFor(t, "a drift", func() bool { return len(eventsNamed(run.logs, semconv.EventDrift)) == 1 })
		run.leaks(t)
	})
	t.Run("refreshed", func(t *testing.T) {
		// x/oauth2 takes a token as expired 10s early: 11s lives one second.
		run := runOAuth(t, 11*time.Second, 0)
		waitFor(t, "a refreshed token", func() bool { return len(run.tokens.tokens()) >= 2 })
		last := run.r.targets[0].probes.Load()
		waitFor(t, "probes with it", func() bool { return run.r.targets[0].probes.Load() >= last+3 })
		if class := run.r.targets[0].lastErrorClass(); class != "none" {
			t.Errorf("probes after the refresh: %s", class)
		}
		run.leaks(t)
	})
	t.Run("refused", func(t *testing.T) {
		run := runOAuth(t, time.Hour, time.Minute)
		run.tokens.mu.Lock()
		run.tokens.fail = true
		run.tokens.mu.Unlock()
		waitFor(t, "the failure", func() bool { return len(run.logged.FilterMessage("MCP server probe failed").All()) == 1 })
		if n := len(eventsNamed(run.logs, semconv.EventSnapshot)); n != 0 {
			t.Errorf("%d snapshots without a token", n)
		}
		run.leaks(t)
		t.Logf("logged: %v", run.logged.FilterMessage("MCP server probe failed").All()[0].ContextMap())
	})
}
