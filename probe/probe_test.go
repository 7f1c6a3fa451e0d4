package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/mcpdrift/mcpdrift/contract"
)

// fastOptions keep tests quick with a short settle window, and their
// budgets generous: no test with them is about a timeout, and 60
// concurrent probes at load 50 had requests outlast 5 s.
func fastOptions() Options {
	return Options{Timeout: 2 * time.Minute, RequestTimeout: time.Minute, Settle: 30 * time.Millisecond}
}

func mustProbe(t *testing.T, target Target, o Options) *Result {
	t.Helper()
	res, err := ProbeResult(context.Background(), target, o)
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	return res
}

// checkCatalogue checks a snapshot of newMCPServer(serverSpec{tools: n}).
func checkCatalogue(t *testing.T, s *contract.Snapshot, n int, transport string, gen contract.SpecGeneration, version string) {
	t.Helper()
	if s.Server.Transport != transport || s.SpecGeneration != gen || s.ProtocolVersion != version {
		t.Errorf("got transport %q generation %q version %q, want %q %q %q", s.Server.Transport, s.SpecGeneration, s.ProtocolVersion, transport, gen, version)
	}
	want := expectedToolDigests(t, n)
	if got := s.Tools.SetDigest(); got != want.SetDigest() {
		t.Errorf("tools set digest %s, want %s (%d tools listed, %d expected)", got, want.SetDigest(), len(s.Tools), n)
	}
	if len(s.Prompts) != 1 || len(s.Resources) != 1 || len(s.ResourceTemplates) != 1 {
		t.Errorf("got %d prompts, %d resources, %d templates, want 1 each", len(s.Prompts), len(s.Resources), len(s.ResourceTemplates))
	}
	if s.Instructions == nil || *s.Instructions != "Use the catalogue tools." {
		t.Errorf("instructions %v", s.Instructions)
	}
	var info struct{ Name string }
	if err := json.Unmarshal(s.ServerInfo, &info); err != nil || info.Name != "probe-test" {
		t.Errorf("server info %s", s.ServerInfo)
	}
	if string(s.ClientCapabilities) != DefaultClientCapabilities {
		t.Errorf("client capabilities %s, want %s", s.ClientCapabilities, DefaultClientCapabilities)
	}
	// The snapshot must survive its own encoding (digests re-derive).
	data, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := contract.DecodeSnapshot(data)
	if err != nil {
		t.Fatalf("decoding the snapshot: %v", err)
	}
	if back.Digests.Contract != s.Digests.Contract {
		t.Errorf("contract digest changed through encoding")
	}
}

func TestGenerationsAndTransports(t *testing.T) {
	verifyNoLeaks(t)
	const n = 12
	cases := []struct {
		name, kind string
		versions   []string
		transport  Transport
		want       string
		gen        contract.SpecGeneration
		version    string
	}{
		{"stateless 2026 HTTP", kindStateless, modernOnly, TransportAuto, contract.TransportStreamableHTTP, contract.SpecStateless2026, "2026-07-28"},
		{"dual-era HTTP picks 2026", kindStateless, nil, TransportAuto, contract.TransportStreamableHTTP, contract.SpecStateless2026, "2026-07-28"},
		{"stateful 2025 HTTP, SSE responses", kindStateful, legacyOnly, TransportAuto, contract.TransportStreamableHTTP, contract.SpecStateful2025, "2025-11-25"},
		{"stateful 2025 HTTP, JSON responses", kindJSON, legacyOnly, TransportStreamableHTTP, contract.TransportStreamableHTTP, contract.SpecStateful2025, "2025-11-25"},
		{"legacy SSE, auto-detected", kindSSE, legacyOnly, TransportAuto, contract.TransportSSE, contract.SpecStateful2025, "2025-11-25"},
		{"legacy SSE, explicit", kindSSE, legacyOnly, TransportSSE, contract.TransportSSE, contract.SpecStateful2025, "2025-11-25"},
		{"legacy-only server limited to 2024-11-05", kindSSE, []string{"2024-11-05"}, TransportAuto, contract.TransportSSE, contract.SpecStateful2025, "2024-11-05"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := serveHTTP(t, c.kind, serverSpec{tools: n, versions: c.versions})
			res := mustProbe(t, Target{URL: url, Transport: c.transport}, fastOptions())
			checkCatalogue(t, res.Snapshot, n, c.want, c.gen, c.version)
			if !res.Settled {
				t.Errorf("not settled after %d listings", res.Listings)
			}
		})
	}
	for _, mode := range []string{"modern", "legacy"} {
		t.Run("stdio "+mode, func(t *testing.T) {
			target := stdioTarget(t, mode, "PROBE_TEST_TOOLS="+strconv.Itoa(n))
			res := mustProbe(t, target, fastOptions())
			gen, version := contract.SpecStateless2026, "2026-07-28"
			if mode == "legacy" {
				gen, version = contract.SpecStateful2025, "2025-11-25"
			}
			checkCatalogue(t, res.Snapshot, n, contract.TransportStdio, gen, version)
		})
	}
}

