//go:build e2e

// Package e2e holds the end-to-end tests: the built otelcol-mcpdrift
// distribution, the quickstart's demo server and agent, the real npm MCP
// servers and real backends, run as users run them. `make e2e` builds what
// they need and runs them.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/quickstart"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// binaries returns the quickstart options for the built binaries, failing
// the test when `make e2e` did not build them.
func binaries(t *testing.T) quickstart.Options {
	t.Helper()
	root := testservers.RepoRoot()
	o := quickstart.Options{
		Collector: filepath.Join(root, "_build", "otelcol-mcpdrift", "otelcol-mcpdrift"),
		Config:    filepath.Join(root, "examples", "quickstart", "collector.yaml"),
		Server:    filepath.Join(root, "bin", "quickstart-server"),
		Agent:     filepath.Join(root, "bin", "demo-agent"),
		Dir:       t.TempDir(),
	}
	for _, bin := range []string{o.Collector, o.Server, o.Agent} {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("%s is missing: run `make e2e` (it builds the distribution and the demo binaries)", bin)
		}
	}
	return o
}

// eventually polls the outputs until cond holds.
func eventually(t *testing.T, dir, what string, timeout time.Duration, cond func(*quickstart.Outputs) bool) *quickstart.Outputs {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out, err := quickstart.ReadOutputs(dir)
		if err != nil {
			t.Fatal(err)
		}
		if cond(out) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s (outputs in %s)", timeout, what, dir)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// probed waits until server has been probed successfully n more times (its
// mcpdrift.probe.last_success gauge rose n times), so a test can check that
// something did not happen on those probes without guessing how long they
// take on a loaded machine.
func probed(t *testing.T, dir, server string, n int) *quickstart.Outputs {
	t.Helper()
	last, rises := int64(-1), -1
	return eventually(t, dir, fmt.Sprintf("%d more probes of %s", n, server), 90*time.Second, func(out *quickstart.Outputs) bool {
		if v, ok := out.GaugeValue("mcpdrift.probe.last_success", server); ok && v != last {
			last, rises = v, rises+1
		}
		return rises >= n
	})
}

// settled waits until the collector has written everything it received: two
// reads a second apart see the same number of tool-call spans.
func settled(t *testing.T, dir string) *quickstart.Outputs {
	t.Helper()
	last := -1
	return eventually(t, dir, "the outputs to settle", 20*time.Second, func(out *quickstart.Outputs) bool {
		n := len(out.ToolCalls())
		if n == last {
			return true
		}
		last = n
		time.Sleep(time.Second)
		return false
	})
}

// TestQuickstart runs the quickstart headless: the server switches from v1
// to v2 while two agents call it from three sessions each.
func TestQuickstart(t *testing.T) {
	t.Parallel()
	o := binaries(t)
	// Sessions keep their old plans for ~10 s after list_changed, past the
	// drift's confirmation (two probes 3 s apart): those calls are the stale ones.
	o.Agents, o.Sessions, o.Rate, o.ReplanAfter = []string{"planner", "researcher"}, 3, 4, 40
	s, err := quickstart.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()

	// Let the agents call v1 for a while, then switch by signal.
	eventually(t, o.Dir, "calls to v1 and a baseline", 30*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.ToolCalls()) >= 30 && len(out.Events(semconv.EventSnapshot)) >= 1
	})
	switchedAt := time.Now()
	if err := s.SwitchServer(); err != nil {
		t.Fatal(err)
	}
	eventually(t, o.Dir, "the drift and its impact", 45*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.Events(semconv.EventDrift)) >= 1 && len(out.Events(semconv.EventImpact)) >= 4
	})
	// Calls with old plans keep coming: wait for one the processor flags.
	eventually(t, o.Dir, "a call after the switch flagged stale", 45*time.Second, func(out *quickstart.Outputs) bool {
		for _, sp := range out.ToolCalls() {
			if !sp.Span.StartTimestamp().AsTime().Before(switchedAt) && sp.Attr(semconv.ToolStale) == "true" {
				return true
			}
		}
		return false
	})
	s.StopAgent()
	out := settled(t, o.Dir)

	// Exactly one drift, breaking, with the three changes v2 makes.
	drifts := out.Events(semconv.EventDrift)
	if len(drifts) != 1 {
		t.Fatalf("%d drift events, want exactly 1", len(drifts))
	}
	d := drifts[0]
	if d.Record.SeverityText() != "breaking" || d.Attr(semconv.DriftSeverity) != "breaking" {
		t.Errorf("worst severity %q", d.Record.SeverityText())
	}
	want := map[string]string{"create_ticket": "input.property.added_required", "get_weather": "tool.description.changed", "get_forecast": "tool.added"}
	changes, _ := d.Record.Attributes().Get(semconv.DriftChanges)
	got := map[string]string{}
	for i := 0; i < changes.Slice().Len(); i++ {
		m := changes.Slice().At(i).Map()
		name, _ := m.Get(semconv.ChangeName)
		rule, _ := m.Get(semconv.ChangeRule)
		got[name.Str()] = rule.Str()
	}
	for tool, rule := range want {
		if got[tool] != rule {
			t.Errorf("change for %s: %q, want %q (all: %v)", tool, got[tool], rule, got)
		}
	}
	if n := changes.Slice().Len(); n != 3 {
		t.Errorf("%d changes, want 3: %v", n, got)
	}
	if d.Int(semconv.ImpactAgents) != 2 || d.Int(semconv.ImpactSessions) != 6 {
		t.Errorf("drift impact totals: %d agents, %d sessions, want 2 and 6", d.Int(semconv.ImpactAgents), d.Int(semconv.ImpactSessions))
	}

	// Impact records name both agents, three sessions each, for the breaking tool.
	driftID := d.Attr(semconv.DriftID)
	seen := map[string]int64{}
	for _, e := range out.Events(semconv.EventImpact) {
		if e.Attr(semconv.DriftID) != driftID {
			t.Errorf("impact record for another drift: %s", e.Attr(semconv.DriftID))
		}
		if e.Attr(semconv.GenAIToolName) == "create_ticket" {
			seen[e.Attr(semconv.GenAIAgentName)] = e.Int(semconv.ImpactSessions)
			if e.Attr(semconv.ImpactRisk) != "high" {
				t.Errorf("create_ticket impact for %s: risk %s, want high (breaking, called with the old digest)", e.Attr(semconv.GenAIAgentName), e.Attr(semconv.ImpactRisk))
			}
		}
	}
	if seen["planner"] != 3 || seen["researcher"] != 3 {
		t.Errorf("create_ticket impact sessions by agent: %v, want planner 3, researcher 3", seen)
	}

	// Stale calls are flagged on spans after the switch, never before.
	var staleBefore, staleAfter, after int
	for _, sp := range out.ToolCalls() {
		start := sp.Span.StartTimestamp().AsTime()
		stale := sp.Attr(semconv.ToolStale) == "true"
		switch {
		case start.Before(switchedAt) && stale:
			staleBefore++
		case !start.Before(switchedAt):
			after++
			if stale {
				staleAfter++
			}
		}
	}
	if staleBefore != 0 {
		t.Errorf("%d calls before the switch were flagged stale", staleBefore)
	}
	if staleAfter == 0 {
		t.Errorf("no stale call flagged among %d calls after the switch", after)
		for _, sp := range out.ToolCalls() {
			t.Logf("%s %s tool=%s digest=%.8s current=%.8s stale=%s listing_stale=%s server=%s url=%s", sp.Span.StartTimestamp().AsTime().Format("15:04:05.000"), sp.Attr(semconv.GenAIAgentName), sp.Attr(semconv.GenAIToolName), sp.Attr(semconv.ToolDigest), sp.Attr(semconv.ToolCurrentDigest), sp.Attr(semconv.ToolStale), sp.Attr(semconv.ToolsListingStale), sp.Attr(semconv.ServerName), sp.Attr(semconv.ServerURL))
		}
		t.Logf("switched at %s; drift at %s", switchedAt.Format("15:04:05.000"), d.Record.Timestamp().AsTime().Local().Format("15:04:05.000"))
	}

	// The probe is up.
	if up, ok := out.GaugeValue("mcpdrift.probe.up", "demo-tools"); !ok || up != 1 {
		t.Errorf("mcpdrift.probe.up = %d (seen %v)", up, ok)
	}

	// The control plane: status, history, impact and accept with the CLI.
	accepted := checkControlPlane(t, s, o.Dir, d)

	// Then the dashboard, in a real browser: the drift, accepted by the CLI,
	// its impact, and v2's poisoned text shown as text.
	checkDashboard(t, s.APIURL(), "e2e")

	// Restart the collector against the unchanged v2 server: no new drift.
	port := s.Ports.Server
	s.Stop()
	before := len(out.Events(semconv.EventSnapshot))
	o2 := o
	o2.Agent, o2.ServerStart, o2.ServerPort = "", "v2", port
	s2, err := quickstart.Start(context.Background(), o2)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Stop()
	eventually(t, o.Dir, "the restored baseline", 20*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.Events(semconv.EventSnapshot)) > before
	})
	out = probed(t, o.Dir, "demo-tools", 3) // past confirm_after
	if n := len(out.Events(semconv.EventDrift)); n != 1 {
		t.Errorf("after a restart against the unchanged v2 server: %d drift events in total, want still 1", n)
	}
	checkHistoryRestored(t, s2, accepted)
}
