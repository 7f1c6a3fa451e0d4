package mcpdriftreceiver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/dev/testkit/benchutil"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// The balancer scenarios of the simulation (fleet_sim_test.go), run for real:
// go-sdk servers of contracts A and B behind testBalancer, probed by the
// receiver with the real probe, one probe per manual tick (runProbe), so the
// phases of a rollout are counted in probes, not seconds. The simulation
// covers hundreds of seeds; these cover the parts it cannot (handshakes,
// sessions, connections, the samples being real probes) on a few.

// balancerCase runs a simulated scenario behind one kind of balancer.
type balancerCase struct {
	scenario string
	affinity balancerAffinity
	stateful bool // stateful (initialize-era, sessions) or stateless (2026-07-28) backends
}

var balancerCases = []balancerCase{
	{"50/50 random", perRequest, false},
	{"10% random canary", perConnection, false},
	{"ramp 0-20-40-60-80-100%, 5 probes a step, random", perSession, true},
	{"50/50 round robin, confirm_after 1", perConnection, false},
	{"50/50 random, confirm_after 4", perRequest, false},
	{"2-replica round robin, session affinity", perSession, true},
}

func scenarioNamed(t *testing.T, name string) fleetScenario {
	for _, sc := range fleetScenarios {
		if sc.name == name {
			return sc
		}
	}
	t.Fatalf("no scenario %q", name)
	return fleetScenario{}
}

// startManual starts a receiver whose probes the test runs (runProbe).
func startManual(tb testing.TB, cfg *Config, p prober) (*driftReceiver, *consumertest.LogsSink, *consumertest.MetricsSink) {
	tb.Helper()
	return startManualOn(tb, cfg, p, &storageHost{})
}

// startManualOn is startManual on a host with extensions.
func startManualOn(tb testing.TB, cfg *Config, p prober, host component.Host) (*driftReceiver, *consumertest.LogsSink, *consumertest.MetricsSink) {
	tb.Helper()
	return startManualWith(tb, receiverSettings(), cfg, p, host)
}

// startManualWith is startManualOn with settings (a logger to observe).
func startManualWith(tb testing.TB, set receiver.Settings, cfg *Config, p prober, host component.Host) (*driftReceiver, *consumertest.LogsSink, *consumertest.MetricsSink) {
	tb.Helper()
	r, err := newDriftReceiver(set, cfg, p)
	if err != nil {
		tb.Fatal(err)
	}
	r.manual = true
	logs, metrics := new(consumertest.LogsSink), new(consumertest.MetricsSink)
	r.setLogs(logs)
	r.setMetrics(metrics)
	if err := r.Start(context.Background(), host); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = r.Shutdown(context.Background()) })
	return r, logs, metrics
}

func TestE2EBalancerScenarios(t *testing.T) {
	seeds := 2
	if testing.Short() {
		seeds = 1
	}
	for _, bc := range balancerCases {
		sc := scenarioNamed(t, bc.scenario)
		for seed := range seeds {
			t.Run(fmt.Sprintf("%s/%s/seed %d", bc.scenario, bc.affinity, seed), func(t *testing.T) {
				runBalancerCase(t, sc, bc, uint64(seed))
			})
		}
	}
}

