package mcpdriftreceiver

import (
	"container/heap"
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// scheduler runs every target's probe on its own fixed-rate schedule. One
// goroutine keeps a heap of due times; each due probe runs in its own
// goroutine. A target has at most one probe in flight: a target whose
// previous probe still runs skips that tick.
//
// Probes share maxInFlight slots, but a probe holds its slot only for its
// target's share of the slot time (see slotBudget). A probe that runs longer
// gives its slot back and finishes "overtime", bounded by the probe timeout,
// so a server that hangs delays nobody but itself: the slots keep turning
// over for the healthy targets whatever part of the fleet hangs.
type scheduler struct {
	now          func() time.Time
	maxInFlight  int
	timeout      time.Duration // the probe timeout
	initialDelay time.Duration
	// run probes t, which the scheduler took (t.running), and lets go of it.
	run     func(ctx context.Context, t *target)
	onStart func(t *target, due, started time.Time)
}

// minSlotBudget is the least slot budget: below it, healthy probes (TLS,
// listing, settle) would go overtime as a matter of course, and on a busy
// CPU overtime would only add concurrency. Overtime is for the slow, not
// for the busy.
const minSlotBudget = time.Second

// slotBudget is how long one probe of a target may hold a shared slot: the
// target's fair share of the slots' time, maxInFlight × interval ÷ targets
// (if every target used its whole share every interval the slots would just
// be busy), at least minSlotBudget, and never more than the probe timeout.
func slotBudget(maxInFlight, targets int, interval, timeout time.Duration) time.Duration {
	share := interval * time.Duration(maxInFlight) / time.Duration(targets)
	return min(timeout, max(share, minSlotBudget))
}

type scheduled struct {
	t      *target
	budget time.Duration
}

type dueEntry struct {
	due time.Time
	s   *scheduled
}

type dueHeap []dueEntry

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueEntry)) }
func (h *dueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// loop runs until ctx is done, then waits for in-flight probes to return.
func (s *scheduler) loop(ctx context.Context, targets []*target) {
	var wg sync.WaitGroup
	defer wg.Wait()
	if len(targets) == 0 {
		<-ctx.Done()
		return
	}
	sem := make(chan struct{}, s.maxInFlight)
	start := s.now().Add(s.initialDelay)
	h := make(dueHeap, 0, len(targets))
	for _, t := range targets {
		// Spread first probes over one interval so a fleet does not probe in lockstep.
		jitter := time.Duration(rand.Int64N(int64(t.interval)))
		budget := slotBudget(s.maxInFlight, len(targets), t.interval, s.timeout)
		h = append(h, dueEntry{due: start.Add(jitter), s: &scheduled{t: t, budget: budget}})
	}
	heap.Init(&h)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		wait := h[0].due.Sub(s.now())
		if wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			return
		}
		now := s.now()
		for h[0].due.Compare(now) <= 0 {
			e := heap.Pop(&h).(dueEntry)
			s.dispatch(ctx, &wg, sem, e)
			// Fixed rate: the next probe is due one interval after this one
			// was due; ticks missed while the process stalled are skipped.
			interval := e.s.t.interval
			next := e.due.Add(interval)
			if behind := now.Sub(next); behind > 0 {
				next = next.Add((behind/interval + 1) * interval)
			}
			heap.Push(&h, dueEntry{due: next, s: e.s})
		}
	}
}

// dispatch starts a due probe unless its target's previous one still runs.
// The probe waits for a slot (first come, first served) and gives it
// back when it returns or when its slot budget is spent, whichever is first.
func (s *scheduler) dispatch(ctx context.Context, wg *sync.WaitGroup, sem chan struct{}, e dueEntry) {
	t := e.s.t
	if !t.running.CompareAndSwap(false, true) {
		t.skipped.Add(1)
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			t.running.Store(false)
			return
		}
		var once sync.Once
		overtime := time.AfterFunc(e.s.budget, func() {
			once.Do(func() {
				t.overtime.Add(1)
				<-sem
			})
		})
		defer func() {
			overtime.Stop()
			once.Do(func() { <-sem })
		}()
		if s.onStart != nil {
			s.onStart(t, e.due, s.now())
		}
		s.run(ctx, t)
	}()
}
