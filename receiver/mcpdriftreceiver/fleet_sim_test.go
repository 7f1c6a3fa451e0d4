package mcpdriftreceiver

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
)

// The balancer scenarios of docs/mcpdrift-receiver.md ("Rolling deploys"),
// simulated: a fleet moves from contract A to contract B behind a balancer,
// and a tracker with synthetic snapshots observes one pick per scheduled
// probe (and one per sample it asks for). Each scenario runs over many seeds;
// the same runner prints the measured table (BenchmarkFleetScenarios).

// fleetPhase is a span of scheduled probes during which the balancer sends a
// share of picks to contract B.
type fleetPhase struct {
	probes int
	share  float64
	// glitch: the picks that are not A each answer a contract never seen
	// before (a replica restarting, a partial listing), not B.
	glitch bool
}

type fleetScenario struct {
	name         string
	confirmAfter int
	robin        bool // smooth weighted round robin; else seeded random picks
	phases       []fleetPhase
	// converges: the last phase is all B, and the drift belongs after its
	// first probe. Otherwise the fleet ends where it started and there is
	// no drift at all.
	converges bool
	// wantMixed: the scenario must open exactly one mixed state (else at
	// most one).
	wantMixed bool
}

// fleetScenarios are the balancer cases plus the plain upgrade and
// the failure modes the rules must not fall into.
var fleetScenarios = []fleetScenario{
	{name: "plain upgrade", confirmAfter: 2, phases: []fleetPhase{{20, 0, false}, {60, 1, false}}, converges: true},
	{name: "plain upgrade, confirm_after 1", confirmAfter: 1, phases: []fleetPhase{{20, 0, false}, {60, 1, false}}, converges: true},
	{name: "plain upgrade, confirm_after 4", confirmAfter: 4, phases: []fleetPhase{{20, 0, false}, {60, 1, false}}, converges: true},
	{name: "50/50 random", confirmAfter: 2, phases: []fleetPhase{{20, 0, false}, {60, 0.5, false}, {100, 1, false}}, converges: true, wantMixed: true},
	{name: "10% random canary", confirmAfter: 2, phases: []fleetPhase{{20, 0, false}, {100, 0.1, false}, {120, 1, false}}, converges: true},
	{name: "ramp 0-20-40-60-80-100%, 5 probes a step, random", confirmAfter: 2,
		phases: []fleetPhase{{20, 0, false}, {5, 0.2, false}, {5, 0.4, false}, {5, 0.6, false}, {5, 0.8, false}, {100, 1, false}}, converges: true},
	{name: "50/50 round robin, confirm_after 1", confirmAfter: 1, robin: true, phases: []fleetPhase{{20, 0, false}, {60, 0.5, false}, {100, 1, false}}, converges: true, wantMixed: true},
	{name: "50/50 random, confirm_after 4", confirmAfter: 4, phases: []fleetPhase{{20, 0, false}, {60, 0.5, false}, {100, 1, false}}, converges: true, wantMixed: true},
	// Session affinity in front of two replicas: with one pick per probe the
	// probes alternate as a per-request round robin does.
	{name: "2-replica round robin, session affinity", confirmAfter: 2, robin: true, phases: []fleetPhase{{20, 0, false}, {60, 0.5, false}, {100, 1, false}}, converges: true, wantMixed: true},
	{name: "10% canary rolled back", confirmAfter: 2, phases: []fleetPhase{{20, 0, false}, {100, 0.1, false}, {150, 0, false}}},
	{name: "glitches, 3% of probes, each a new contract", confirmAfter: 2, phases: []fleetPhase{{20, 0, false}, {300, 0.03, true}}},
	{name: "one stale answer every 70 probes", confirmAfter: 2, robin: true, phases: []fleetPhase{{20, 0, false}, {300, 1.0 / 70, false}}},
}

// fleetRun is what one seeded run produced, in scheduled probe indexes.
type fleetRun struct {
	converged int   // first probe of the final all-B phase (-1: none)
	rollback  int   // first probe of a final all-A phase after B was served (-1: none)
	drifts    []int // probes that emitted a drift
	resolved  []int // probes that resolved a mixed state
	opens     []int // probes that opened a mixed state
	resolves  int
	firstB    int // first probe that saw B (scheduled or sampled; -1: none)
	samples   int // extra probes the tracker asked for
	openEvent event
	bursts    []burst // per scheduled probe: the samples it took
}

