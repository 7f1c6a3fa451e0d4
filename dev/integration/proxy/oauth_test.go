package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// browser stands in for the user's browser: it follows the authorization
// URL to the authorization server, which consents at once and redirects it
// to the proxy's loopback callback.
type browser struct {
	opened atomic.Int32
	errs   chan error
	visit  func(authURL string) error
}

func newBrowser() *browser {
	b := &browser{errs: make(chan error, 4)}
	b.visit = func(authURL string) error {
		res, err := http.Get(authURL) // follows the redirect to the callback
		if err != nil {
			return err
		}
		res.Body.Close()
		return nil
	}
	return b
}

func (b *browser) open(authURL string) error {
	b.opened.Add(1)
	go func() { b.errs <- b.visit(authURL) }()
	return nil
}

// TestOAuthStdioToHTTP: the stdio → HTTP proxy reaches an MCP server that
// wants OAuth (the TypeScript SDK's own example server and its demo
// authorization server): the agent's initialize gets the 401, the proxy
// registers itself, sends the user to the authorization URL, takes the
// code at its loopback callback, gets a token and sends the initialize
// again; the agent lists and calls as usual. The token is kept in the
// store, readable by the user alone, and never written to stderr; a second
// run uses it without asking the user again.
func TestOAuthStdioToHTTP(t *testing.T) {
	upstream := testservers.SDKOAuthServer(t)
	store := filepath.Join(t.TempDir(), "oauth")
	b := newBrowser()
	p := startUpstream(t, proxy.Config{Upstream: upstream, OAuth: &proxy.OAuth{Store: store, Open: b.open}}, newTelemetry(t))
	a := connectAgent(t, p)
	res := a.call(t, "greet", map[string]any{"name": "drift"})
	if tc, _ := res.Content[0].(*mcp.TextContent); tc == nil || !strings.Contains(tc.Text, "drift") {
		t.Errorf("greet answered %v", res.Content)
	}
	if err := <-b.errs; err != nil {
		t.Fatalf("the browser: %v", err)
	}
	if n := b.opened.Load(); n != 1 {
		t.Errorf("the user was sent to authorize %d times, want 1", n)
	}
	files, _ := filepath.Glob(filepath.Join(store, "*.json"))
	if len(files) != 1 {
		t.Fatalf("%d token files in the store, want 1", len(files))
	}
	info, err := os.Stat(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", info.Mode().Perm())
	}
	p.hangUp(t, a)
	saved, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var kept struct {
		Token struct {
			AccessToken string `json:"access_token"`
		} `json:"token"`
	}
	if err := json.Unmarshal(saved, &kept); err != nil || kept.Token.AccessToken == "" {
		t.Fatalf("the stored token: %v %s", err, saved)
	}
	if strings.Contains(p.stderr.String(), kept.Token.AccessToken) {
		t.Error("the proxy's stderr shows the token")
	}

	again := newBrowser()
	p = startUpstream(t, proxy.Config{Upstream: upstream, OAuth: &proxy.OAuth{Store: store, Open: again.open}}, newTelemetry(t))
	a = connectAgent(t, p)
	a.call(t, "greet", map[string]any{"name": "again"})
	if n := again.opened.Load(); n != 0 {
		t.Errorf("a second run sent the user to authorize %d times, want 0 (the stored token)", n)
	}
	p.hangUp(t, a)
}

// TestOAuthRefused: a user who refuses (the authorization server redirects
// with error=access_denied) gets the agent an error naming the upstream
// and why, at once, not a hang; nothing is stored.
func TestOAuthRefused(t *testing.T) {
	upstream := testservers.SDKOAuthServer(t)
	store := filepath.Join(t.TempDir(), "oauth")
	b := newBrowser()
	b.visit = func(authURL string) error {
		u, err := url.Parse(authURL)
		if err != nil {
			return err
		}
		q := u.Query()
		cb, _ := url.Parse(q.Get("redirect_uri"))
		cb.RawQuery = url.Values{"error": {"access_denied"}, "error_description": {"the user said no"}, "state": {q.Get("state")}}.Encode()
		res, err := http.Get(cb.String())
		if err != nil {
			return err
		}
		res.Body.Close()
		return nil
	}
	p := startUpstream(t, proxy.Config{Upstream: upstream, OAuth: &proxy.OAuth{Store: store, Open: b.open}}, newTelemetry(t))
	c := mcp.NewClient(&mcp.Implementation{Name: "gate-agent", Version: "1"}, nil)
	_, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: io.NopCloser(p.out), Writer: p.in}, nil)
	if err == nil || !strings.Contains(err.Error(), "authorization failed: the authorization server refused: access_denied: the user said no") ||
		!strings.Contains(err.Error(), "localhost") || strings.Contains(err.Error(), "unreachable") {
		t.Errorf("initialize: %v, want the refusal, naming the upstream", err)
	}
	if files, _ := filepath.Glob(filepath.Join(store, "*.json")); len(files) != 0 {
		t.Errorf("a refused authorization stored %v", files)
	}
}

