//go:build e2e

package e2e

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/dev/quickstart"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestNPMServerEverythingUpgrade: the collector probes the real npm
// server-everything over stdio while its version changes from 2025.9.25 to
// 2025.11.25 between probes, and reports the drift the captured fixtures
// predict: startElicitation's description rewritten (warning) and zip added
// (compatible), nothing else.
func TestNPMServerEverythingUpgrade(t *testing.T) {
	t.Parallel()
	o, _, current := startEverything(t, "collector-npm.yaml", "2025.9.25")
	to := testservers.Everything(t, "2025.11.25")

	eventually(t, o.Dir, "the 2025.9.25 baseline", 60*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.Events(semconv.EventSnapshot)) == 1
	})
	if err := os.WriteFile(current, []byte(to), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, o.Dir, "the upgrade's drift", 90*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.Events(semconv.EventDrift)) >= 1
	})
	out := probed(t, o.Dir, "everything", 2) // the drift must not repeat

	drifts := out.Events(semconv.EventDrift)
	if len(drifts) != 1 {
		t.Fatalf("%d drift events, want 1", len(drifts))
	}
	d := drifts[0]
	if d.Record.SeverityText() != "warning" {
		t.Errorf("worst severity %q, want warning", d.Record.SeverityText())
	}
	changes, _ := d.Record.Attributes().Get(semconv.DriftChanges)
	got := map[string]bool{}
	for i := 0; i < changes.Slice().Len(); i++ {
		m := changes.Slice().At(i).Map()
		name, _ := m.Get(semconv.ChangeName)
		rule, _ := m.Get(semconv.ChangeRule)
		got[name.Str()+" "+rule.Str()] = true
	}
	// What the captured fixtures of the two releases predict.
	want := map[string]bool{}
	for _, c := range contract.DiffDocuments(fixture(t, "2025.9.25"), fixture(t, "2025.11.25"), nil).Changes {
		want[c.Name+" "+string(c.Rule)] = true
	}
	if !want["startElicitation tool.description.changed"] || !want["zip tool.added"] {
		t.Fatalf("the fixtures no longer predict what this test expects: %v", want)
	}
	if !maps.Equal(got, want) {
		t.Errorf("drift changes %v, the fixtures predict %v", got, want)
	}
	if up, ok := out.GaugeValue("mcpdrift.probe.up", "everything"); !ok || up != 1 {
		t.Errorf("mcpdrift.probe.up = %d (seen %v)", up, ok)
	}
}

// startEverything starts the distribution with config (in e2e/testdata),
// whose target runs the server-everything release named by the file
// $E2E_CURRENT (current): from, until the test writes another's entry
// point there. The stack stops with the test.
func startEverything(t *testing.T, config, from string) (o quickstart.Options, s *quickstart.Stack, current string) {
	t.Helper()
	testservers.Node(t)
	entry := testservers.Everything(t, from)
	o = binaries(t)
	o.Server, o.Agent = "", ""
	o.Config = filepath.Join(testservers.RepoRoot(), "e2e", "testdata", config)
	current = filepath.Join(o.Dir, "current")
	if err := os.WriteFile(current, []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	o.ExtraEnv = []string{"E2E_CURRENT=" + current}
	s, err := quickstart.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return o, s, current
}

// fixture reads a captured server-everything contract (initialize result and tools/list).
func fixture(t *testing.T, version string) *contract.Document {
	t.Helper()
	initialize, tools := testservers.Fixture(t, version)
	doc, err := contract.ReadDocument(contract.ReadOptions{}, initialize, tools)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
