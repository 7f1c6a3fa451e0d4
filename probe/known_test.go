package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/contract"
)

// methodLog records the JSON-RPC methods POSTed to a handler.
type methodLog struct {
	mu      sync.Mutex
	methods []string
}

func (l *methodLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var req struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &req)
			l.mu.Lock()
			l.methods = append(l.methods, req.Method)
			l.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

func (l *methodLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.methods
	l.methods = nil
	return m
}

// TestKnownGenerationSkipsDiscover: a probe told the server is
// initialize-era sends initialize first (one request that picks a backend
// behind a balancer) and takes the same snapshot.
func TestKnownGenerationSkipsDiscover(t *testing.T) {
	srv := newMCPServer(serverSpec{tools: 3, versions: legacyOnly})
	var log methodLog
	ts := httptest.NewServer(log.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	t.Cleanup(ts.Close)
	target := Target{URL: ts.URL + "/mcp"}

	full := mustProbe(t, target, fastOptions())
	if m := log.take(); len(m) < 2 || m[0] != "server/discover" || m[1] != "initialize" {
		t.Fatalf("without a hint: %v, want server/discover then initialize", m)
	}
	o := fastOptions()
	o.Known = Known{Generation: full.Snapshot.SpecGeneration, ProtocolVersion: full.Snapshot.ProtocolVersion}
	hinted := mustProbe(t, target, o)
	if m := log.take(); len(m) == 0 || m[0] != "initialize" {
		t.Fatalf("with the hint: %v, want initialize first and no server/discover", m)
	}
	if hinted.Snapshot.Digests.Contract != full.Snapshot.Digests.Contract {
		t.Errorf("the hint changed the contract: %s vs %s", hinted.Snapshot.Digests.Contract, full.Snapshot.Digests.Contract)
	}
}

// TestKnownGenerationStdio: a legacy stdio server that ignores
// server/discover costs DiscoverTimeout on every probe; with the hint it
// costs nothing (here the timeout is longer than the probe's).
func TestKnownGenerationStdio(t *testing.T) {
	o := fastOptions()
	o.DiscoverTimeout = time.Hour
	o.Timeout = 10 * time.Second
	o.Known = Known{Generation: contract.SpecStateful2025, ProtocolVersion: "2025-11-25"}
	res := mustProbe(t, stdioTarget(t, "deaf-to-discover"), o)
	if res.Snapshot.SpecGeneration != contract.SpecStateful2025 || len(res.Snapshot.Tools) != 2 {
		t.Fatalf("got %s with %d tools", res.Snapshot.SpecGeneration, len(res.Snapshot.Tools))
	}
}

// TestKnownGenerationStale: a hint that no longer holds (the server now
// speaks only 2026-07-28) fails the probe with a probe error; the caller
// then probes without it.
func TestKnownGenerationStale(t *testing.T) {
	url := serveHTTP(t, kindStateless, serverSpec{tools: 2, versions: modernOnly})
	o := fastOptions()
	o.Known = Known{Generation: contract.SpecStateful2025, ProtocolVersion: "2025-11-25"}
	_, err := Probe(t.Context(), Target{URL: url}, o)
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("a stale hint: %v, want a probe error", err)
	}
	o.Known = Known{}
	if res := mustProbe(t, Target{URL: url}, o); res.Snapshot.SpecGeneration != contract.SpecStateless2026 {
		t.Fatalf("without the hint: %s", res.Snapshot.SpecGeneration)
	}
}

// volatileServer lists one tool whose description changes on every
// tools/list (a rotating session URL).
type volatileServer struct{ n atomic.Int64 }

func (v *volatileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	faultServer{at: "tools/list", fault: func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		writeResult(w, id, fmt.Sprintf(`{"tools":[{"name":"a","description":"session %d","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}}]}`, v.n.Add(1)))
	}}.ServeHTTP(w, r)
}

// TestEquivalentSettles: listings that differ only where the caller says
// they may settle in two listings instead of MaxSettleRounds.
func TestEquivalentSettles(t *testing.T) {
	ts := httptest.NewServer(&volatileServer{})
	t.Cleanup(ts.Close)
	target := Target{URL: ts.URL + "/mcp"}
	o := fastOptions()
	o.Settle = time.Millisecond
	res := mustProbe(t, target, o)
	if res.Settled || res.Listings != DefaultMaxSettleRounds {
		t.Fatalf("without Equivalent: %d listings, settled %v; want %d, unsettled", res.Listings, res.Settled, DefaultMaxSettleRounds)
	}
	calls := 0
	o.Equivalent = func(kind contract.Kind, a, b contract.Listing) bool {
		calls++
		// Same tools, same schemas: the description may differ.
		if kind != contract.KindTool || len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i].Key != b[i].Key || (a[i].Key != "a" && a[i].Digest != b[i].Digest) {
				return false
			}
		}
		return true
	}
	res = mustProbe(t, target, o)
	if !res.Settled || res.Listings != 2 || calls != 1 {
		t.Fatalf("with Equivalent: %d listings (settled %v, %d calls); want 2, settled", res.Listings, res.Settled, calls)
	}
}
