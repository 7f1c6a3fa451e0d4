package proxy_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// relistServer is a go-sdk Streamable HTTP server behind a front that
// records the proxy's own requests (ids "mcpdrift-proxy-N") and the
// session id they carry. announce false: the server never sends
// list_changed (its tools capability says so).
type relistServer struct {
	srv         *mcp.Server
	url         string
	searchCalls atomic.Int64
	mu          sync.Mutex
	own         []string // Mcp-Session-Id of each of the proxy's requests
}

func newRelistServer(t *testing.T, announce bool) *relistServer {
	rs := &relistServer{}
	var opts *mcp.ServerOptions
	if !announce {
		opts = &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}}
	}
	rs.srv = mcp.NewServer(&mcp.Implementation{Name: "relisting", Version: "1"}, opts)
	rs.srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, count(new(atomic.Int64)))
	rs.srv.AddTool(&mcp.Tool{Name: "search", InputSchema: map[string]any{"type": "object"}}, count(&rs.searchCalls))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return rs.srv }, nil)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			if strings.Contains(string(b), `"id":"mcpdrift-proxy-`) {
				rs.mu.Lock()
				rs.own = append(rs.own, r.Header.Get("Mcp-Session-Id"))
				rs.mu.Unlock()
				changed.notify()
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	rs.url = up.URL
	return rs
}

func (rs *relistServer) ownRequests() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]string(nil), rs.own...)
}

// change gives search a new definition.
func (rs *relistServer) change() {
	rs.srv.AddTool(&mcp.Tool{Name: "search", InputSchema: map[string]any{"type": "object", "required": []string{"q"},
		"properties": map[string]any{"q": map[string]any{"type": "string"}}}}, count(&rs.searchCalls))
}

// relistClient connects a go-sdk client through an HTTP → HTTP proxy with
// --on-stale refuse and cfg's --relist-interval; changed receives the
// list_changed notifications the client gets.
func relistClient(t *testing.T, rs *relistServer, tel *telemetry, relist time.Duration, standalone bool) (cs *mcp.ClientSession, changed chan struct{}) {
	t.Helper()
	h, err := proxy.NewHandler(proxy.Config{Upstream: rs.url, Listen: "test", OnStale: proxy.OnStaleRefuse, RelistInterval: relist}, tel.Telemetry)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.Close(); h.Close() })
	changed = make(chan struct{}, 8)
	opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }}
	cs, err = mcp.NewClient(&mcp.Implementation{Name: "http-agent", Version: "1"}, opts).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL, DisableStandaloneSSE: !standalone}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return cs, changed
}

func callTool(t *testing.T, cs *mcp.ClientSession, tool string) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestHTTPRelistsOnAnnouncement: a list_changed the proxy sees on the
// session's GET stream starts its relist at once, with the session's
// headers, before any call asks for it; the next call is judged on it.
func TestHTTPRelistsOnAnnouncement(t *testing.T) {
	rs := newRelistServer(t, true)
	cs, changed := relistClient(t, rs, newTelemetry(t), 0, true)
	rs.change()
	waitChan(t, changed, "notifications/tools/list_changed")
	eventually(t, func() bool { return len(rs.ownRequests()) > 0 }, "the proxy's relist, with no call made")
	if own := rs.ownRequests(); own[0] != cs.ID() || cs.ID() == "" {
		t.Errorf("the relist went with Mcp-Session-Id %q, the session's is %q", own[0], cs.ID())
	}
	res := callTool(t, cs, "search")
	if sc, _ := res.StructuredContent.(map[string]any); !res.IsError || sc["error_code"] != semconv.RefusalStaleToolSchema {
		t.Errorf("the call after the announced change: %v", res.StructuredContent)
	}
	if n := rs.searchCalls.Load(); n != 0 {
		t.Errorf("the stale call reached the server: %d calls", n)
	}
}

// TestHTTPNotifiesUnannouncedChange: with --relist-interval, a relist that
// finds a change the server never announced sends the agent list_changed
// on its standing GET stream (counted as notified); an agent with no such
// stream cannot be told (counted as not notified). Either way the stale
// call is refused.
func TestHTTPNotifiesUnannouncedChange(t *testing.T) {
	for _, standalone := range []bool{true, false} {
		name := map[bool]string{true: "GET stream", false: "no GET stream"}[standalone]
		t.Run(name, func(t *testing.T) {
			rs := newRelistServer(t, false)
			tel := newTelemetry(t)
			cs, changed := relistClient(t, rs, tel, time.Nanosecond, standalone)
			if res := callTool(t, cs, "echo"); res.IsError {
				t.Fatalf("echo: %v", res.StructuredContent)
			}
			rs.change()
			res := callTool(t, cs, "search") // relists first: the change is found
			if sc, _ := res.StructuredContent.(map[string]any); !res.IsError || sc["error_code"] != semconv.RefusalStaleToolSchema {
				t.Errorf("the call after the unannounced change: %v", res.StructuredContent)
			}
			notified := attribute.Bool(semconv.ProxyAgentNotified, true)
			if standalone {
				waitChan(t, changed, "the proxy's notifications/tools/list_changed")
			} else {
				notified = attribute.Bool(semconv.ProxyAgentNotified, false)
			}
			if n := tel.counter(t, semconv.MetricProxyUnannouncedChanges, notified); n != 1 {
				t.Errorf("%s{%s} = %d, want 1", semconv.MetricProxyUnannouncedChanges, notified.Value.String(), n)
			}
			// The session's later calls pass once it listed again.
			if _, err := cs.ListTools(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			// Written for the new definition: arguments only the old one
			// takes are a stale plan still (TestHTTPRefusesOldPlanAfterRelist).
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"q": "x"}})
			if err != nil || res.IsError || rs.searchCalls.Load() != 1 {
				t.Errorf("search after the re-list: %v %v", err, res)
			}
			select {
			case <-changed:
				t.Error("the agent was told of the same change twice")
			default:
			}
		})
	}
}