// falseDrifts counts drifts that should not be: any before convergence, and
// every one after the first.
func (r fleetRun) falseDrifts() int {
	if r.converged < 0 {
		return len(r.drifts)
	}
	n := 0
	after := 0
	for _, d := range r.drifts {
		if d < r.converged {
			n++
		} else if after++; after > 1 {
			n++
		}
	}
	return n
}

// resolveDelay is the number of probes from the first all-A probe after a
// rollback to the end of the mixed state, counting both; -1 when none ended
// after the rollback.
func (r fleetRun) resolveDelay() int {
	for _, d := range r.resolved {
		if d >= r.rollback {
			return d - r.rollback + 1
		}
	}
	return -1
}

// delay is the number of probes from the first all-B probe to the drift,
// counting both (a plain upgrade with confirm_after c has delay c); -1 when
// no drift came after convergence.
func (r fleetRun) delay() int {
	for _, d := range r.drifts {
		if d >= r.converged {
			return d - r.converged + 1
		}
	}
	return -1
}

// burst is what one scheduled probe sampled: rounds (takeSamples) and the
// samples in them.
type burst struct{ rounds, samples int }

// probeTiming is how long a probe and its samples take. A round's samples
// run in parallel: a round takes its round trips (round, with settle where
// samples settle) plus what each of its samples costs on a busy CPU
// (perSample).
type probeTiming struct {
	name                    string
	probe, round, perSample time.Duration
}

// took is how long b's samples take.
func (pt probeTiming) took(b burst) time.Duration {
	return time.Duration(b.rounds)*pt.round + time.Duration(b.samples)*pt.perSample
}

// The timings the seconds columns use, measured by BenchmarkFleetAtOneSecond
// (go-sdk servers on loopback behind the test balancer, medians of 3 runs on
// a 2-core machine at a load average of 41-48; s/probe, s/round and
// s/sample there). With the default settle a scheduled probe waits out one
// quiet period, and samples of a server that never changed after a client
// connected list once (SettleOnChange): a round's latency is lost in what
// its samples cost on a starved CPU (the fit gave -0.009 s). Where the
// server changes on connect every round of samples waits settle out too.
var fleetTimings = []probeTiming{
	{name: "settle 500ms (default)", probe: 527 * time.Millisecond, round: 0, perSample: 44 * time.Millisecond},
	{name: "settle 500ms, server changes on connect", probe: 540 * time.Millisecond, round: 853 * time.Millisecond, perSample: 40 * time.Millisecond},
	{name: "settle 0", probe: 8 * time.Millisecond, round: 10 * time.Millisecond, perSample: 29 * time.Millisecond},
}

// schedule dates a run's scheduled probes as the scheduler spaces them
// (scheduler.go): ticks at a fixed rate; the samples a probe asks for are
// taken at once, inside the probe, round after round; a tick that comes
// while the target's probe (with its samples) still runs is skipped, so the
// next probe starts on the first tick after it ends. start and done are
// each probe's start and end (its events are emitted at its end), from the
// first probe's start.
func (r fleetRun) schedule(interval time.Duration, pt probeTiming) (start, done []time.Duration) {
	start, done = make([]time.Duration, len(r.bursts)), make([]time.Duration, len(r.bursts))
	var at time.Duration
	for i, b := range r.bursts {
		start[i] = at
		done[i] = at + pt.probe + pt.took(b)
		ticks := max(1, (done[i]-at+interval-1)/interval) // the tick at or after done
		at += ticks * interval
	}
	return start, done
}

// seconds are the run's delays in time at interval: convergence → drift
// (from the first all-B probe's start to the drift), first B → classified
// open, and rollback → resolved; -1 where the probe counts have none.
func (r fleetRun) seconds(interval time.Duration, pt probeTiming) (drift, open, resolve float64) {
	start, done := r.schedule(interval, pt)
	drift, open, resolve = -1, -1, -1
	if d := r.delay(); d >= 0 {
		drift = (done[r.converged+d-1] - start[r.converged]).Seconds()
	}
	if len(r.opens) > 0 && r.firstB >= 0 {
		open = (done[r.opens[0]] - start[r.firstB]).Seconds()
	}
	if r.rollback >= 0 {
		if d := r.resolveDelay(); d >= 0 {
			resolve = (done[r.rollback+d-1] - start[r.rollback]).Seconds()
		}
	}
	return drift, open, resolve
}

