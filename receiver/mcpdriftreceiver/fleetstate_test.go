package mcpdriftreceiver

import (
	"context"
	"slices"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestE2ERestartMidMixedState: a Collector restarted while a 50/50 rollout
// is in progress (real go-sdk servers behind the test balancer, a real
// file_storage) keeps the mixed state and its evidence: no second open
// event, the variant still classified as breaking, and the drift within two
// probes of the fleet converging.
func TestE2ERestartMidMixedState(t *testing.T) {
	dir := t.TempDir()
	a, b := sdkBackends(t, false)
	lb, url := newTestBalancer(t, a, b, perConnection, false, 7)
	cfg := e2eConfig(httpTarget("svc", url))
	cfg.Storage = &storageID
	ctx := context.Background()

	host := newStorageHost(t, dir, nil)
	r, logs, _ := startManualOn(t, cfg, newProber(cfg), host)
	tgt := r.targets[0]
	for range 3 {
		r.runProbe(ctx, tgt)
	}
	lb.setShare(0.5)
	for i := 0; !tgt.tracker.mixedOpen(); i++ {
		if i == 40 {
			t.Fatal("no mixed state in 40 probes of a 50/50 fleet")
		}
		r.runProbe(ctx, tgt)
	}
	before := tgt.tracker.mixedVariants()
	if n := len(eventsNamed(logs, semconv.EventMixedContract)); n != 1 {
		t.Fatalf("%d mixed events before the restart, want the open one", n)
	}
	stop(t, r, host)

	host = newStorageHost(t, dir, nil)
	r, logs, _ = startManualOn(t, cfg, newProber(cfg), host)
	tgt = r.targets[0]
	if !tgt.tracker.mixedOpen() {
		t.Fatal("the mixed state did not survive the restart")
	}
	after := tgt.tracker.mixedVariants()
	if len(after) != len(before) {
		t.Fatalf("variants after the restart %d, before %d", len(after), len(before))
	}
	for i, v := range after {
		if v.key != before[i].key || v.count != before[i].count || v.baseline != before[i].baseline {
			t.Errorf("variant %d: %+v after the restart, %+v before", i, v.variant, before[i].variant)
		}
		if !v.baseline && (v.report == nil || v.report.Worst() != contract.Breaking) {
			t.Errorf("variant %s not classified as breaking after the restart: %v", short(v.key), v.report)
		}
	}
	tgt.stateMu.Lock()
	status := r.serverStatus(tgt)
	tgt.stateMu.Unlock()
	if !status.Mixed || len(status.Variants) != 2 {
		t.Fatalf("control plane status after the restart: mixed %v, variants %+v", status.Mixed, status.Variants)
	}
	for _, v := range status.Variants {
		if !v.Baseline && (v.Severity != "breaking" || len(v.Changes) == 0 || v.Summary == "") {
			t.Errorf("status variant %+v, want breaking with its changes", v)
		}
	}
	for range 10 {
		r.runProbe(ctx, tgt)
	}
	for _, m := range eventsNamed(logs, semconv.EventMixedContract) {
		if attrStr(m, semconv.MixedState) == "open" {
			t.Error("the restarted receiver opened the mixed state again")
		}
	}
	lb.setShare(1)
	for i := range 2 {
		r.runProbe(ctx, tgt)
		if len(eventsNamed(logs, semconv.EventDrift)) == 1 {
			t.Logf("drift %d probes after convergence, across a restart", i+1)
			return
		}
	}
	t.Fatalf("%d drifts within 2 probes of convergence after the restart, want 1", len(eventsNamed(logs, semconv.EventDrift)))
}

// TestRestoreFleetRejectsBadEvidence: stored evidence is untrusted; what does
// not hold together is an error and leaves the fleet as restored.
func TestRestoreFleetRejectsBadEvidence(t *testing.T) {
	a, b := requiredSnap(t, "query"), requiredSnap(t, "query", "filters")
	mixed := func() *tracker {
		tr := newTestTracker(2, false)
		feed(tr, a)
		for i := range 12 {
			feed(tr, []*contract.Snapshot{a, b}[i%2])
		}
		if !tr.mixedOpen() {
			t.Fatal("not mixed")
		}
		return tr
	}
	good, err := mixed().exportFleet()
	if err != nil || good == nil || len(good.Variants) != 1 {
		t.Fatalf("export: %+v, %v", good, err)
	}
	for name, tamper := range map[string]func(sf *storedFleet){
		"another current contract": func(sf *storedFleet) { sf.Current = b.Digests.Contract },
		"negative run":             func(sf *storedFleet) { sf.Run.N = -1 },
		"mixed without variants":   func(sf *storedFleet) { sf.Episode = nil },
		"empty key in the window":  func(sf *storedFleet) { sf.Window[0].Key = "" },
		"negative variant count":   func(sf *storedFleet) { sf.Episode[0].Count = -3 },
		"variant of another digest": func(sf *storedFleet) {
			for k := range sf.Variants {
				sf.Variants[k], _ = a.Encode()
			}
		},
		"variant that is not JSON": func(sf *storedFleet) {
			for k := range sf.Variants {
				sf.Variants[k] = []byte("{")
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			sf, _ := mixed().exportFleet()
			tamper(sf)
			tr := newTestTracker(2, false)
			tr.restore(a, nil, nil)
			if err := tr.restoreFleet(sf); err == nil {
				t.Fatal("accepted")
			}
			if tr.mixedOpen() || len(tr.fleet.win) != 0 {
				t.Error("bad evidence changed the fleet")
			}
		})
	}
	tr := newTestTracker(2, false)
	tr.restore(a, nil, nil)
	if err := tr.restoreFleet(good); err != nil || !tr.mixedOpen() {
		t.Fatalf("good evidence: %v, mixed %v", err, tr.mixedOpen())
	}
}

// recordingClient counts the writes to a storage client and keeps the last
// value written under each key: what the store holds if the process dies
// now, before Shutdown stores what is left.
type recordingClient struct {
	storage.Client
	mu   sync.Mutex
	sets map[string]int
	last map[string][]byte
}

func (c *recordingClient) Set(ctx context.Context, key string, value []byte) error {
	c.mu.Lock()
	c.sets[key]++
	c.last[key] = slices.Clone(value)
	c.mu.Unlock()
	return c.Client.Set(ctx, key, value)
}

func (c *recordingClient) writes() (n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.sets {
		n += k
	}
	return n
}

// TestMixedStateWrites: a rollout's evidence is not rewritten on every
// probe, and what is stored mid-rollout is enough. Go-sdk servers behind a
// 50/50 balancer for 60 probes: the state is written when the rollout
// starts, when the mixed state opens or grows, and every
// evidenceStoreEvery probes while only the evidence grows; the drift
// history only when a drift enters it. Then the process dies without
// Shutdown: a receiver started on what the store held keeps the mixed
// state (no second open event), and when the fleet converges reports one
// drift within 2 probes, no false one.
func TestMixedStateWrites(t *testing.T) {
	a, b := sdkBackends(t, false)
	lb, url := newTestBalancer(t, a, b, perConnection, false, 3)
	cfg := e2eConfig(httpTarget("svc", url))
	cfg.Storage = &storageID
	ctx := context.Background()
	r, logs, _ := startManualOn(t, cfg, newProber(cfg), newStorageHost(t, t.TempDir(), nil))
	rec := &recordingClient{Client: r.store.client, sets: map[string]int{}, last: map[string][]byte{}}
	r.store.client = rec
	tgt := r.targets[0]
	for range 3 {
		r.runProbe(ctx, tgt)
	}
	before := rec.writes()
	lb.setShare(0.5)
	const split = 60
	for range split {
		r.runProbe(ctx, tgt)
	}
	if !tgt.tracker.mixedOpen() {
		t.Fatalf("no mixed state in %d probes of a 50/50 fleet", split)
	}
	writes := rec.writes() - before
	t.Logf("%d writes in %d probes of a 50/50 fleet (%v)", writes, split, rec.sets)
	// The rollout starts, the mixed state opens, and the coarse writes of
	// the growing evidence; a write per probe (or two, with the history)
	// was the rule before.
	if limit := 2 + split/evidenceStoreEvery; writes > limit {
		t.Errorf("%d writes in %d probes of a split fleet, want at most %d", writes, split, limit)
	}
	if n := rec.sets[historyKey("svc")]; n != 0 {
		t.Errorf("the drift history was written %d times while no drift entered it", n)
	}
	if n := len(eventsNamed(logs, semconv.EventDrift)); n != 0 {
		t.Fatalf("%d drifts while the fleet was split", n)
	}

	// The process dies here: a new receiver starts on what the store held.
	dir := t.TempDir()
	withStoredValues(t, dir, func(c storage.Client) {
		for k, v := range rec.last {
			if err := c.Set(ctx, k, v); err != nil {
				t.Fatal(err)
			}
		}
	})
	r2, logs2, _ := startManualOn(t, cfg, newProber(cfg), newStorageHost(t, dir, nil))
	tgt2 := r2.targets[0]
	if !tgt2.tracker.mixedOpen() {
		t.Fatal("the mixed state did not survive a restart without Shutdown")
	}
	lb.setShare(1)
	for i := 0; len(eventsNamed(logs2, semconv.EventDrift)) == 0; i++ {
		if i == 2 {
			t.Fatal("no drift within 2 probes of the fleet converging, after a restart without Shutdown")
		}
		r2.runProbe(ctx, tgt2)
	}
	for range 5 {
		r2.runProbe(ctx, tgt2)
	}
	if n := len(eventsNamed(logs2, semconv.EventDrift)); n != 1 {
		t.Errorf("%d drifts after the fleet converged, want 1", n)
	}
	for _, m := range eventsNamed(logs2, semconv.EventMixedContract) {
		if attrStr(m, semconv.MixedState) == "open" {
			t.Error("the restarted receiver opened the mixed state again")
		}
	}
}
