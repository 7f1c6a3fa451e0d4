// Package benchutil helps benchmarks compare against a baseline in the same
// run: testing.Benchmark cannot be nested inside a running benchmark, so the
// baseline is timed by hand over as many iterations as the benchmark ran.
package benchutil

import (
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

// ThreadCPUTime returns the user plus system CPU time of the calling OS
// thread (Linux; lock the goroutine to its thread around what is timed).
// Unlike wall time it leaves out the time the thread waited for a CPU, so a
// latency measured with it says what the code costs on a machine other
// processes are loading.
func ThreadCPUTime() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	_ = syscall.Getrusage(rusageThread, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Percentile returns the p-th percentile (0 < p <= 100) of sorted durations.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