// TestFleetSchedule: probes start on the ticks; one whose samples run past
// the next ticks starts the next probe on the first tick after it ends, as
// the scheduler skips a tick while the target's probe runs.
func TestFleetSchedule(t *testing.T) {
	r := fleetRun{bursts: []burst{{}, {3, 20}, {}, {1, 2}}, converged: 1, drifts: []int{2}, firstB: 0, opens: []int{1}, rollback: -1}
	pt := probeTiming{probe: 500 * time.Millisecond, round: 400 * time.Millisecond, perSample: 15 * time.Millisecond}
	start, done := r.schedule(time.Second, pt)
	wantStart := []time.Duration{0, time.Second, 3 * time.Second, 4 * time.Second}
	wantDone := []time.Duration{500 * time.Millisecond, 3 * time.Second, 3500 * time.Millisecond, 4930 * time.Millisecond}
	if !slices.Equal(start, wantStart) || !slices.Equal(done, wantDone) {
		t.Fatalf("start %v, done %v; want %v, %v", start, done, wantStart, wantDone)
	}
	drift, open, resolve := r.seconds(time.Second, pt)
	if drift != 2.5 || open != 3 || resolve != -1 {
		t.Errorf("seconds: drift %v, open %v, resolve %v; want 2.5, 3, -1", drift, open, resolve)
	}
	if start, _ := r.schedule(time.Minute, pt); start[3] != 3*time.Minute {
		t.Errorf("at 60 s the probes start on every tick: %v", start)
	}
}

// picker is the balancer: seeded random, or smooth weighted round robin
// starting at a seeded phase.
type picker struct {
	robin bool
	rng   *rand.Rand
	acc   float64
}

func newPicker(robin bool, seed uint64) *picker {
	p := &picker{robin: robin, rng: rand.New(rand.NewPCG(seed, 0x5eed))}
	p.acc = p.rng.Float64()
	return p
}

// pickB reports whether this pick goes to contract B.
func (p *picker) pickB(share float64) bool {
	if !p.robin {
		return p.rng.Float64() < share
	}
	p.acc += share
	if p.acc >= 1-1e-9 {
		p.acc--
		return true
	}
	return false
}

// fleetSnapshots are the two contracts: B adds a required parameter.
type fleetSnapshots struct {
	a, b   *contract.Snapshot
	policy *contract.Policy
	t      testing.TB
}

func newFleetSnapshots(t testing.TB) fleetSnapshots {
	t.Helper()
	return fleetSnapshots{
		a:      requiredSnap(t, "query"),
		b:      requiredSnap(t, "query", "filters"),
		policy: contract.DefaultPolicy(),
		t:      t,
	}
}

// requiredSnap is a one-tool contract whose search tool requires the given
// parameters.
func requiredSnap(t testing.TB, required ...string) *contract.Snapshot {
	t.Helper()
	raw := fmt.Sprintf(`{"name":"search","description":"Search","inputSchema":{"type":"object","properties":{"query":{"type":"string"},"filters":{"type":"object"}},"required":["%s"]}}`,
		strings.Join(required, `","`))
	l, err := contract.DefaultLimits().HashDefinitions(contract.KindTool, []json.RawMessage{json.RawMessage(raw)})
	if err != nil {
		t.Fatal(err)
	}
	s := &contract.Snapshot{ProtocolVersion: "2025-11-25", Tools: l, Capabilities: []byte(`{"tools":{}}`)}
	if err := s.Seal(); err != nil {
		t.Fatal(err)
	}
	return s
}