func runBalancerCase(t *testing.T, sc fleetScenario, bc balancerCase, seed uint64) {
	a, b := sdkBackends(t, bc.stateful)
	lb, url := newTestBalancer(t, a, b, bc.affinity, sc.robin, seed)
	cfg := e2eConfig(httpTarget("svc", url))
	cfg.ConfirmAfter = sc.confirmAfter
	r, logs, _ := startManual(t, cfg, newProber(cfg))
	tgt := r.targets[0]
	ctx := context.Background()

	probe := 0
	driftAt := -1
	converged := -1
	var convergedAt time.Time
	var convergeWall time.Duration // from the first all-B probe's start to the drift
	drifts := func() int { return len(eventsNamed(logs, semconv.EventDrift)) }
	for pi, ph := range sc.phases {
		lb.setShare(ph.share)
		n := ph.probes
		last := pi == len(sc.phases)-1
		switch {
		case pi == 0:
			n = 5
		case last:
			converged = probe
			n = 70 // ended early, once the drift came
		case n > 30:
			n = 30 // the simulation covers long phases
		}
		for range n {
			if last && probe == converged {
				convergedAt = time.Now()
			}
			before := drifts()
			r.runProbe(ctx, tgt)
			if !tgt.up {
				t.Fatalf("probe %d failed: %s", probe, tgt.lastErrorClass())
			}
			if got := drifts(); got != before {
				if !last {
					t.Fatalf("drift at probe %d, before the fleet converged (phase %d, share %.0f%%)", probe, pi, 100*ph.share)
				}
				if driftAt < 0 {
					driftAt = probe
					convergeWall = time.Since(convergedAt)
				}
			}
			probe++
			if driftAt >= 0 && probe > driftAt+5 {
				break
			}
		}
	}
	if n := drifts(); n != 1 || driftAt < converged {
		t.Fatalf("%d drifts (first at probe %d, converged at %d), want exactly 1 after convergence", n, driftAt, converged)
	}
	if d := driftAt - converged + 1; d > max(2, sc.confirmAfter) {
		t.Errorf("drift %d probes after convergence, want at most %d (samples complete the hold at once)", d, max(2, sc.confirmAfter))
	}
	snaps := eventsNamed(logs, semconv.EventSnapshot)
	digestA := attrStr(snaps[0], semconv.ContractDigest)
	digestB := attrStr(eventsNamed(logs, semconv.EventDrift)[0], semconv.ContractDigest)
	mixed := eventsNamed(logs, semconv.EventMixedContract)
	var opens []plog.LogRecord
	for _, m := range mixed {
		if attrStr(m, semconv.MixedState) == "open" {
			opens = append(opens, m)
		}
	}
	if sc.wantMixed && len(opens) != 1 || len(opens) > 1 {
		t.Fatalf("%d mixed states opened (want %s)", len(opens), map[bool]string{true: "1", false: "at most 1"}[sc.wantMixed])
	}
	for _, m := range opens {
		vs, _ := m.Attributes().Get(semconv.MixedVariants)
		shares := map[string]float64{}
		for i := 0; i < vs.Slice().Len(); i++ {
			v := vs.Slice().At(i).Map()
			d, _ := v.Get("contract_digest")
			s, _ := v.Get("share")
			c, _ := v.Get("count")
			if c.Int() < 1 {
				t.Errorf("variant %s seen %d times", d.Str(), c.Int())
			}
			shares[d.Str()] = s.Double()
		}
		if len(shares) != 2 || shares[digestA] == 0 || shares[digestB] == 0 || shares[digestA]+shares[digestB] < 0.999 {
			t.Errorf("mixed variants %v, want A %s and B %s sharing the episode", shares, short(digestA), short(digestB))
		}
		if sev := attrStr(m, semconv.DriftSeverity); sev != "breaking" || m.SeverityNumber() != plog.SeverityNumberError {
			t.Errorf("open event severity %q (%v), want breaking: B adds a required parameter", sev, m.SeverityNumber())
		}
		if got, want := variantChanges(m, digestB), variantChanges(eventsNamed(logs, semconv.EventDrift)[0], ""); got != want {
			t.Errorf("open event's changes for B %q, want the drift's %q", got, want)
		}
	}
	t.Logf("picks A %d B %d; drift %d probes (%s) after convergence; mixed events %d", lb.picks[0], lb.picks[1], driftAt-converged+1, convergeWall.Round(time.Millisecond), len(mixed))
}

// variantChanges lists "rule tool path" of the changes a drift record carries,
// or, with a digest, those of that variant on a mixed record.
func variantChanges(lr plog.LogRecord, digest string) string {
	m := lr.Attributes()
	if digest != "" {
		vs, _ := m.Get(semconv.MixedVariants)
		for i := range vs.Slice().Len() {
			if d, _ := vs.Slice().At(i).Map().Get(semconv.MixedVariantDigest); d.Str() == digest {
				m = vs.Slice().At(i).Map()
			}
		}
	}
	cs, _ := m.Get(semconv.DriftChanges)
	var out []string
	for i := range cs.Slice().Len() {
		c := cs.Slice().At(i).Map()
		rule, _ := c.Get(semconv.ChangeRule)
		name, _ := c.Get(semconv.ChangeName)
		path, _ := c.Get(semconv.ChangePath)
		out = append(out, rule.Str()+" "+name.Str()+" "+path.Str())
	}
	return strings.Join(out, "; ")
}