// A legacy stdio server may ignore server/discover (after DiscoverTimeout
// the probe falls back to initialize: the spec's "times out" case) or answer
// it with an error without id (it could not read the request).
func TestStdioLegacyDiscoverAnswers(t *testing.T) {
	for _, mode := range []string{"deaf-to-discover", "null-id-on-discover"} {
		t.Run(mode, func(t *testing.T) {
			o := fastOptions()
			o.DiscoverTimeout = 200 * time.Millisecond
			res := mustProbe(t, stdioTarget(t, mode), o)
			if res.Snapshot.SpecGeneration != contract.SpecStateful2025 || len(res.Snapshot.Tools) != 2 {
				t.Fatalf("got %s with %d tools", res.Snapshot.SpecGeneration, len(res.Snapshot.Tools))
			}
		})
	}
}

// Static headers and TLS: the probe trusts the configured CA, sends the
// configured headers, and works with an injected client too.
func TestHeadersAndTLS(t *testing.T) {
	verifyNoLeaks(t)
	srv := newMCPServer(serverSpec{tools: 2})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "key-0123456789" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	headers := http.Header{"X-Api-Key": {"key-0123456789"}}

	res := mustProbe(t, Target{URL: ts.URL + "/mcp", Headers: headers, TLS: &tls.Config{RootCAs: pool}}, fastOptions())
	if len(res.Snapshot.Tools) != 2 || !strings.HasPrefix(res.Snapshot.Server.URL, "https://") {
		t.Errorf("got %d tools from %s", len(res.Snapshot.Tools), res.Snapshot.Server.URL)
	}
	res = mustProbe(t, Target{URL: ts.URL + "/mcp", Headers: headers, HTTPClient: ts.Client()}, fastOptions())
	if len(res.Snapshot.Tools) != 2 {
		t.Errorf("injected client: %d tools", len(res.Snapshot.Tools))
	}
	// Both fail at once; generous timeouts keep a loaded machine's slow
	// TLS handshake from turning them into timeouts.
	expectFailure(t, Target{URL: ts.URL + "/mcp", Headers: headers}, fastOptions(), ClassUnreachable, StepDiscover)
	expectFailure(t, Target{URL: ts.URL + "/mcp", TLS: &tls.Config{RootCAs: pool}}, fastOptions(), ClassAuthRequired, StepDiscover)
}

// Every transport and generation must agree on the digests of the same definitions.
func TestSameServerSameDigests(t *testing.T) {
	spec := serverSpec{tools: 5}
	var contracts []string
	for _, kind := range []string{kindStateless, kindStateful, kindSSE} {
		res := mustProbe(t, Target{URL: serveHTTP(t, kind, spec)}, fastOptions())
		contracts = append(contracts, res.Snapshot.Digests.Tools+res.Snapshot.Digests.Prompts+res.Snapshot.Digests.Resources)
	}
	for i := 1; i < len(contracts); i++ {
		if contracts[i] != contracts[0] {
			t.Errorf("listing digests differ between transports: %v", contracts)
		}
	}
}