// runFleetScenario drives a tracker through one seeded run of sc.
func runFleetScenario(sc fleetScenario, seed uint64, snaps fleetSnapshots, samples int) fleetRun {
	tr := newTracker(trackerConfig{limits: contract.DefaultLimits(), confirmAfter: sc.confirmAfter, samples: samples, volatileAfter: 3, ignoreVolatile: true},
		func(old, new *contract.Snapshot) *contract.Report { return contract.Diff(old, new, snaps.policy) })
	p := newPicker(sc.robin, seed)
	run := fleetRun{converged: -1, rollback: -1, firstB: -1}
	t0 := time.Unix(0, 0)
	i, glitches := 0, 0
	for pi, ph := range sc.phases {
		if sc.converges && pi == len(sc.phases)-1 {
			run.converged = i
		}
		if !sc.converges && pi == len(sc.phases)-1 && pi > 1 && ph.share == 0 {
			run.rollback = i
		}
		for range ph.probes {
			at := t0.Add(time.Duration(i) * time.Second)
			pick := func() *contract.Snapshot {
				if !p.pickB(ph.share) {
					return snaps.a
				}
				if ph.glitch {
					glitches++
					return requiredSnap(snaps.t, "query", fmt.Sprintf("glitch%d", glitches))
				}
				{
					if run.firstB < 0 {
						run.firstB = i
					}
					return snaps.b
				}
			}
			st := tr.observe(pick(), at)
			run.bursts = append(run.bursts, burst{})
			if st.sample {
				more := takeSamples(st.sampleN, tr.agrees, func(k int) []*contract.Snapshot {
					run.bursts[i].rounds++
					run.bursts[i].samples += k
					round := make([]*contract.Snapshot, k)
					for j := range round {
						round[j] = pick()
					}
					return round
				})
				run.samples += len(more)
				next := tr.sampled(more, at)
				st.events = append(st.events, next.events...)
			}
			for _, e := range st.events {
				switch e.kind {
				case eventDrift:
					run.drifts = append(run.drifts, i)
				case eventMixedOpen:
					run.opens = append(run.opens, i)
					if len(run.opens) == 1 {
						run.openEvent = e
					}
				case eventMixedResolved:
					run.resolves++
					run.resolved = append(run.resolved, i)
				}
			}
			i++
		}
	}
	return run
}

// fleetStats summarises a scenario over seeds.
type fleetStats struct {
	runs        int
	falseDrifts int
	runsFalse   int   // runs with at least one false drift
	delays      []int // convergence -> drift, per run that drifted after convergence
	mixedDelays []int // delays of the runs that opened a mixed state
	missed      int   // converging runs with no drift after convergence
	opens       []int // mixed states opened per run
	detect      []int // first B -> first mixed open, per run that opened one
	resolve     []int // rollback -> mixed resolved, per rolled-back run that opened one
	unresolved  int   // rolled-back runs whose mixed state never ended
	samples     int
	// misclassified counts open events that did not say B breaks search
	// (B's classification against the baseline A).
	misclassified int
	all           []fleetRun // every run, for the seconds (fleetRun.seconds)
}

func measureFleetScenario(t testing.TB, sc fleetScenario, seeds, samples int) fleetStats {
	snaps := newFleetSnapshots(t)
	var s fleetStats
	for seed := range seeds {
		r := runFleetScenario(sc, uint64(seed), snaps, samples)
		s.runs++
		if f := r.falseDrifts(); f > 0 {
			s.falseDrifts += f
			s.runsFalse++
		}
		if r.converged >= 0 {
			if d := r.delay(); d >= 0 {
				s.delays = append(s.delays, d)
				if len(r.opens) > 0 {
					s.mixedDelays = append(s.mixedDelays, d)
				}
			} else {
				s.missed++
			}
		}
		s.opens = append(s.opens, len(r.opens))
		if r.rollback >= 0 && len(r.opens) > 0 {
			if d := r.resolveDelay(); d >= 0 {
				s.resolve = append(s.resolve, d)
			} else {
				s.unresolved++
			}
		}
		if len(r.opens) > 0 && !classifiedBreaking(r.openEvent, snaps.b) {
			s.misclassified++
		}
		if len(r.opens) > 0 && r.firstB >= 0 {
			s.detect = append(s.detect, r.opens[0]-r.firstB)
		}
		s.samples += r.samples
		s.all = append(s.all, r)
	}
	return s
}

