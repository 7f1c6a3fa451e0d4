package mcpdriftreceiver

import (
	"context"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
)

// Prompt probes: the mcpimpact processor asks, through the control plane,
// for a probe of a target out of its schedule when a call carries a tool
// digest no probe has shown yet. The probe is an ordinary one (the tracker
// sees it like any other); whoever asked gets what it observed.

// promptWaiters are the requests for a target's next probe.
type promptWaiters struct {
	mu      sync.Mutex
	waiting []promptWaiter
}

type promptWaiter struct {
	since time.Time // the request's time: only a probe started later answers it
	done  func(controlplane.Observation)
}

func (w *promptWaiters) add(since time.Time, done func(controlplane.Observation)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waiting = append(w.waiting, promptWaiter{since: since, done: done})
}

// take removes and returns the requests a probe started at started answers.
func (w *promptWaiters) take(started time.Time) []promptWaiter {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out, keep []promptWaiter
	for _, pw := range w.waiting {
		if pw.since.After(started) {
			keep = append(keep, pw)
		} else {
			out = append(out, pw)
		}
	}
	w.waiting = keep
	return out
}

func (w *promptWaiters) pending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.waiting) > 0
}

// answer hands a probe's observation to the requests it answers.
func (t *target) answer(started time.Time, obs controlplane.Observation) {
	for _, pw := range t.prompt.take(started) {
		pw.done(obs)
	}
}

// observation is what a probe tells whoever asked for it.
func observation(name string, snap *contract.Snapshot, at time.Time, err error) controlplane.Observation {
	obs := controlplane.Observation{Server: name, At: at.UTC(), Err: err}
	if err == nil {
		obs.ToolDigests = toolDigests(snap, nil)
	}
	return obs
}

// probeAndAnswer probes t, which the caller holds (t.running), again while
// requests wait that arrived after the last probe started (each one probe,
// so a stream of requests cannot hold the target: the processor limits its
// own rate), and then lets go of t. A request that arrives between the
// loop's last look and letting go finds t held and leaves itself to this
// loop, so the loop looks once more after letting go and, if it can take t
// back, probes for it; if it cannot, whoever took t probes after the
// request and answers it.
func (r *driftReceiver) probeAndAnswer(ctx context.Context, t *target) {
	for {
		r.runProbe(ctx, t)
		if ctx.Err() == nil && t.prompt.pending() {
			continue
		}
		if r.beforeRelease != nil {
			r.beforeRelease(t)
		}
		t.running.Store(false)
		if ctx.Err() != nil || !t.prompt.pending() || !t.running.CompareAndSwap(false, true) {
			return
		}
	}
}

// ProbeNow starts a probe of the target at once unless one is running; a
// running probe that started before the request is followed by one more.
func (v driftView) ProbeNow(server string, done func(controlplane.Observation)) bool {
	r := v.r
	t, err := v.target(server)
	if err != nil || r.runCtx == nil || r.runCtx.Err() != nil {
		return false
	}
	t.prompt.add(r.now(), done)
	if !t.running.CompareAndSwap(false, true) {
		return true // the running probe's loop takes the request
	}
	r.prompts.Add(1)
	go func() {
		defer r.prompts.Done()
		r.probeAndAnswer(r.runCtx, t)
	}()
	return true
}

var _ controlplane.PromptProber = driftView{}
