// Package benchutil helps benchmarks compare against a baseline in the same
// run: testing.Benchmark cannot be nested inside a running benchmark, so the
// baseline is timed by hand over as many iterations as the benchmark ran.
package benchutil

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// NsPerOp runs f n times (at least once) and returns the mean nanoseconds per run.
func NsPerOp(n int, f func()) float64 {
	n = max(n, 1)
	start := time.Now()
	for range n {
		f()
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// Elapsed returns the mean nanoseconds per iteration of b's own timed loop.
// Call it after the loop, before starting any untimed work.
func Elapsed(b *testing.B) float64 {
	return float64(b.Elapsed().Nanoseconds()) / float64(max(b.N, 1))
}

// CPUTime returns the user plus system CPU time this process has used.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Variant is one side of an interleaved benchmark: a function making one
// call, and what it cost.
type Variant struct {
	Name string
	Call func() error
	// Timed runs the variant under b's own timer, so b's ns/op and
	// allocs/op are this variant's (set it on one variant).
	Timed  bool
	ns     time.Duration
	allocs uint64
	n      int
}

// Interleave runs the variants in alternating rounds of b.N/rounds calls
// each, so machine noise hits them alike, and returns the mean ns and
// allocations per call of each. b's own timer is stopped throughout.
func Interleave(b *testing.B, rounds int, vs ...*Variant) {
	b.StopTimer()
	rounds = max(min(rounds, b.N), 1)
	var ms runtime.MemStats
	for r := 0; r < rounds; r++ {
		per := b.N / rounds
		if r < b.N%rounds {
			per++ // b.N calls in all, so b's ns/op is right
		}
		for _, v := range vs {
			runtime.ReadMemStats(&ms)
			before := ms.Mallocs
			if v.Timed {
				b.StartTimer()
			}
			start := time.Now()
			for range per {
				if err := v.Call(); err != nil {
					b.Fatalf("%s: %v", v.Name, err)
				}
			}
			v.ns += time.Since(start)
			if v.Timed {
				b.StopTimer()
			}
			runtime.ReadMemStats(&ms)
			v.allocs += ms.Mallocs - before
			v.n += per
		}
	}
}

// NsPerCall and AllocsPerCall report a variant's mean cost.
func (v *Variant) NsPerCall() float64     { return float64(v.ns.Nanoseconds()) / float64(max(v.n, 1)) }
func (v *Variant) AllocsPerCall() float64 { return float64(v.allocs) / float64(max(v.n, 1)) }
