package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/proxy/internal/config"
	"github.com/mcpdrift/mcpdrift/proxy/internal/streamhttp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// oauthTransport adds the upstream's bearer token to every request and
// authorizes on a 401.
type oauthTransport struct {
	base     http.RoundTripper
	cfg      *config.OAuth
	upstream string
	client   *http.Client // for metadata, registration and tokens

	mu      sync.Mutex // one authorization at a time
	ts      oauth2.TokenSource
	gen     int       // up at every authorization
	refused time.Time // the server refused a token just issued: no new flow until refusedFor after
}

// refusedFor is how long after the upstream refused the token it had just
// had issued no new authorization starts: an upstream that refuses every
// token would otherwise send the user to consent at every request.
const refusedFor = time.Minute

func newOAuthTransport(base http.RoundTripper, cfg *config.OAuth, upstream string, timeout time.Duration) *oauthTransport {
	t := &oauthTransport{base: base, cfg: cfg, upstream: upstream,
		client: &http.Client{Transport: base, Timeout: max(timeout, 30*time.Second)}}
	if saved, err := t.load(); err == nil {
		c := saved.config()
		t.ts = t.persisting(c, c.TokenSource(t.clientContext(), saved.Token), saved.Token)
	}
	return t
}

// clientContext makes oauth2 refresh tokens over t.client.
func (t *oauthTransport) clientContext() context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, t.client)
}

func (t *oauthTransport) current() (oauth2.TokenSource, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ts, t.gen
}

func (t *oauthTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ts, gen := t.current()
	resp, err := t.base.RoundTrip(withToken(req, ts))
	if err != nil || !authorizationWanted(resp) {
		return resp, err
	}
	if !streamhttp.Replayable(req) {
		return resp, nil // cannot be sent again: the next request authorizes
	}
	if t.cooling() {
		resp.Body.Close()
		return nil, &authError{errors.New("the server refused the token it had just had issued; not asking the user again for " + refusedFor.String())}
	}
	if err := t.authorize(req, resp, gen); err != nil {
		return nil, &authError{err}
	}
	again := streamhttp.Resend(req)
	if again == nil {
		return nil, errors.New("the request's body cannot be sent again after the authorization")
	}
	ts, _ = t.current()
	resp, err = t.base.RoundTrip(withToken(again, ts))
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		t.mu.Lock()
		t.refused = time.Now()
		t.mu.Unlock()
	}
	return resp, err
}

// cooling reports whether the upstream refused a fresh token within the
// last refusedFor.
func (t *oauthTransport) cooling() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.refused.IsZero() && time.Since(t.refused) < refusedFor
}

// authorizationWanted reports whether resp asks for (more) authorization:
// a 401, or a 403 whose challenge says insufficient_scope (step-up); any
// other 403 is the server's answer.
func authorizationWanted(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return true
	case http.StatusForbidden:
		for _, v := range resp.Header.Values("WWW-Authenticate") {
			if strings.Contains(v, "insufficient_scope") {
				return true
			}
		}
	}
	return false
}

// authError is a failed authorization: the upstream is reachable, the
// proxy may not use it.
type authError struct{ err error }

func (e *authError) Error() string { return "authorization failed: " + e.err.Error() }
func (e *authError) Unwrap() error { return e.err }

// withToken is req with ts's token as its Authorization, or req itself
// without a token source. A token that cannot be had (a refresh the
// server refused) is left out: the 401 then starts a new authorization.
func withToken(req *http.Request, ts oauth2.TokenSource) *http.Request {
	if ts == nil {
		return req
	}
	tok, err := ts.Token()
	if err != nil {
		return req
	}
	r := req.Clone(req.Context())
	tok.SetAuthHeader(r)
	return r
}

// authorize runs the authorization flow for the request that resp
// refused, unless another request's flow ended since req was sent.
func (t *oauthTransport) authorize(req *http.Request, resp *http.Response, gen int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gen != gen {
		resp.Body.Close()
		return nil // authorized meanwhile: try the new token
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(t.cfg.RedirectPort)))
	if err != nil {
		resp.Body.Close()
		return fmt.Errorf("the loopback listener for the browser's redirect: %w", err)
	}
	redirect := "http://" + l.Addr().String() + "/callback"
	results := make(chan callback, 1)
	srv := &http.Server{Handler: callbackHandler(results), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()

	var ts oauth2.TokenSource
	hc := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: t.fetcher(results),
		RequestRefreshToken:      t.cfg.Store != "",
		Client:                   t.client,
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			t.save(c, tok)
			ts = t.persisting(c, c.TokenSource(context.WithoutCancel(ctx), tok), tok)
			return ts, nil
		},
	}
	if t.cfg.ClientID != "" {
		hc.PreregisteredClient = &oauthex.ClientCredentials{ClientID: t.cfg.ClientID}
		if t.cfg.ClientSecret != "" {
			hc.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: t.cfg.ClientSecret}
		}
	} else {
		hc.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName:              "mcpdrift proxy",
			RedirectURIs:            []string{redirect},
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}}
	}
	h, err := auth.NewAuthorizationCodeHandler(hc)
	if err != nil {
		resp.Body.Close()
		return err
	}
	if err := h.Authorize(req.Context(), req, resp); err != nil {
		return err
	}
	if ts != nil {
		t.ts = ts
	}
	t.gen++
	return nil
}