// TestOAuthRefreshKept: a stored token that has expired is refreshed with
// its refresh token at the token endpoint it came from (a stand-in here:
// the SDK's demo authorization server does not refresh), the call goes
// with the new token, the user is not asked, and the store keeps the new
// token for the next run.
func TestOAuthRefreshKept(t *testing.T) {
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ParseForm() != nil || r.Form.Get("grant_type") != "refresh_token" || r.Form.Get("refresh_token") != "r1" {
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"a2","token_type":"Bearer","expires_in":3600,"refresh_token":"r2"}`)
	}))
	defer tokens.Close()
	srv := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var refused atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer a2" {
			refused.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	defer up.Close()

	store := t.TempDir()
	b := newBrowser()
	o := &proxy.OAuth{Store: store, Open: b.open}
	file := o.TokenFile(up.URL)
	expired, _ := json.Marshal(map[string]any{"upstream": up.URL, "client_id": "c1", "token_url": tokens.URL,
		"token": map[string]any{"access_token": "a1", "token_type": "Bearer", "refresh_token": "r1", "expiry": time.Now().Add(-time.Hour)}})
	if err := os.WriteFile(file, expired, 0o600); err != nil {
		t.Fatal(err)
	}
	p := startUpstream(t, proxy.Config{Upstream: up.URL, OAuth: o}, newTelemetry(t))
	a := connectAgent(t, p)
	a.call(t, "echo", nil)
	p.hangUp(t, a)
	if n, r := b.opened.Load(), refused.Load(); n != 0 || r != 0 {
		t.Errorf("the user was asked %d times, the upstream refused %d requests; want neither", n, r)
	}
	kept, _ := os.ReadFile(file)
	if !strings.Contains(string(kept), `"access_token":"a2"`) || !strings.Contains(string(kept), `"refresh_token":"r2"`) {
		t.Errorf("the store kept %s, want the refreshed token", kept)
	}
}

// TestOAuthTokenRefused: an upstream that refuses even the token its
// authorization server has just issued (here, one that names the SDK demo's
// authorization server but accepts no token) gets one authorization, not
// one per request: after the refusal the agent's requests fail at once with
// an error saying why, and the user is not sent to consent again.
func TestOAuthTokenRefused(t *testing.T) {
	authServer := sdkAuthorizationServer(t, testservers.SDKOAuthServer(t))
	var up *httptest.Server
	up = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"resource": up.URL + "/mcp", "authorization_servers": []string{authServer}})
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+up.URL+`/.well-known/oauth-protected-resource/mcp"`)
		http.Error(w, "no token is good enough", http.StatusUnauthorized)
	}))
	defer up.Close()
	b := newBrowser()
	p := startUpstream(t, proxy.Config{Upstream: up.URL + "/mcp", OAuth: &proxy.OAuth{Open: b.open}}, newTelemetry(t))
	for id := 1; id <= 3; id++ {
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`, id))
		answer := p.recvID(t, fmt.Sprint(id))
		if !strings.Contains(answer, `"error"`) {
			t.Fatalf("initialize %d: %s", id, answer)
		}
		if id > 1 && !strings.Contains(answer, "refused the token it had just had issued") {
			t.Errorf("initialize %d: %s, want the reason", id, answer)
		}
	}
	if n := b.opened.Load(); n != 1 {
		t.Errorf("the user was sent to consent %d times, want 1", n)
	}
}

// sdkAuthorizationServer is the authorization server the SDK example
// server's protected resource metadata names.
func sdkAuthorizationServer(t *testing.T, mcpURL string) string {
	t.Helper()
	u, _ := url.Parse(mcpURL)
	res, err := http.Get(u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource" + u.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var prm struct {
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := json.NewDecoder(res.Body).Decode(&prm); err != nil || len(prm.AuthorizationServers) == 0 {
		t.Fatalf("protected resource metadata: %v %+v", err, prm)
	}
	return prm.AuthorizationServers[0]
}

// TestOAuthLegacySSE: --oauth over the deprecated HTTP+SSE transport: a
// go-sdk SSE server that checks bearer tokens with the SDK demo's
// authorization server (its introspection endpoint) and names it in its
// protected resource metadata. The stream's GET gets the 401, the user
// consents once, and the stream and every message posted to its endpoint
// carry the token.
func TestOAuthLegacySSE(t *testing.T) {
	authServer := sdkAuthorizationServer(t, testservers.SDKOAuthServer(t))
	srv := mcp.NewServer(&mcp.Implementation{Name: "guarded-sse", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
		})
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var up *httptest.Server
	var unauthorized atomic.Int32
	up = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/sse" {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"resource": up.URL + "/sse", "authorization_servers": []string{authServer}})
			return
		}
		if !introspected(t, authServer, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")) {
			unauthorized.Add(1)
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+up.URL+`/.well-known/oauth-protected-resource/sse"`)
			http.Error(w, "a token, please", http.StatusUnauthorized)
			return
		}
		sse.ServeHTTP(w, r)
	}))
	defer up.Close()
	b := newBrowser()
	p := startUpstream(t, proxy.Config{Upstream: up.URL + "/sse", UpstreamTransport: proxy.TransportSSE, OAuth: &proxy.OAuth{Open: b.open}}, newTelemetry(t))
	a := connectAgent(t, p)
	res := a.call(t, "echo", nil)
	if tc, _ := res.Content[0].(*mcp.TextContent); tc == nil || tc.Text != "ran" {
		t.Errorf("echo answered %v", res.Content)
	}
	p.hangUp(t, a)
	if n, u := b.opened.Load(), unauthorized.Load(); n != 1 || u != 1 {
		t.Errorf("the user consented %d times and %d requests came without a good token; want 1 and 1 (the first GET)", n, u)
	}
}

// introspected asks the authorization server whether token is active.
func introspected(t *testing.T, authServer, token string) bool {
	if token == "" {
		return false
	}
	res, err := http.PostForm(strings.TrimSuffix(authServer, "/")+"/introspect", url.Values{"token": {token}})
	if err != nil {
		t.Error(err)
		return false
	}
	defer res.Body.Close()
	var out struct {
		Active bool `json:"active"`
	}
	return json.NewDecoder(res.Body).Decode(&out) == nil && out.Active
}
