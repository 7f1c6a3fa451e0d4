package maxprocs

import (
	"runtime"
	"testing"
	"time"
)

// TestStep drives the governor with the CPU shares of successive ticks and
// checks the counts it sets: 0.7 of a core raises at once, a quiet spell
// of lowerAfter ticks lowers, and one busy tick in the spell starts it over.
func TestStep(t *testing.T) {
	var sets []int
	start := time.Unix(1000, 0)
	g := &governor{set: func(n int) { sets = append(sets, n) }, lastAt: start}
	var cpu time.Duration
	now := start
	run := func(share float64, ticks int) {
		for range ticks {
			now = now.Add(tick)
			cpu += time.Duration(share * float64(tick))
			g.step(cpu, now)
		}
	}
	want := func(step string, w ...int) {
		t.Helper()
		if len(sets) != len(w) {
			t.Fatalf("%s: set %v, want %v", step, sets, w)
		}
		for i := range w {
			if sets[i] != w[i] {
				t.Fatalf("%s: set %v, want %v", step, sets, w)
			}
		}
	}
	run(0.6, 20)
	want("under raiseAt on one processor")
	run(0.8, 1)
	want("one tick over raiseAt", 0)
	run(0.8, 5)
	run(0.4, 30)
	want("between the thresholds: stays raised", 0)
	run(0.1, lowerAfter-1)
	run(0.35, 1)
	run(0.1, lowerAfter-1)
	want("a busy tick in the quiet spell", 0)
	run(0.1, 1)
	want("lowerAfter quiet ticks in a row", 0, 1)
	run(0.69, 10)
	want("just under raiseAt", 0, 1)
	run(2, 1)
	want("raised again", 0, 1, 0)
	g.step(cpu, now) // no time passed: nothing to judge
	want("a tick of no length", 0, 1, 0)
}

// TestGovern checks that the process runs on one processor while governed
// and on the runtime's default again once stopped; with GOMAXPROCS in the
// environment nothing changes.
func TestGovern(t *testing.T) {
	def := runtime.GOMAXPROCS(0)
	if def <= 1 {
		t.Skip("the default is one processor here: nothing to govern")
	}
	if _, ok := processCPU(); !ok {
		t.Skip("no process CPU time on this platform: the default stands")
	}
	stop := Govern()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		stop()
		t.Fatalf("governed: GOMAXPROCS %d, want 1", n)
	}
	stop()
	if n := runtime.GOMAXPROCS(0); n != def {
		t.Fatalf("after stop: GOMAXPROCS %d, want the default %d", n, def)
	}

	t.Setenv("GOMAXPROCS", "2")
	runtime.GOMAXPROCS(2)
	stop = Govern()
	n := runtime.GOMAXPROCS(0)
	stop()
	if n != 2 {
		t.Fatalf("with GOMAXPROCS=2 in the environment: governed to %d", n)
	}
	runtime.SetDefaultGOMAXPROCS()
}
