package scaleout

import (
	"context"
	"fmt"
	"time"
)

// Run is one throughput measurement.
type Run struct {
	Spans   int
	Elapsed time.Duration            // from the first request sent to the last span stored
	CPU     time.Duration            // CPU time the measured Collectors used meanwhile
	CPUBy   map[string]time.Duration // the same, by Collector name
}

// SpansPerSecond is the throughput the run measured.
func (r Run) SpansPerSecond() float64 { return float64(r.Spans) / r.Elapsed.Seconds() }

// CPUPerSpan is the Collectors' CPU time per span, in microseconds.
func (r Run) CPUPerSpan() float64 { return float64(r.CPU.Microseconds()) / float64(r.Spans) }

// Measure sends n spans of load to endpoint and waits until stores have
// received them all: the spans went through every Collector on the way.
// The CPU time is that of collectors over the same interval.
func Measure(ctx context.Context, load Load, endpoint string, n int, stores []*Store, collectors []*Collector) (Run, error) {
	stored := func() int64 {
		var sum int64
		for _, s := range stores {
			sum += s.Spans()
		}
		return sum
	}
	cpu := func() (map[string]time.Duration, error) {
		by := map[string]time.Duration{}
		for _, c := range collectors {
			d, err := c.Proc().CPUTime()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Name, err)
			}
			by[c.Name] = d
		}
		return by, nil
	}
	before := stored()
	cpuBefore, err := cpu()
	if err != nil {
		return Run{}, err
	}
	start := time.Now()
	sent, err := load.Send(ctx, endpoint, n)
	if err != nil {
		return Run{}, err
	}
	for stored()-before < int64(sent) {
		select {
		case <-ctx.Done():
			return Run{}, fmt.Errorf("%d of %d spans reached the stores: %w", stored()-before, sent, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	elapsed := time.Since(start)
	cpuAfter, err := cpu()
	if err != nil {
		return Run{}, err
	}
	r := Run{Spans: sent, Elapsed: elapsed, CPUBy: map[string]time.Duration{}}
	for name, d := range cpuAfter {
		r.CPUBy[name] = d - cpuBefore[name]
		r.CPU += r.CPUBy[name]
	}
	return r, nil
}