func attrStr(lr plog.LogRecord, key string) string {
	v, _ := lr.Attributes().Get(key)
	return v.Str()
}

// BenchmarkPlainUpgrade measures what confirm_samples costs a plain upgrade of
// one go-sdk server: the drift still comes on the confirm_after-th probe of
// the new contract (probes/confirm, as before samples existed), and that
// probe takes confirm_samples more probes, in rounds (takeSamples)
// (confirm-probe/probe: its wall time against an ordinary probe's), with
// settling off and at its default.
//
//	go test ./receiver/mcpdriftreceiver/ -run '^$' -bench PlainUpgrade
func BenchmarkPlainUpgrade(b *testing.B) {
	for _, settle := range []time.Duration{0, createDefaultConfig().(*Config).Settle} {
		b.Run(fmt.Sprintf("settle=%s", settle), func(b *testing.B) { benchmarkPlainUpgrade(b, settle) })
	}
}

func benchmarkPlainUpgrade(b *testing.B, settle time.Duration) {
	var ordinary, confirming time.Duration
	var probes, upgrades int
	for b.Loop() {
		srv := newSDKServer("svc", sdkTool("search", "Search the web", "query"))
		url := serveSDK(b, func() *mcp.Server { return srv })
		cfg := e2eConfig(httpTarget("svc", url))
		cfg.Settle = settle
		r, logs, _ := startManual(b, cfg, newProber(cfg))
		tgt := r.targets[0]
		timed := func() time.Duration {
			start := time.Now()
			r.runProbe(context.Background(), tgt)
			return time.Since(start)
		}
		for range 3 {
			ordinary += timed()
		}
		srv.AddTool(sdkTool("search", "Search the web", "query", "filters"), noop)
		for n := 1; ; n++ {
			d := timed()
			if len(eventsNamed(logs, semconv.EventDrift)) == 1 {
				confirming += d
				probes += n
				break
			}
			ordinary += d
			if n > 10 {
				b.Fatal("no drift")
			}
		}
		upgrades++
		_ = r.Shutdown(context.Background())
	}
	b.ReportMetric(float64(probes)/float64(upgrades), "probes/confirm")
	perOrdinary := float64(ordinary) / float64(3*upgrades+probes-upgrades)
	b.ReportMetric(float64(confirming)/float64(upgrades)/perOrdinary, "confirm-probe/probe")
	b.ReportMetric(float64(confirming)/float64(upgrades)/1e6, "confirm-ms")
	b.ReportMetric(perOrdinary/1e6, "probe-ms")
}

// timedProber times each probe and sample and tells the benchmark when a
// scheduled probe ended.
type timedProber struct {
	prober
	mu       sync.Mutex
	last     string // the contract the last scheduled probe saw
	baseline string // once set: any other contract is B
	probes   []time.Duration
	samples  []time.Duration
	firstB   time.Time // the start of the first probe or sample that saw B
	// bursts are the samples of each scheduled probe that took any: when
	// the first started, when the last ended, how many.
	bursts []sampleBurst
	// converge, when set, is called once at the start of the next scheduled
	// probe, before it picks: that probe is the first of the converged
	// fleet, as the simulation's phases switch between probes.
	converge  func()
	converged time.Time
	finished  chan struct{}
}

func (p *timedProber) probe(ctx context.Context, t *target, sample bool) (*contract.Snapshot, error) {
	start := time.Now()
	if !sample {
		p.mu.Lock()
		if p.converge != nil {
			p.converge()
			p.converge, p.converged = nil, start
		}
		p.mu.Unlock()
	}
	snap, err := p.prober.probe(ctx, t, sample)
	end := time.Now()
	took := end.Sub(start)
	p.mu.Lock()
	if sample {
		p.samples = append(p.samples, took)
		if n := len(p.bursts); n == 0 || p.bursts[n-1].probe != len(p.probes) {
			p.bursts = append(p.bursts, sampleBurst{probe: len(p.probes), start: start})
		}
		bu := &p.bursts[len(p.bursts)-1]
		bu.start, bu.end, bu.n = minTime(bu.start, start), maxTime(bu.end, end), bu.n+1
	} else {
		p.probes = append(p.probes, took)
	}
	if err == nil {
		if !sample {
			p.last = snap.Digests.Contract
		}
		if p.baseline != "" && snap.Digests.Contract != p.baseline && p.firstB.IsZero() {
			p.firstB = start
		}
	}
	p.mu.Unlock()
	if !sample {
		select {
		case p.finished <- struct{}{}:
		default:
		}
	}
	return snap, err
}

