package probe

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/dev/testbin"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// sdkServer is internal/sdkserver, a stdio server on the real go-sdk or
// mcp-go, built once per test run.
func sdkServer(t testing.TB) string {
	t.Helper()
	return testbin.Build(t, "probe", "./probe/internal/sdkserver")
}

// startupCase is a stdio server that starts late, and the generation it speaks.
type startupCase struct {
	name   string
	target Target
	gen    contract.SpecGeneration
	tools  int
}

// probeStartups probes every case at once (they mostly wait) with the
// options the CLI and the receiver use by default, and checks each
// snapshot's generation. Only the probe's Timeout and RequestTimeout are
// longer than theirs: they bound the start-up, which is not what is
// tested (behind an eager relay, the initialize sent after DiscoverTimeout
// waits for it). On a loaded machine (load 40-50) the real context7 server
// took 24.6 s to probe when started at once, so the one started 4 s late
// ran out of the default 30 s, and the servers behind an eager relay
// answered initialize after more than the default 10 s.
func probeStartups(t *testing.T, cases []startupCase) {
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Go(func() {
			t.Run(c.name, func(t *testing.T) {
				res := mustProbe(t, c.target, Options{Settle: DefaultSettle, Timeout: 3 * time.Minute, RequestTimeout: time.Minute})
				s := res.Snapshot
				if s.SpecGeneration != c.gen || len(s.Tools) != c.tools {
					t.Errorf("got %s (%s) with %d tools, want %s with %d", s.SpecGeneration, s.ProtocolVersion, len(s.Tools), c.gen, c.tools)
				}
			})
		})
	}
	wg.Wait()
}

// Stdio servers that start late (loading a runtime, a model, an npx
// install) get the generation they speak: the discover timeout counts from
// when the server read the request, not from when it was sent. A 4 s start
// made a go-sdk server fail ("duplicate initialize") and an mcp-go server
// be recorded as stateful_2025. Legacy servers that start late, answering
// discover with an error or not at all, still fall back to initialize.
func TestSlowStartingStdioServers(t *testing.T) {
	t.Parallel()
	bin := sdkServer(t)
	var cases []startupCase
	for _, sdk := range []string{"gosdk", "mcpgo"} {
		for _, delay := range []string{"1s", "4s", "15s"} {
			cases = append(cases, startupCase{sdk + " " + delay, Target{Command: bin, Args: []string{"-sdk", sdk, "-delay", delay}}, contract.SpecStateless2026, 2})
		}
	}
	cases = append(cases,
		startupCase{"legacy gosdk 4s", Target{Command: bin, Args: []string{"-sdk", "gosdk", "-legacy", "-delay", "4s"}}, contract.SpecStateful2025, 2},
		startupCase{"legacy ignoring discover 4s", stdioTarget(t, "deaf-to-discover", "PROBE_TEST_DELAY=4s"), contract.SpecStateful2025, 2},
	)
	// Behind a relay that reads stdin at once (as docker run -i does), the
	// probe cannot see the start-up: it falls back after DiscoverTimeout,
	// and the server, once started, answers the discover request it finds
	// first in its input alongside initialize.
	relayed := func(args ...string) Target {
		return Target{Command: "/bin/sh", Args: append([]string{"-c", `cat | "$0" "$@"`, bin}, args...)}
	}
	for _, sdk := range []string{"gosdk", "mcpgo"} {
		cases = append(cases, startupCase{sdk + " 4s behind an eager relay", relayed("-sdk", sdk, "-delay", "4s"), contract.SpecStateless2026, 2})
	}
	cases = append(cases, startupCase{"legacy gosdk 4s behind an eager relay", relayed("-sdk", "gosdk", "-legacy", "-delay", "4s"), contract.SpecStateful2025, 2})
	probeStartups(t, cases)
}

// @upstash/context7-mcp speaks 2026-07-28 over stdio; started late (as
// under load, or through npx) it must still be recorded as such.
func TestContext7SlowStart(t *testing.T) {
	t.Parallel()
	entry := testservers.NPMPackage(t, "context7-mcp-4.1.1", filepath.Join("@upstash", "context7-mcp", "dist", "index.js"))
	node := testservers.Node(t)
	late := func(d time.Duration) Target {
		return Target{Command: "/bin/sh", Args: []string{"-c", `sleep "$1"; exec "$2" "$3"`, "sh", d.String(), node, entry}}
	}
	probeStartups(t, []startupCase{
		{"at once", Target{Command: node, Args: []string{entry}}, contract.SpecStateless2026, 2},
		{"after 4s", late(4 * time.Second), contract.SpecStateless2026, 2},
	})
}