// secondsTable dates each run of each scenario as the scheduler would at
// 1 s and 60 s collection intervals, with each of fleetTimings: median /
// p90 / max seconds of convergence → drift, first B → classified open and
// rollback → resolved.
func secondsTable(out *strings.Builder, rows []fleetScenario, stats []fleetStats) {
	out.WriteString("| scenario | probe and sample round | convergence → drift at 1 s | at 60 s | first B → classified open at 1 s | at 60 s | rollback → resolved at 1 s | at 60 s |\n")
	out.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for i, sc := range rows {
		for _, pt := range fleetTimings {
			fmt.Fprintf(out, "| %s | %s |", sc.name, pt.name)
			var cols [6][]float64
			for _, r := range stats[i].all {
				for k, interval := range []time.Duration{time.Second, time.Minute} {
					d, o, rs := r.seconds(interval, pt)
					for j, x := range []float64{d, o, rs} {
						if x >= 0 {
							cols[2*j+k] = append(cols[2*j+k], x)
						}
					}
				}
			}
			for _, c := range cols {
				fmt.Fprintf(out, " %s |", distSeconds(c))
			}
			out.WriteString("\n")
		}
	}
}

// distSeconds formats a distribution of seconds: median / p90 / max.
func distSeconds(xs []float64) string {
	if len(xs) == 0 {
		return "–"
	}
	q := quantiles(xs)
	return fmt.Sprintf("%.1f / %.1f / %.1f", q(0.5), q(0.9), q(1))
}

// classifiedBreaking reports whether a mixed open event says that variant b
// (when among its variants) is breaking, with a change to the search tool.
func classifiedBreaking(e event, b *contract.Snapshot) bool {
	for _, v := range e.variants {
		if v.key != b.Digests.Contract {
			continue
		}
		if v.baseline || v.report.Worst() != contract.Breaking {
			return false
		}
		for _, c := range v.report.Changes {
			if c.Name == "search" && c.Severity == contract.Breaking {
				return true
			}
		}
		return false
	}
	return true // b not among them (a glitch fleet): nothing to classify
}

// dist formats a distribution: min / median / p90 / max.
func dist(xs []int) string {
	if len(xs) == 0 {
		return "–"
	}
	q := quantiles(xs)
	return fmt.Sprintf("%d / %d / %d / %d", q(0), q(0.5), q(0.9), q(1))
}

// quantiles sorts a copy of xs (not empty) and returns its p-quantile, for
// p from 0 (the least) to 1 (the greatest).
func quantiles[T cmp.Ordered](xs []T) func(p float64) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return func(p float64) T { return s[min(len(s)-1, int(p*float64(len(s))))] }
}

func TestFleetScenarios(t *testing.T) {
	const seeds = 200
	for _, sc := range fleetScenarios {
		t.Run(sc.name, func(t *testing.T) {
			s := measureFleetScenario(t, sc, seeds, DefaultConfirmSamples)
			if s.falseDrifts != 0 {
				t.Errorf("%d false drifts in %d of %d runs", s.falseDrifts, s.runsFalse, s.runs)
			}
			if sc.converges && s.missed != 0 {
				t.Errorf("%d of %d runs never reported the drift after convergence", s.missed, s.runs)
			}
			// Fast convergence: samples complete the hold at once, on the
			// first probe of the converged fleet when a mixed state was
			// open (they are asked from a run's first observation).
			for _, d := range s.delays {
				if d > max(2, sc.confirmAfter) {
					t.Errorf("drift %d probes after convergence, want at most %d: %s", d, max(2, sc.confirmAfter), dist(s.delays))
					break
				}
			}
			for _, d := range s.mixedDelays {
				if d != 1 {
					t.Errorf("drift %d probes after a mixed fleet converged, want on the first: %s", d, dist(s.mixedDelays))
					break
				}
			}
			for _, d := range s.resolve {
				if d != 1 {
					t.Errorf("mixed state resolved %d probes after the rollback, want on the first: %s", d, dist(s.resolve))
					break
				}
			}
			if s.unresolved != 0 {
				t.Errorf("%d rolled-back runs stayed mixed", s.unresolved)
			}
			if s.misclassified != 0 {
				t.Errorf("%d open events did not classify B as breaking search", s.misclassified)
			}
			for _, n := range s.opens {
				if (sc.wantMixed && n != 1) || n > 1 {
					t.Errorf("mixed states opened per run: %v (want %s)", s.opens, map[bool]string{true: "exactly 1", false: "at most 1"}[sc.wantMixed])
					break
				}
			}
			if strings.HasPrefix(sc.name, "plain upgrade") {
				for _, d := range s.delays {
					if d != sc.confirmAfter {
						t.Errorf("plain upgrade confirmed after %d probes, want confirm_after = %d", d, sc.confirmAfter)
						break
					}
				}
			}
			t.Logf("false drifts %d, delay %s, rollback → resolved %s, opens %s, detect %s, samples/run %.1f",
				s.falseDrifts, dist(s.delays), dist(s.resolve), dist(s.opens), dist(s.detect), float64(s.samples)/float64(s.runs))
		})
	}
}

