package mcpdriftreceiver

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"

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
