package probe

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// fixtureCapabilities are what the fixtures in testdata/fixtures were
// captured declaring.
const fixtureCapabilities = `{"roots":{},"sampling":{},"elicitation":{}}`

// Against the real @modelcontextprotocol/server-everything, at every pinned
// version: a snapshot over stdio, Streamable HTTP and legacy SSE; equal tool
// digests across the three; two snapshots in a row identical (settling
// works although 2026.x adds tools after connecting); and tool digests
// equal to the captured fixtures.
func TestServerEverything(t *testing.T) {
	t.Parallel()
	for _, version := range testservers.EverythingVersions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			entry := testservers.Everything(t, version)
			node := testservers.Node(t)
			o := realServerOptions(t)
			caps := []byte(fixtureCapabilities)
			targets := map[string]Target{
				"stdio":           {Command: node, Args: []string{entry, "stdio"}, ClientCapabilities: caps},
				"streamable-http": {URL: testservers.EverythingHTTP(t, version, "streamableHttp") + "/mcp", ClientCapabilities: caps},
				"sse":             {URL: testservers.EverythingHTTP(t, version, "sse") + "/sse", ClientCapabilities: caps},
			}
			var first *contract.Snapshot
			for name, target := range targets {
				a := mustProbe(t, target, o)
				b := mustProbe(t, target, o)
				if got := a.Snapshot.Server.Transport; got != name {
					t.Errorf("%s: transport auto chose %s", name, got)
				}
				if !a.Settled || !b.Settled {
					t.Errorf("%s: listings did not settle (%d and %d rounds)", name, a.Listings, b.Listings)
				}
				if ea, eb := encodeWithoutTime(t, a.Snapshot), encodeWithoutTime(t, b.Snapshot); !bytes.Equal(ea, eb) {
					t.Errorf("%s: two snapshots in a row differ (tools %d vs %d)", name, len(a.Snapshot.Tools), len(b.Snapshot.Tools))
				}
				if first == nil {
					first = a.Snapshot
				} else if a.Snapshot.Digests.Tools != first.Digests.Tools {
					t.Errorf("%s: tools digest %s differs from another transport's %s", name, a.Snapshot.Digests.Tools, first.Digests.Tools)
				}
				checkFixture(t, version, name, a.Snapshot)
			}
		})
	}
}

// Servers list tools by the capabilities a client declares: the probe
// records its declaration, and a different one gives a different contract.
func TestServerEverythingDependsOnDeclaredCapabilities(t *testing.T) {
	t.Parallel()
	entry := testservers.Everything(t, "2026.1.26")
	node := testservers.Node(t)
	o := realServerOptions(t)
	full := mustProbe(t, Target{Command: node, Args: []string{entry, "stdio"}, ClientCapabilities: []byte(fixtureCapabilities)}, o)
	bare := mustProbe(t, Target{Command: node, Args: []string{entry, "stdio"}, ClientCapabilities: []byte(`{}`)}, o)
	if len(bare.Snapshot.Tools) >= len(full.Snapshot.Tools) {
		t.Errorf("declaring no capabilities listed %d tools, declaring roots, sampling and elicitation %d; want fewer", len(bare.Snapshot.Tools), len(full.Snapshot.Tools))
	}
	if string(bare.Snapshot.ClientCapabilities) != "{}" {
		t.Errorf("recorded client capabilities %s", bare.Snapshot.ClientCapabilities)
	}
}

// realServerOptions probe a real server with a short settle window and
// budgets that do not depend on the machine's load: a probe may take until
// testservers.WaitDeadline. Under load (a niced test beside other work on
// two cores) a node server's start, handshake and listings took most of a
// 30 s probe, and settling, then bound by 10 s, cut its second listing
// short ("listings did not settle").
func realServerOptions(t *testing.T) Options {
	budget := 10 * time.Minute
	if d, ok := testservers.WaitDeadline(t); ok {
		budget = max(time.Until(d), time.Second)
	}
	return Options{Timeout: budget, RequestTimeout: budget, MaxSettleTime: budget, Settle: 200 * time.Millisecond}
}

// checkFixture compares a snapshot's tools with the captured tools-list.json.
func checkFixture(t *testing.T, version, transport string, s *contract.Snapshot) {
	t.Helper()
	dir := filepath.Join(testservers.RepoRoot(), "testdata", "fixtures", "server-everything", version)
	raw, err := os.ReadFile(filepath.Join(dir, "tools-list.json"))
	if err != nil {
		t.Logf("no fixture for %s: %v", version, err)
		return
	}
	doc, err := contract.ReadDocument(contract.ReadOptions{}, raw)
	if err != nil {
		t.Fatal(err)
	}
	want := doc.Snapshot.Tools
	if s.Digests.Tools != want.SetDigest() {
		t.Errorf("%s over %s: tools set digest %s, fixture %s", version, transport, s.Digests.Tools, want.SetDigest())
		for _, d := range want {
			if got, ok := s.Tools.Lookup(d.Key); !ok || got.Digest != d.Digest {
				t.Errorf("  tool %s: fixture %s, probe %v", d.Key, d.Digest, got.Digest)
			}
		}
	}
}

func encodeWithoutTime(t *testing.T, s *contract.Snapshot) []byte {
	t.Helper()
	c := *s
	c.ObservedAt = time.Time{}
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
