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

// Mallocs counts the heap allocations of one call: unlike time, it does not
// depend on what else the machine runs, so its ratios are exact.
func Mallocs(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}