func TestPagination(t *testing.T) {
	for _, kind := range []string{kindStateless, kindStateful} {
		t.Run(kind, func(t *testing.T) {
			url := serveHTTP(t, kind, serverSpec{tools: 53, pageSize: 7})
			res := mustProbe(t, Target{URL: url}, fastOptions())
			if len(res.Snapshot.Tools) != 53 {
				t.Fatalf("listed %d tools over pages of 7, want 53", len(res.Snapshot.Tools))
			}
			if res.Snapshot.Tools.SetDigest() != expectedToolDigests(t, 53).SetDigest() {
				t.Error("paginated listing digest differs")
			}
		})
	}
}

// A server that adds tools while it is being probed: the probe keeps
// listing until two listings agree, and every snapshot is the final one.
func TestSettlesOnChangingServer(t *testing.T) {
	for _, kind := range []string{kindStateless, kindStateful, kindSSE} {
		t.Run(kind, func(t *testing.T) {
			url := serveHTTP(t, kind, serverSpec{tools: 3, grow: 4})
			o := fastOptions()
			o.Settle = 100 * time.Millisecond
			res := mustProbe(t, Target{URL: url}, o)
			if len(res.Snapshot.Tools) != 7 || !res.Settled || res.Listings < 3 {
				t.Fatalf("got %d tools after %d listings (settled %v), want 7 after at least 3", len(res.Snapshot.Tools), res.Listings, res.Settled)
			}
			if res.ListChanged == 0 {
				t.Errorf("the server announced the change; the probe heard no list_changed")
			}
		})
	}
	t.Run("settling disabled", func(t *testing.T) {
		url := serveHTTP(t, kindStateless, serverSpec{tools: 3, grow: 4})
		o := fastOptions()
		o.Settle = 0
		res := mustProbe(t, Target{URL: url}, o)
		if res.Listings != 1 || res.Settled || len(res.Snapshot.Tools) != 3 {
			t.Fatalf("got %d listings, settled %v, %d tools; want one unsettled listing of 3", res.Listings, res.Settled, len(res.Snapshot.Tools))
		}
	})
}

// SettleOnChange lists a quiet server once, and settles one that announces
// a change by the end of the first listing, as Settle alone would.
func TestSettleOnChange(t *testing.T) {
	t.Run("quiet server", func(t *testing.T) {
		url := serveHTTP(t, kindStateless, serverSpec{tools: 3})
		o := fastOptions()
		o.SettleOnChange = true
		res := mustProbe(t, Target{URL: url}, o)
		if res.Listings != 1 || res.Settled || len(res.Snapshot.Tools) != 3 {
			t.Fatalf("got %d listings, settled %v, %d tools; want one unsettled listing of 3", res.Listings, res.Settled, len(res.Snapshot.Tools))
		}
	})
	t.Run("change announced", func(t *testing.T) {
		ts := httptest.NewServer(&announcingServer{})
		t.Cleanup(ts.Close)
		o := faultOptions()
		o.SettleOnChange = true
		res := mustProbe(t, Target{URL: ts.URL + "/mcp"}, o)
		if res.Listings < 2 || !res.Settled || len(res.Snapshot.Tools) != 2 || res.ListChanged == 0 {
			t.Fatalf("got %d listings, settled %v, %d tools, %d list_changed; want the settled listing of 2 after the announced change",
				res.Listings, res.Settled, len(res.Snapshot.Tools), res.ListChanged)
		}
	})
}

func TestClientCapabilitiesRecorded(t *testing.T) {
	url := serveHTTP(t, kindStateless, serverSpec{tools: 1})
	caps := json.RawMessage(`{ "roots": {"listChanged": true} }`)
	res := mustProbe(t, Target{URL: url, ClientCapabilities: caps}, fastOptions())
	if got := string(res.Snapshot.ClientCapabilities); got != `{"roots":{"listChanged":true}}` {
		t.Errorf("recorded client capabilities %s", got)
	}
	if _, err := Probe(context.Background(), Target{URL: url, ClientCapabilities: json.RawMessage(`[1]`)}, fastOptions()); err == nil || isProbeError(err) {
		t.Errorf("capabilities that are not an object: got %v, want a configuration error", err)
	}
}

