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
// goroutine, limited to maxInFlight at once. A target whose previous probe is
// still running skips that tick (probes are bounded by the probe timeout), so
// a server that hangs delays nobody but itself.
type scheduler struct {
	now          func() time.Time
	maxInFlight  int
	initialDelay time.Duration
	run          func(ctx context.Context, t *target)
	onStart      func(t *target, due, started time.Time)
}

type dueEntry struct {
	due time.Time
	t   *target
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
		h = append(h, dueEntry{due: start.Add(jitter), t: t})
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
			next := e.due.Add(e.t.interval)
			if behind := now.Sub(next); behind > 0 {
				next = next.Add((behind/e.t.interval + 1) * e.t.interval)
			}
			heap.Push(&h, dueEntry{due: next, t: e.t})
		}
	}
}

func (s *scheduler) dispatch(ctx context.Context, wg *sync.WaitGroup, sem chan struct{}, e dueEntry) {
	if !e.t.running.CompareAndSwap(false, true) {
		e.t.skipped.Add(1)
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer e.t.running.Store(false)
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-sem }()
		if s.onStart != nil {
			s.onStart(e.t, e.due, s.now())
		}
		s.run(ctx, e.t)
	}()
}
