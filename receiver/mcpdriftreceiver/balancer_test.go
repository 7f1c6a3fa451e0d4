package mcpdriftreceiver

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testBalancer is a small HTTP load balancer (httputil.ReverseProxy) in front
// of two backends, one per contract, as the tests' stand-in for the
// balancers people run: it sends a share of picks to backend B, by seeded
// random choice or smooth weighted round robin, and picks per request, per
// client connection, or per MCP session (requests that carry a session ID go
// to the backend that issued it).
type testBalancer struct {
	affinity balancerAffinity
	proxies  [2]*httputil.ReverseProxy

	mu       sync.Mutex
	pick     *picker // the same picker the simulation uses
	share    float64
	sessions map[string]int // Mcp-Session-Id -> backend
	picks    [2]int
}

type balancerAffinity int

const (
	perRequest balancerAffinity = iota
	perConnection
	perSession
)

func (a balancerAffinity) String() string {
	return [...]string{"per request", "per connection", "per session"}[a]
}

// connPick is the backend a client connection was given (perConnection).
type connPick struct {
	once    sync.Once
	backend int
}

type connPickKey struct{}

// newTestBalancer serves backends a and b behind a balancer and returns it
// and its MCP endpoint.
func newTestBalancer(t testing.TB, a, b http.Handler, affinity balancerAffinity, robin bool, seed uint64) (*testBalancer, string) {
	t.Helper()
	lb := &testBalancer{affinity: affinity, pick: newPicker(robin, seed), sessions: map[string]int{}}
	for i, h := range []http.Handler{a, b} {
		backend := httptest.NewServer(h)
		t.Cleanup(backend.Close)
		u, _ := url.Parse(backend.URL)
		p := httputil.NewSingleHostReverseProxy(u)
		p.ErrorLog = log.New(io.Discard, "", 0) // clients that hang up (DELETE, the GET stream) are not errors here
		p.ModifyResponse = func(resp *http.Response) error {
			if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
				lb.mu.Lock()
				lb.sessions[sid] = i
				lb.mu.Unlock()
			}
			return nil
		}
		lb.proxies[i] = p
	}
	front := httptest.NewUnstartedServer(lb)
	front.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connPickKey{}, &connPick{})
	}
	front.Start()
	t.Cleanup(front.Close)
	return lb, front.URL + "/mcp"
}

// setShare sets the share of new picks that go to backend B.
func (lb *testBalancer) setShare(share float64) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	lb.share = share
}

func (lb *testBalancer) choose() int {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	b := 0
	if lb.pick.pickB(lb.share) {
		b = 1
	}
	lb.picks[b]++
	return b
}

func (lb *testBalancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var backend int
	switch lb.affinity {
	case perConnection:
		c := r.Context().Value(connPickKey{}).(*connPick)
		c.once.Do(func() { c.backend = lb.choose() })
		backend = c.backend
	case perSession:
		lb.mu.Lock()
		b, ok := lb.sessions[r.Header.Get("Mcp-Session-Id")]
		lb.mu.Unlock()
		if !ok {
			b = lb.choose()
		}
		backend = b
	default:
		backend = lb.choose()
	}
	lb.proxies[backend].ServeHTTP(w, r)
}

// sdkBackends are go-sdk Streamable HTTP handlers for contracts A and B (B
// adds a required parameter): stateful (sessions, initialize era, what
// session affinity is for) or stateless (2026-07-28, no sessions).
func sdkBackends(tb testing.TB, stateful bool) (a, b http.Handler) {
	opts := &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}
	if stateful {
		opts = &mcp.StreamableHTTPOptions{JSONResponse: true}
	}
	handler := func(required ...string) http.Handler {
		srv := newSDKServer("svc", sdkTool("search", "Search the web", required...))
		endSessions(tb, srv)
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts)
	}
	return handler("query"), handler("query", "filters")
}