// fetcher shows the user the authorization URL and waits for the browser's
// redirect to the loopback listener.
func (t *oauthTransport) fetcher(results <-chan callback) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		if err := t.cfg.Open(args.URL); err != nil {
			return nil, fmt.Errorf("showing the authorization URL: %w", err)
		}
		wait := t.cfg.Timeout
		if wait <= 0 {
			wait = 5 * time.Minute
		}
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case r := <-results:
			if r.err != "" {
				return nil, fmt.Errorf("the authorization server refused: %s", r.err)
			}
			return &auth.AuthorizationResult{Code: r.code, State: r.state, Iss: r.iss}, nil
		case <-timer.C:
			return nil, fmt.Errorf("no authorization within %s", wait)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// callback is what the browser's redirect brought.
type callback struct{ code, state, iss, err string }

// callbackHandler takes the first redirect to /callback and tells the
// user they can go back to their agent.
func callbackHandler(results chan<- callback) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		c := callback{code: q.Get("code"), state: q.Get("state"), iss: q.Get("iss"), err: q.Get("error")}
		if c.err != "" {
			if d := q.Get("error_description"); d != "" {
				c.err += ": " + d
			}
		} else if c.code == "" {
			c.err = "no authorization code in the redirect"
		}
		select {
		case results <- c:
		default: // a second redirect: the first one counts
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		msg := "Authorized. You can close this window and go back to your agent."
		if c.err != "" {
			msg = "Not authorized: " + c.err
		}
		fmt.Fprintf(w, "<!doctype html><title>mcpdrift proxy</title><p>%s</p>\n", html.EscapeString(msg))
	})
	return mux
}

// savedToken is what the store keeps for an upstream: the token and what
// refreshing it takes.
type savedToken struct {
	Upstream     string        `json:"upstream"`
	ClientID     string        `json:"client_id"`
	ClientSecret string        `json:"client_secret,omitempty"`
	TokenURL     string        `json:"token_url"`
	AuthStyle    int           `json:"auth_style,omitempty"`
	Token        *oauth2.Token `json:"token"`
}

func (s *savedToken) config() *oauth2.Config {
	return &oauth2.Config{ClientID: s.ClientID, ClientSecret: s.ClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: s.TokenURL, AuthStyle: oauth2.AuthStyle(s.AuthStyle)}}
}

// storeFile is the upstream's file in the store.
func (t *oauthTransport) storeFile() string { return t.cfg.TokenFile(t.upstream) }

func (t *oauthTransport) load() (*savedToken, error) {
	if t.cfg.Store == "" {
		return nil, errors.New("no store")
	}
	b, err := os.ReadFile(t.storeFile())
	if err != nil {
		return nil, err
	}
	var s savedToken
	if err := json.Unmarshal(b, &s); err != nil || s.Upstream != t.upstream || s.Token == nil {
		return nil, errors.New("not this upstream's token")
	}
	return &s, nil
}

// save writes the token to the store (readable by the user alone,
// replaced whole); failing to keep it costs a new authorization next run,
// nothing more.
func (t *oauthTransport) save(c *oauth2.Config, tok *oauth2.Token) {
	if t.cfg.Store == "" {
		return
	}
	b, err := json.Marshal(&savedToken{Upstream: t.upstream, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
		TokenURL: c.Endpoint.TokenURL, AuthStyle: int(c.Endpoint.AuthStyle), Token: tok})
	if err != nil || os.MkdirAll(t.cfg.Store, 0o700) != nil {
		return
	}
	f, err := os.CreateTemp(t.cfg.Store, ".token-*")
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), t.storeFile()) != nil {
		os.Remove(f.Name())
	}
}

// persisting saves every new token src gives after first (a refresh) to
// the store, with c, what refreshing it takes.
func (t *oauthTransport) persisting(c *oauth2.Config, src oauth2.TokenSource, first *oauth2.Token) oauth2.TokenSource {
	if t.cfg.Store == "" {
		return src
	}
	return &persistingSource{src: src, t: t, c: c, last: first.AccessToken}
}

type persistingSource struct {
	src oauth2.TokenSource
	t   *oauthTransport
	c   *oauth2.Config

	mu   sync.Mutex
	last string
}

func (p *persistingSource) Token() (*oauth2.Token, error) {
	tok, err := p.src.Token()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if tok.AccessToken != p.last {
		p.t.save(p.c, tok)
		p.last = tok.AccessToken
	}
	return tok, nil
}
