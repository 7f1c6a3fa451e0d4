// Package benchutil helps benchmarks compare against a baseline in the same
// run: testing.Benchmark cannot be nested inside a running benchmark, so the
// baseline is timed by hand over as many iterations as the benchmark ran.
package benchutil

import (
	"runtime"
	"slices"
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

// Latencies records the wall and thread CPU time of each operation of a
// benchmark, for percentiles.
type Latencies struct {
	wall, cpu []time.Duration
}

// Loop is b's loop over op, each run timed, on one locked thread (so the
// thread's CPU time is the operation's), allocations reported.
func (l *Latencies) Loop(b *testing.B, op func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	for b.Loop() {
		l.Time(op)
	}
}

// Time runs op once and records how long it took; lock the goroutine to
// its thread (runtime.LockOSThread) around the calls.
func (l *Latencies) Time(op func()) {
	start, startCPU := time.Now(), ThreadCPUTime()
	op()
	l.cpu = append(l.cpu, ThreadCPUTime()-startCPU)
	l.wall = append(l.wall, time.Since(start))
}

// Report reports the 50th and 99th percentile of wall time (p50-ms,
// p99-ms) and the 99th of thread CPU time (p99-cpu-ms), in milliseconds.
func (l *Latencies) Report(b *testing.B) {
	slices.Sort(l.wall)
	slices.Sort(l.cpu)
	b.ReportMetric(ms(percentile(l.wall, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(l.wall, 99)), "p99-ms")
	b.ReportMetric(ms(percentile(l.cpu, 99)), "p99-cpu-ms")
}

// P50 returns the median wall time so far.
func (l *Latencies) P50() time.Duration {
	sorted := slices.Clone(l.wall)
	slices.Sort(sorted)
	return percentile(sorted, 50)
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// percentile returns the p-th percentile (0 < p <= 100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
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
	cpu    time.Duration // the calling thread's CPU time (ThreadCPUTime)
	allocs uint64
	bytes  uint64
	n      int
}

// Interleave runs the variants in alternating rounds of b.N/rounds calls
// each, so machine noise hits them alike, and returns the mean ns, thread
// CPU ns and allocations per call of each. b's own timer is stopped
// throughout. The calls run on one locked thread, so its CPU time is
// theirs (for calls that do their work on the calling goroutine).
func Interleave(b *testing.B, rounds int, vs ...*Variant) {
	b.StopTimer()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rounds = max(min(rounds, b.N), 1)
	var ms runtime.MemStats
	for r := 0; r < rounds; r++ {
		per := b.N / rounds
		if r < b.N%rounds {
			per++ // b.N calls in all, so b's ns/op is right
		}
		for _, v := range vs {
			runtime.ReadMemStats(&ms)
			before, beforeBytes := ms.Mallocs, ms.TotalAlloc
			if v.Timed {
				b.StartTimer()
			}
			start, startCPU := time.Now(), ThreadCPUTime()
			for range per {
				if err := v.Call(); err != nil {
					b.Fatalf("%s: %v", v.Name, err)
				}
			}
			v.ns += time.Since(start)
			v.cpu += ThreadCPUTime() - startCPU
			if v.Timed {
				b.StopTimer()
			}
			runtime.ReadMemStats(&ms)
			v.allocs += ms.Mallocs - before
			v.bytes += ms.TotalAlloc - beforeBytes
			v.n += per
		}
	}
}

// NsPerCall, CPUNsPerCall, AllocsPerCall and BytesPerCall report a
// variant's mean cost. On a loaded machine the thread CPU time leaves out
// the time the calls waited for a CPU.
func (v *Variant) NsPerCall() float64     { return float64(v.ns.Nanoseconds()) / float64(max(v.n, 1)) }
func (v *Variant) CPUNsPerCall() float64  { return float64(v.cpu.Nanoseconds()) / float64(max(v.n, 1)) }
func (v *Variant) AllocsPerCall() float64 { return float64(v.allocs) / float64(max(v.n, 1)) }
func (v *Variant) BytesPerCall() float64  { return float64(v.bytes) / float64(max(v.n, 1)) }