func TestInvalidTargets(t *testing.T) {
	for _, tc := range []Target{
		{},
		{URL: "ftp://example.com/mcp"},
		{URL: "http://example.com/mcp", Command: "node"},
		{URL: "http://example.com/mcp", Transport: "websocket"},
		{Command: "node", Env: []string{"NOEQUALS"}},
	} {
		if _, err := Probe(context.Background(), tc, Options{}); err == nil || isProbeError(err) {
			t.Errorf("%+v: got %v, want a configuration error", tc, err)
		}
	}
	// Deeper limits than the envelope walker reads could not be honoured.
	o := Options{Limits: contract.Limits{MaxDepth: maxMessageDepth}}
	if _, err := Probe(context.Background(), Target{URL: "http://example.com/mcp"}, o); err == nil || isProbeError(err) {
		t.Errorf("max depth %d: got %v, want a configuration error", o.Limits.MaxDepth, err)
	}
	// 0 lists once; a negative settle has no meaning.
	o = Options{Settle: -time.Second}
	if _, err := Probe(context.Background(), Target{URL: "http://example.com/mcp"}, o); err == nil || isProbeError(err) || !strings.Contains(err.Error(), "settle") {
		t.Errorf("settle -1s: got %v, want a configuration error naming settle", err)
	}
}

// Hundreds of concurrent probes share nothing and leave nothing behind.
func TestConcurrentProbesLeakNothing(t *testing.T) {
	verifyNoLeaks(t)
	urls := []string{
		serveHTTP(t, kindStateless, serverSpec{tools: 4}),
		serveHTTP(t, kindStateful, serverSpec{tools: 4}),
		serveHTTP(t, kindSSE, serverSpec{tools: 4}),
	}
	var wg sync.WaitGroup
	errs := make(chan error, 60)
	digests := make(chan string, 60)
	for i := range 60 {
		wg.Go(func() {
			res, err := ProbeResult(context.Background(), Target{URL: urls[i%len(urls)]}, fastOptions())
			if err != nil {
				errs <- err
				return
			}
			digests <- res.Snapshot.Digests.Tools
		})
	}
	wg.Wait()
	close(errs)
	close(digests)
	for err := range errs {
		t.Error(err)
	}
	seen := map[string]bool{}
	for d := range digests {
		seen[d] = true
	}
	if len(seen) != 1 {
		t.Errorf("concurrent probes of equal servers gave %d different tool digests", len(seen))
	}
}

// A cancelled probe of a stdio server returns promptly and reaps the child.
func TestCancelReapsChild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	target := stdioTarget(t, "silent", "PROBE_TEST_PIDFILE="+pidFile)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Probe(ctx, target, Options{Timeout: time.Minute, DiscoverTimeout: time.Minute, RequestTimeout: time.Minute})
		done <- err
	}()
	pid := waitPID(t, pidFile)
	cancel()
	err := <-done
	var pe *Error
	if !errors.As(err, &pe) || pe.Class != ClassTimeout || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want a timeout class error wrapping context.Canceled", err)
	}
	if !reaped(pid) {
		t.Fatalf("child %d still exists after the probe returned", pid)
	}
}

// verifyNoLeaks checks, after the test's servers are closed, that no
// goroutine started during the test is left.
func verifyNoLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// What a stdio server starts (npx, a shell) goes with it.
func TestStdioGrandchildrenKilled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	inner := stdioTarget(t, "legacy")
	target := Target{Command: "/bin/sh", Args: []string{"-c", `sleep 300 & echo $! > "$1"; exec "$2" "$3"`, "sh", pidFile, inner.Command, inner.Args[0]},
		Env: append(inner.Env, "PROBE_TEST_TOOLS=1")}
	res := mustProbe(t, target, fastOptions())
	if len(res.Snapshot.Tools) != 1 {
		t.Fatalf("got %d tools", len(res.Snapshot.Tools))
	}
	pid := waitPID(t, pidFile)
	if !waitKilled(pid) {
		t.Errorf("the server's own child %d outlived the probe", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// waitKilled waits for pid to be killed (see killed). The kill is
// delivered asynchronously: a generous deadline, as the machine may be
// loaded.
func waitKilled(pid int) bool {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		if killed(pid) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func waitPID(t *testing.T, file string) int {
	t.Helper()
	for range 500 {
		if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the child never wrote its pid")
	return 0
}
