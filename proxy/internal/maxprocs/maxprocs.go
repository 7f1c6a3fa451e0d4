// Package maxprocs sizes the HTTP → HTTP proxy's processor count (GOMAXPROCS)
// to the work it has. A proxy between one agent and its server spends most
// of a call waiting; each wait idles every processor, and each wake-up then
// starts a second OS thread spinning for work, wakes the runtime's monitor
// (sysmon, which then polls every 20 µs until all processors idle again) and
// hands goroutines between threads. On one processor a call makes half the
// context switches and costs ≈ 0.75× the CPU (docs/proxy.md "Measured"),
// but one processor cannot serve more than one core's worth of calls. So
// the governor runs the process on one processor while its CPU use stays
// well under a core, gives it the runtime's default as soon as one core's
// worth is near, and goes back to one after a quiet spell.
//
// A GOMAXPROCS environment variable is the user's choice: then, or where the
// default is one processor anyway, or the process CPU time cannot be read,
// nothing is changed.
package maxprocs

import (
	"os"
	"runtime"
	"time"
)

const (
	tick = 200 * time.Millisecond // how often the process's CPU use is read
	// raiseAt is the share of one core, over one tick, at which one
	// processor is too few: the process's CPU time counts its other
	// threads too (the runtime's monitor, system calls), so at 0.7 the
	// one processor is busy about half the time, and calls begin to queue
	// for it.
	raiseAt = 0.7
	// lowerAt is the share of one core under which, for lowerAfter ticks
	// in a row, one processor is enough again: below raiseAt by more than
	// what a call costs more on several processors (≈ 1.4×), so the load
	// that raised the count does not lower it at once.
	lowerAt    = 0.3
	lowerAfter = 10
)

// governor decides the processor count from the CPU time used per tick.
type governor struct {
	set     func(n int) // sets the count: 0 is the runtime's default
	raised  bool        // at the default, not one
	quiet   int         // ticks in a row under lowerAt while raised
	lastCPU time.Duration
	lastAt  time.Time
}

// step takes the process's CPU time so far at now, and sets the count the
// tick since the last step calls for.
func (g *governor) step(cpu time.Duration, now time.Time) {
	wall := now.Sub(g.lastAt)
	used := cpu - g.lastCPU
	g.lastCPU, g.lastAt = cpu, now
	if wall <= 0 {
		return
	}
	share := float64(used) / float64(wall)
	switch {
	case !g.raised && share >= raiseAt:
		g.raised, g.quiet = true, 0
		g.set(0)
	case g.raised && share < lowerAt:
		if g.quiet++; g.quiet >= lowerAfter {
			g.raised, g.quiet = false, 0
			g.set(1)
		}
	case g.raised:
		g.quiet = 0
	}
}

// Govern runs the process on one processor and adjusts the count every
// tick until the returned stop is called, which restores the runtime's
// default (and its own updates of it) before it returns.
func Govern() (stop func()) {
	_, cpuOK := processCPU()
	if os.Getenv("GOMAXPROCS") != "" || runtime.GOMAXPROCS(0) <= 1 || !cpuOK {
		return func() {}
	}
	g := &governor{set: setProcs}
	g.lastCPU, _ = processCPU()
	g.lastAt = time.Now()
	setProcs(1)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-quit:
				setProcs(0)
				return
			case now := <-t.C:
				cpu, _ := processCPU()
				g.step(cpu, now)
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// setProcs sets GOMAXPROCS to n, or to the runtime's default (which the
// runtime then keeps current with the CPU quota) for 0.
func setProcs(n int) {
	if n == 0 {
		runtime.SetDefaultGOMAXPROCS()
		return
	}
	runtime.GOMAXPROCS(n)
}