type sampleBurst struct {
	probe      int // the scheduled probes before it
	start, end time.Time
	n          int
}

// rounds is how many rounds takeSamples took for the burst: rounds of
// firstSampleRound, sampleRound, then doubling (nextSampleRound).
func (bu sampleBurst) rounds() int {
	r := 0
	for size, n := firstSampleRound, 0; n < bu.n; size = nextSampleRound(size) {
		n += size
		r++
	}
	return r
}

// fitBursts fits the bursts' durations to rounds × round + samples ×
// perSample (least squares), the model of probeTiming.
func fitBursts(bursts []sampleBurst) (round, perSample float64) {
	var rr, rn, nn, rd, nd float64
	for _, bu := range bursts {
		r, n, d := float64(bu.rounds()), float64(bu.n), bu.end.Sub(bu.start).Seconds()
		rr, rn, nn, rd, nd = rr+r*r, rn+r*n, nn+n*n, rd+r*d, nd+n*d
	}
	det := rr*nn - rn*rn
	if det == 0 {
		return 0, 0
	}
	return (rd*nn - nd*rn) / det, (rr*nd - rn*rd) / det
}

// BenchmarkFleetAtOneSecond runs the 50/50 random scenario for real at a
// 1 s collection_interval, with the default settle and with settle 0: go-sdk servers behind
// the test balancer (one pick per probe), the receiver's own scheduler.
// After 5 probes of A the balancer sends half the picks to B; 10 probes
// after the mixed state opened, all of them. It reports, in seconds, first
// B → classified open (from the start of the first probe or sample that
// saw B to the open event) and convergence → drift (from the start of the
// scheduled probe that switched the balancer to B alone, before it picked,
// to the drift event), the median scheduled probe, what a round of samples
// and each sample in it cost (fitBursts), and the ticks skipped while a
// probe took its samples: what the seconds columns of
// BenchmarkFleetScenarios model (fleetTimings are its s/probe, s/round and
// s/sample).
//
//	go test ./receiver/mcpdriftreceiver/ -run '^$' -bench FleetAtOneSecond -benchtime 3x
//
// "changes on connect" runs it with replicas that register a tool after a
// client's first listing (lateBackend, sessions, session affinity): their
// samples settle.
func BenchmarkFleetAtOneSecond(b *testing.B) {
	settle := createDefaultConfig().(*Config).Settle
	b.Run("settle="+settle.String(), func(b *testing.B) { benchFleetAtOneSecond(b, settle, false) })
	b.Run("settle="+settle.String()+",changes_on_connect", func(b *testing.B) { benchFleetAtOneSecond(b, settle, true) })
	b.Run("settle=0s", func(b *testing.B) { benchFleetAtOneSecond(b, 0, false) })
}

func benchFleetAtOneSecond(b *testing.B, settle time.Duration, late bool) {
	var runs []fleetRealRun
	for b.Loop() {
		runs = append(runs, fleetAtOneSecond(b, settle, late))
	}
	col := func(f func(fleetRealRun) float64) []float64 {
		out := make([]float64, len(runs))
		for i, r := range runs {
			out[i] = f(r)
		}
		return out
	}
	open, drift := col(func(r fleetRealRun) float64 { return r.open }), col(func(r fleetRealRun) float64 { return r.drift })
	probe, perSample := col(func(r fleetRealRun) float64 { return r.probe }), col(func(r fleetRealRun) float64 { return r.perSample })
	round, skipped := col(func(r fleetRealRun) float64 { return r.round }), col(func(r fleetRealRun) float64 { return r.skipped })
	cpu := col(func(r fleetRealRun) float64 { return r.cpu })
	b.Logf("first B → open %.2f s; convergence → drift %.2f s; median probe %.3f s; samples: %.3f s a round + %.4f s a sample; skipped ticks %v; CPU %.4f s a probe or sample",
		open, drift, probe, round, perSample, skipped, cpu)
	b.ReportMetric(median(open), "s-first-B-to-open")
	b.ReportMetric(median(drift), "s-convergence-to-drift")
	b.ReportMetric(median(probe), "s/probe")
	b.ReportMetric(median(round), "s/round")
	b.ReportMetric(median(perSample), "s/sample")
	b.ReportMetric(median(skipped), "skipped-ticks")
	b.ReportMetric(median(cpu)*1000, "cpu-ms/probe")
}

