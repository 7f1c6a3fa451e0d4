package mcpdriftreceiver

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
)

// onTimeTolerance is how late a probe may start against its schedule and
// still count as on time: a tenth of its target's interval.
func onTimeTolerance(interval time.Duration) time.Duration { return interval / 10 }

// intervalRecorder watches the probe starts of some targets whose due time
// falls in [from, to): it keeps their lateness and counts the intervals that
// started on time. An interval whose probe started late, or never (a skipped
// tick), is not on time.
type intervalRecorder struct {
	watch    func(*target) bool // nil: every target
	mu       sync.Mutex
	from, to time.Time
	onTime   int
	lateness []time.Duration
}

func (r *intervalRecorder) measure(from, to time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.from, r.to = from, to
}

func (r *intervalRecorder) onStart(t *target, due, started time.Time) {
	if r.watch != nil && !r.watch(t) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if due.Before(r.from) || !due.Before(r.to) {
		return
	}
	late := started.Sub(due)
	r.lateness = append(r.lateness, late)
	if late <= onTimeTolerance(t.interval) {
		r.onTime++
	}
}

// onTimeFraction is the share of the watched targets' intervals in the
// window that started on time. Each target has exactly window/interval due
// times in a window that is a whole number of intervals long.
func (r *intervalRecorder) onTimeFraction(targets int, interval time.Duration) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	due := targets * int(r.to.Sub(r.from)/interval)
	return float64(r.onTime) / float64(due)
}

// latenessAt returns the q-quantile of the recorded lateness (0 when none).
func (r *intervalRecorder) latenessAt(q float64) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lateness) == 0 {
		return 0
	}
	late := slices.Sorted(slices.Values(r.lateness))
	return late[int(q*float64(len(late)-1))]
}

// hangingProber hangs on odd-numbered targets until the probe's context
// ends; the others answer after work (a healthy probe's own duration).
type hangingProber struct {
	work time.Duration
	snap *contract.Snapshot
}

func hangs(t *target) bool {
	var i int
	_, _ = fmt.Sscanf(t.name, "t%d", &i)
	return i%2 == 1
}

func (p *hangingProber) probe(ctx context.Context, t *target, _ bool) (*contract.Snapshot, error) {
	if hangs(t) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	select {
	case <-time.After(p.work):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s := *p.snap
	return &s, nil
}

// fakeFleet is a receiver with the default configuration but for the
// interval and tweak, probing targets t000, t001, ... with a hangingProber
// whose healthy probes take work.
func fakeFleet(t *testing.T, targets int, interval, work time.Duration, tweak func(*Config)) *driftReceiver {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.CollectionInterval = interval
	for i := range targets {
		cfg.Targets = append(cfg.Targets, TargetConfig{Name: fmt.Sprintf("t%03d", i), Command: []string{"server"}})
	}
	if tweak != nil {
		tweak(cfg)
	}
	r, err := newDriftReceiver(receiverSettings(), cfg, &hangingProber{work: work, snap: snap(t, map[string]string{"search": "Search"})})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runFor runs the receiver for d (of the bubble's virtual time).
func runFor(t *testing.T, r *driftReceiver, d time.Duration) {
	t.Helper()
	if err := r.Start(context.Background(), &storageHost{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(d)
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func oneSlot(cfg *Config) { cfg.MaxConcurrentProbes = 1 }

// TestHungTargetsDoNotStarveHealthyOnes is the fleet of issue 11: 200
// targets at a 5 s interval, half of them hanging until the probe timeout,
// every other setting at its default (max_concurrent_probes 32, timeout
// 30 s); healthy probes take 500 ms (the default settle). It runs in a
// synctest bubble, so time is virtual and the figures are exact: at least
// 95 % of the healthy targets' intervals must start within a tenth of the
// interval of their due time.
func TestHungTargetsDoNotStarveHealthyOnes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			targets  = 200
			interval = 5 * time.Second
			window   = 60 * time.Second
		)
		r := fakeFleet(t, targets, interval, 500*time.Millisecond, nil)
		rec := &intervalRecorder{watch: func(t *target) bool { return !hangs(t) }}
		r.onProbeStart = rec.onStart
		// Measure from one interval after start, once every target has had
		// its first (jittered) due time, for the 60 s.
		start := time.Now()
		rec.measure(start.Add(interval), start.Add(interval+window))
		runFor(t, r, interval+window+interval)
		onTime := rec.onTimeFraction(targets/2, interval)
		t.Logf("%.1f %% of the healthy targets' intervals started on time; p99 lateness %v", 100*onTime, rec.latenessAt(0.99))
		if onTime < 0.95 {
			t.Errorf("%.1f %% of the healthy targets' intervals started on time, want >= 95 %%", 100*onTime)
		}
		for _, tg := range r.targets {
			if !hangs(tg) && tg.lastErrorClass() != "none" {
				t.Errorf("healthy target %s: last probe %q, want none", tg.name, tg.lastErrorClass())
			}
		}
	})
}

// TestOvertimeProbeGivesItsSlotBack: one slot, two targets at 10 s, so a
// probe's slot budget is 5 s. t001 hangs until its 30 s timeout; t000's
// probes take 3 s. t000 must never skip a tick: t001's probe gives the slot
// back after 5 s and times out overtime.
func TestOvertimeProbeGivesItsSlotBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := fakeFleet(t, 2, 10*time.Second, 3*time.Second, oneSlot)
		runFor(t, r, 2*time.Minute)
		healthy, hung := r.targets[0], r.targets[1]
		if n, skipped := healthy.probes.Load(), healthy.skipped.Load(); n < 11 || skipped > 0 {
			t.Errorf("t000: %d probes in 2 min at 10 s, %d ticks skipped waiting for the slot", n, skipped)
		}
		if healthy.lastErrorClass() != "none" || healthy.overtime.Load() != 0 {
			t.Errorf("t000: last probe %s, %d overtime", healthy.lastErrorClass(), healthy.overtime.Load())
		}
		if hung.overtime.Load() == 0 || hung.lastErrorClass() != "timeout" {
			t.Errorf("t001: %d probes overtime, last error %s; want overtime probes that time out", hung.overtime.Load(), hung.lastErrorClass())
		}
	})
}

// TestOvertimeProbeIsNotCutShort: a probe that outruns its slot budget (one
// slot, one target at 2 s: the budget is 2 s) finishes and succeeds.
func TestOvertimeProbeIsNotCutShort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := fakeFleet(t, 1, 2*time.Second, 3*time.Second, oneSlot)
		runFor(t, r, 30*time.Second)
		tg := r.targets[0]
		if tg.overtime.Load() == 0 || tg.probes.Load() < 5 || tg.lastErrorClass() != "none" {
			t.Errorf("%d probes, %d overtime, last %s: want overtime probes that succeed", tg.probes.Load(), tg.overtime.Load(), tg.lastErrorClass())
		}
	})
}
