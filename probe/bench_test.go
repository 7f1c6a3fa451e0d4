package probe

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/testkit/benchutil"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// BenchmarkProbe measures probe throughput against loopback Go SDK servers
// with 100 tools each, at 1, 16 and 128 concurrent probes. Each snapshot is
// server/discover plus two complete listing rounds (tools, prompts,
// resources, templates), the settle window shortened to 1ns so the figure
// is CPU, not waiting.
//
// The servers run in a child process, so this process's CPU time and
// allocations are the probe's (plus net/http's) alone: cpu-ms/snapshot,
// snapshots/s/core (its inverse: what one core sustains) and
// allocs/snapshot. The baseline, measured in the same run with the same
// number of snapshots and concurrency, makes the same HTTP requests with a
// bare http.Client and reads the bodies without parsing (the least any
// client can do); cpu-vs-raw is the probe's CPU time over the baseline's.
func BenchmarkProbe(b *testing.B) {
	const tools = 100
	urls := testservers.SpawnSelf(b, httpServersEnv, 4)
	o := Options{Timeout: time.Minute, Settle: time.Nanosecond}
	for _, conc := range []int{1, 16, 128} {
		b.Run(fmt.Sprintf("stateless/concurrency=%d", conc), func(b *testing.B) {
			var next atomic.Int64
			probeOnce := func() error {
				url := urls[next.Add(1)%int64(len(urls))]
				s, err := Probe(context.Background(), Target{URL: url}, o)
				if err == nil && len(s.Tools) != tools {
					err = fmt.Errorf("listed %d tools", len(s.Tools))
				}
				return err
			}
			raw := newRawClient()
			rawOnce := func() error { return raw.snapshot(urls[next.Add(1)%int64(len(urls))]) }

			b.ReportAllocs()
			probeCost := measure(b, b.N, conc, probeOnce)
			baseCost := measure(b, b.N, conc, rawOnce)
			n := float64(b.N)
			cpuMS := probeCost.cpu.Seconds() * 1000 / n
			b.ReportMetric(n/probeCost.wall.Seconds(), "snapshots/s")
			b.ReportMetric(cpuMS, "cpu-ms/snapshot")
			b.ReportMetric(1000/cpuMS, "snapshots/s/core")
			b.ReportMetric(float64(probeCost.mallocs)/n, "allocs/snapshot")
			b.ReportMetric(probeCost.cpu.Seconds()/baseCost.cpu.Seconds(), "cpu-vs-raw")
		})
	}
}

type cost struct {
	wall, cpu time.Duration
	mallocs   uint64
}

// measure runs f n times over conc goroutines; the first call is b's timed loop.
func measure(b *testing.B, n, conc int, f func() error) cost {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m0, cpu0, start := ms.Mallocs, benchutil.CPUTime(), time.Now()
	var wg sync.WaitGroup
	var left atomic.Int64
	left.Store(int64(n))
	errs := make(chan error, conc)
	for range conc {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := f(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	c := cost{wall: time.Since(start), cpu: benchutil.CPUTime() - cpu0}
	runtime.ReadMemStats(&ms)
	c.mallocs = ms.Mallocs - m0
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return c
}

// rawClient makes the requests of one snapshot with no protocol logic.
type rawClient struct{ client *http.Client }

func newRawClient() *rawClient {
	return &rawClient{client: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
}

const rawMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func (r *rawClient) snapshot(url string) error {
	methods := []string{"server/discover"}
	for range 2 {
		methods = append(methods, "tools/list", "prompts/list", "resources/list", "resources/templates/list")
	}
	for i, m := range methods {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s}}`, i+1, m, rawMeta)
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(headerProtocolVersion, modernVersion)
		req.Header.Set(headerMethod, m)
		resp, err := r.client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %d %v", m, resp.StatusCode, err)
		}
	}
	return nil
}

// BenchmarkServerRequestFlood measures what a server that streams thousands
// of requests to the client (roots/list) in one tools/list response costs
// the probe: bytes allocated and the peak of live heap per probe, and the
// replies it posted back. The server (in a child process) answers the
// listing only once every request was answered. The baseline, in the same
// run, is a probe of the same server streaming 3 requests; alloc-vs-3 is
// the flood's allocation over it.
func BenchmarkServerRequestFlood(b *testing.B) {
	base := testservers.SpawnSelf(b, floodServerEnv, 1)[0]
	o := Options{Timeout: 30 * time.Second, Settle: DefaultSettle}
	replies := func() int64 {
		resp, err := http.Get(base + "/replies")
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var n int64
		_, _ = fmt.Fscan(resp.Body, &n)
		return n
	}
	probe := func(n int) (alloc, peak uint64, posted int64, err error) {
		posted = -replies()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		alloc0, heap0 := ms.TotalAlloc, ms.HeapAlloc
		stop := make(chan struct{})
		peaks := make(chan uint64)
		go func() { peaks <- heapPeak(stop) }()
		_, err = Probe(context.Background(), Target{URL: fmt.Sprintf("%s/mcp?n=%d", base, n)}, o)
		close(stop)
		peak = <-peaks
		runtime.ReadMemStats(&ms)
		return ms.TotalAlloc - alloc0, max(peak, heap0) - heap0, posted + replies(), err
	}
	for _, n := range []int{5000, 20000} {
		b.Run(fmt.Sprintf("requests=%d", n), func(b *testing.B) {
			var alloc, peak, baseAlloc uint64
			var posted int64
			var last error
			for b.Loop() {
				a, p, r, err := probe(n)
				alloc, peak, posted, last = alloc+a, max(peak, p), posted+r, err
			}
			for range b.N {
				a, _, _, err := probe(3)
				if err != nil {
					b.Fatalf("the baseline probe failed: %v", err)
				}
				baseAlloc += a
			}
			nf := float64(b.N)
			b.ReportMetric(float64(alloc)/nf/(1<<20), "alloc-MB/probe")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(posted)/nf, "replies/probe")
			b.ReportMetric(float64(alloc)/float64(baseAlloc), "alloc-vs-3")
			b.Logf("last outcome: %v", last)
		})
	}
}

// heapPeak samples the live heap until stop is closed and returns its peak.
func heapPeak(stop <-chan struct{}) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		metrics.Read(sample)
		peak = max(peak, sample[0].Value.Uint64())
		select {
		case <-stop:
			return peak
		case <-t.C:
		}
	}
}