// fleetRealRun is what one run of fleetAtOneSecond measured, in seconds:
// the delays, the median scheduled probe, the bursts of samples fitted to
// rounds × round + samples × perSample, the ticks skipped, and the
// process's CPU time per probe or sample (the servers and the balancer
// included: they run in it), which the load does not inflate.
type fleetRealRun struct {
	open, drift, probe, round, perSample, skipped, cpu float64
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func fleetAtOneSecond(b *testing.B, settle time.Duration, late bool) fleetRealRun {
	b.Helper()
	a, bh := sdkBackends(b, false)
	affinity := perConnection
	if late {
		a, bh, affinity = lateBackend(b, nil), lateBackend(b, sdkTool("fetch", "Fetch a page")), perSession
	}
	lb, url := newTestBalancer(b, a, bh, affinity, false, uint64(b.N))
	cfg := createDefaultConfig().(*Config)
	cfg.CollectionInterval = time.Second
	cfg.Settle = settle
	cfg.Targets = []TargetConfig{httpTarget("svc", url)}
	p := &timedProber{prober: newProber(cfg), finished: make(chan struct{}, 1)}
	r, err := newDriftReceiver(receiverSettings(), cfg, p)
	if err != nil {
		b.Fatal(err)
	}
	logs := new(consumertest.LogsSink)
	r.setLogs(logs)
	r.setMetrics(new(consumertest.MetricsSink))
	cpu0 := benchutil.CPUTime()
	if err := r.Start(context.Background(), &storageHost{}); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = r.Shutdown(context.Background()) }()
	tgt := r.targets[0]
	scheduled := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.probes)
	}
	waitFor := func(what string, cond func() bool) {
		for deadline := time.After(5 * time.Minute); !cond(); {
			select {
			case <-p.finished:
			case <-deadline:
				b.Fatalf("no %s in 5 minutes", what)
			}
		}
	}
	waitFor("5 probes", func() bool { return scheduled() >= 5 })
	p.mu.Lock()
	p.baseline = p.last
	p.mu.Unlock()
	lb.setShare(0.5)
	opens := func() []plog.LogRecord {
		var out []plog.LogRecord
		for _, m := range eventsNamed(logs, semconv.EventMixedContract) {
			if attrStr(m, semconv.MixedState) == "open" {
				out = append(out, m)
			}
		}
		return out
	}
	waitFor("mixed state", func() bool { return len(opens()) > 0 })
	n := scheduled()
	waitFor("10 more probes", func() bool { return scheduled() >= n+10 })
	if d := eventsNamed(logs, semconv.EventDrift); len(d) != 0 {
		b.Fatalf("%d drifts while the fleet was split", len(d))
	}
	p.mu.Lock()
	p.converge = func() { lb.setShare(1) }
	p.mu.Unlock()
	waitFor("drift", func() bool { return len(eventsNamed(logs, semconv.EventDrift)) > 0 })
	p.mu.Lock()
	defer p.mu.Unlock()
	openAt := opens()[0].ObservedTimestamp().AsTime()
	driftAt := eventsNamed(logs, semconv.EventDrift)[0].ObservedTimestamp().AsTime()
	secs := func(ds []time.Duration) []float64 {
		out := make([]float64, len(ds))
		for i, d := range ds {
			out[i] = d.Seconds()
		}
		return out
	}
	round, perSample := fitBursts(p.bursts)
	cpu := (benchutil.CPUTime() - cpu0).Seconds() / float64(len(p.probes)+len(p.samples))
	return fleetRealRun{open: openAt.Sub(p.firstB).Seconds(), drift: driftAt.Sub(p.converged).Seconds(),
		probe: median(secs(p.probes)), round: round, perSample: perSample, skipped: float64(tgt.skipped.Load()), cpu: cpu}
}