// fleetStress are long runs that measure how often the rules give way when a
// fleet stays mixed (not asserted: these are the trade-off's other side).
var fleetStress = []fleetScenario{
	{name: "50/50 random, stalled for 1000 probes", confirmAfter: 2, phases: []fleetPhase{{20, 0, false}, {1000, 0.5, false}}},
	{name: "10% random canary, stalled for 1000 probes", confirmAfter: 2, phases: []fleetPhase{{20, 0, false}, {1000, 0.1, false}}},
}

// BenchmarkFleetScenarios measures every scenario over many seeds and logs
// the table docs/mcpdrift-receiver.md shows ("Rolling deploys"):
//
//	go test ./receiver/mcpdriftreceiver/ -run '^$' -bench FleetScenarios -benchtime 1x
//
// MCPDRIFT_FLEET_SEEDS sets the seeds per scenario (default 1000).
func BenchmarkFleetScenarios(b *testing.B) {
	seeds := 1000
	if n, err := strconv.Atoi(os.Getenv("MCPDRIFT_FLEET_SEEDS")); err == nil && n > 0 {
		seeds = n
	}
	for b.Loop() {
		var out strings.Builder
		fmt.Fprintf(&out, "\n%d seeded runs per row; probes counted per scheduled probe; distributions are min / median / p90 / max\n\n", seeds)
		out.WriteString("| scenario | confirm_samples | false drifts per run | runs with a false drift | convergence → drift, probes | rollback → resolved, probes | mixed states opened per run | first B → classified open, probes | extra probes per run |\n")
		out.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
		worst := 0.0
		var timed []fleetScenario
		var timedStats []fleetStats
		row := func(sc fleetScenario, samples int) {
			s := measureFleetScenario(b, sc, seeds, samples)
			if samples > 0 && (sc.converges || strings.Contains(sc.name, "rolled back")) {
				timed, timedStats = append(timed, sc), append(timedStats, s)
			}
			perRun := float64(s.falseDrifts) / float64(s.runs)
			if samples > 0 {
				worst = max(worst, perRun)
			}
			delays := "–"
			if sc.converges {
				delays = dist(s.delays)
				if s.missed > 0 {
					delays += fmt.Sprintf(" (%d runs none)", s.missed)
				}
			}
			resolves := "–"
			if len(s.resolve) > 0 || s.unresolved > 0 {
				resolves = dist(s.resolve)
				if s.unresolved > 0 {
					resolves += fmt.Sprintf(" (%d runs none)", s.unresolved)
				}
			}
			fmt.Fprintf(&out, "| %s | %d | %.4f | %d | %s | %s | %s | %s | %.1f |\n", sc.name, samples, perRun, s.runsFalse, delays, resolves, dist(s.opens), dist(s.detect), float64(s.samples)/float64(s.runs))
		}
		for _, sc := range fleetScenarios {
			row(sc, DefaultConfirmSamples)
		}
		for _, sc := range fleetStress {
			row(sc, DefaultConfirmSamples)
		}
		for _, sc := range fleetScenarios[3:9] {
			row(sc, 0)
		}
		fmt.Fprintf(&out, "\nIn seconds, as the scheduler spaces the probes (fleetRun.schedule), median / p90 / max, confirm_samples %d:\n\n", DefaultConfirmSamples)
		secondsTable(&out, timed, timedStats)
		b.Log(out.String())
		b.ReportMetric(worst, "false-drifts/run")
	}
}
