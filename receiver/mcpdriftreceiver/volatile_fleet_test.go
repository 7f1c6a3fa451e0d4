package mcpdriftreceiver

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
)

// stampRun drives a tracker (confirm_after 1, confirm_samples 12, volatile
// fields not ignored) through probes of servers whose search_docs
// description embeds a timestamp to the second. Scheduled probe i reads
// second sec(i) and its sample j (from 1) second sample(i, j); canary(i, j) says whether
// pick j of probe i (0: the scheduled probe, then its samples) reached a
// replica on which create_ticket requires project.
type stampRun struct {
	after  int
	sec    func(i int) int
	sample func(i, j int) int
	canary func(i, j int) bool
	stamp  bool // false: the description carries no timestamp
	// noSamples: confirm_samples 0, as a stdio target takes none.
	noSamples bool
}

// stampEvent is an event and the scheduled probe it came on.
type stampEvent struct {
	probe int
	event
}

func (r stampRun) run(t *testing.T, probes int) []stampEvent {
	t.Helper()
	samples := DefaultConfirmSamples
	if r.noSamples {
		samples = 0
	}
	tr := newTracker(trackerConfig{limits: contract.DefaultLimits(), confirmAfter: 1, samples: samples, volatileAfter: r.after},
		func(old, new *contract.Snapshot) *contract.Report { return contract.Diff(old, new, nil) })
	snap := func(second int, v2 bool) *contract.Snapshot {
		desc := "Search the docs."
		if r.stamp {
			desc = fmt.Sprintf("Search the docs. Index as of 2026-12-05T21:%02d:%02dZ", second/60, second%60)
		}
		return ticketSnap(t, desc, v2)
	}
	var out []stampEvent
	for i := range probes {
		at := time.Unix(int64(i), 0)
		st := tr.observe(snap(r.sec(i), r.canary(i, 0)), at)
		events := st.events
		if st.sample {
			j := 0
			samples := takeSamples(st.sampleN, tr.agrees, func(k int) []*contract.Snapshot {
				round := make([]*contract.Snapshot, k)
				for n := range round {
					j++
					round[n] = snap(r.sample(i, j), r.canary(i, j))
				}
				return round
			})
			events = append(events, tr.sampled(samples, at).events...)
		}
		for _, e := range events {
			out = append(out, stampEvent{probe: i, event: e})
		}
	}
	return out
}

func stampKinds(events []stampEvent) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = fmt.Sprintf("%d@%d", e.kind, e.probe)
	}
	return out
}

// requiresProject reports whether a report says create_ticket now requires
// project.
func requiresProject(r *contract.Report) bool {
	return r != nil && slices.ContainsFunc(r.Changes, func(c contract.Change) bool { return c.Rule == contract.RuleInputRequiredAdded })
}

// TestTrackerTimestampIsNoMixedFleet (issue 25): one server whose
// description carries a timestamp to the second, changed (a required
// parameter) right after the first probe, with samples that read the next
// second (taken just after the boundary). Until volatile.after probes find
// the field, every second is a new contract and the samples repeat the
// next one, which the mixed rule read as contracts coming back: a mixed
// state opened for one server (and was resolved when the field was found).
// The fields on a streak of new values are masked for the mixed rule, so
// none opens; the change is reported once, on the probe that finds the
// field.
func TestTrackerTimestampIsNoMixedFleet(t *testing.T) {
	for _, c := range []struct {
		name   string
		after  int
		sample func(i, j int) int // the second probe i's sample j reads
		found  int                // the probe that finds the field
	}{
		{"samples at the next second, volatile.after 4", 4, func(i, _ int) int { return i + 1 }, 4},
		// The samples read the probe's own second: they agree, and the
		// change is confirmed on the probe that saw it. The timestamp's
		// next ticks are no drift (they were, one a probe, until the
		// field was found).
		{"samples at the probe's second, volatile.after 4", 4, func(i, _ int) int { return i }, 1},
		// The first sample still reads the probe's second, the others the
		// next one.
		{"samples across the second, volatile.after 5", 5, func(i, j int) int { return i + min(j-1, 1) }, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := stampRun{after: c.after, sec: func(i int) int { return i }, sample: c.sample, canary: func(i, _ int) bool { return i >= 1 }, stamp: true}
			events := r.run(t, 12)
			var drifts []stampEvent
			for _, e := range events {
				switch e.kind {
				case eventMixedOpen, eventMixedUpdated, eventMixedResolved:
					t.Fatalf("events %v: one server reported as a mixed fleet", stampKinds(events))
				case eventDrift:
					drifts = append(drifts, e)
				}
			}
			if len(drifts) != 1 || !requiresProject(drifts[0].report) || drifts[0].probe != c.found {
				t.Fatalf("events %v: want one drift, requiring project, on probe %d", stampKinds(events), c.found)
			}
		})
	}
}

// TestTrackerTimestampWithoutSamples: a target that takes no samples (stdio)
// with confirm_after 1 reports a timestamp's first tick, which one probe
// cannot tell from an edit, and none of the ticks after it (it reported
// each, until volatile.after found the field).
func TestTrackerTimestampWithoutSamples(t *testing.T) {
	r := stampRun{after: 4, sec: func(i int) int { return i }, canary: func(int, int) bool { return false }, stamp: true, noSamples: true}
	events := r.run(t, 12)
	var drifts []int
	for _, e := range events {
		if e.kind == eventDrift {
			drifts = append(drifts, e.probe)
		}
	}
	if !slices.Equal(drifts, []int{1}) {
		t.Fatalf("events %v: want one drift, on probe 1", stampKinds(events))
	}
}

// TestTrackerCanaryNextToTimestamp: a 10 % canary that adds a required
// parameter, on a fleet whose description carries a timestamp to the second
// from the first probe, gets its classified open at most one probe after
// the same picks without the timestamp would (the masked mixed rule holds a
// fleet only while the field it differs in is on its first change), and is
// never confirmed as a drift while it is a canary.
func TestTrackerCanaryNextToTimestamp(t *testing.T) {
	const runs, probes = 20, 90
	worst, later := 0, 0
	for seed := range uint64(runs) {
		canary := func(i, j int) bool {
			return i >= 1 && rand.New(rand.NewPCG(seed, uint64(i)<<16|uint64(j))).Float64() < 0.1
		}
		open := func(stamp bool) int {
			r := stampRun{after: 3, sec: func(i int) int { return i }, sample: func(i, _ int) int { return i }, canary: canary, stamp: stamp}
			events := r.run(t, probes)
			for _, e := range events {
				if e.kind == eventDrift && requiresProject(e.report) {
					t.Fatalf("seed %d, timestamp %v: the canary was confirmed as a drift on probe %d", seed, stamp, e.probe)
				}
			}
			for _, e := range events {
				if e.kind == eventMixedOpen && slices.ContainsFunc(e.variants, func(v mixedVariant) bool { return requiresProject(v.report) }) {
					return e.probe
				}
			}
			t.Fatalf("seed %d, timestamp %v: no classified open in %d probes: %v", seed, stamp, probes, stampKinds(events))
			return 0
		}
		plain, stamped := open(false), open(true)
		if stamped > plain+1 {
			t.Errorf("seed %d: the canary's classified open came on probe %d next to a timestamp, %d without", seed, stamped, plain)
		}
		worst = max(worst, stamped)
		if stamped > plain {
			later++
		}
	}
	t.Logf("%d runs: classified open by probe %d at the latest; a probe later than without the timestamp in %d", runs, worst, later)
}
