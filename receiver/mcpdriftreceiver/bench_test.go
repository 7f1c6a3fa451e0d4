package mcpdriftreceiver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/testkit/benchutil"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// fleetServersEnv makes the test binary serve MCP servers instead of testing
// (the fleet benchmark runs its servers in a child process, so the
// receiver's CPU time and memory are measured alone).
const fleetServersEnv = "MCPDRIFT_FLEET_SERVERS"

func init() {
	n, err := strconv.Atoi(os.Getenv(fleetServersEnv))
	if err != nil || n <= 0 {
		return
	}
	srv := newSDKServer("fleet", sdkTool("search", "Search the web"), sdkTool("fetch", "Fetch a page"),
		sdkTool("summarize", "Summarize a page"), sdkTool("translate", "Translate text"), sdkTool("extract", "Extract entities"))
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	h := &replayHandler{next: sdk, results: map[string][]byte{}}
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		go func() { _ = http.Serve(l, h) }()
		fmt.Printf("http://%s/mcp\n", l.Addr())
	}
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
	os.Exit(0)
}

// replayHandler answers each method with the result the Go SDK server gave
// the first time, so a thousand targets cost the server process little and
// the benchmark measures the receiver, not the server.
type replayHandler struct {
	next    http.Handler
	mu      sync.Mutex
	results map[string][]byte // method -> raw result
}

func (h *replayHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &req)
	h.mu.Lock()
	result, ok := h.results[req.Method]
	h.mu.Unlock()
	if !ok || len(req.ID) == 0 {
		rec := httptest.NewRecorder()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.next.ServeHTTP(rec, r)
		var resp struct {
			Result json.RawMessage `json:"result"`
		}
		if rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &resp) == nil && resp.Result != nil {
			h.mu.Lock()
			h.results[req.Method] = resp.Result
			h.mu.Unlock()
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
}

// BenchmarkReceiverFleet runs the receiver against 1,000 loopback targets
// (5-tool Go SDK servers in a child process, Streamable HTTP; each method
// answered by the SDK once and replayed after that, see replayHandler) at a 1 s
// interval for 30 s and reports: probes completed vs scheduled, p99 and max
// lateness of a probe's start against its schedule, receiver CPU time per
// probe, and Go heap per target at the end (baselines included; a 5-tool
// baseline snapshot is a few KiB). Run it with -benchtime 1x.
func BenchmarkReceiverFleet(b *testing.B) {
	const (
		targets  = 1000
		interval = time.Second
		window   = 30 * time.Second // overridden by MCPDRIFT_FLEET_WINDOW for profiling
	)
	urls := testservers.SpawnSelf(b, fleetServersEnv, 8)
	for range b.N {
		var cfgTargets []TargetConfig
		for i := range targets {
			tc := httpTarget(fmt.Sprintf("t%04d", i), fmt.Sprintf("%s?target=%d", urls[i%len(urls)], i))
			tc.Transport = TransportStreamableHTTP
			cfgTargets = append(cfgTargets, tc)
		}
		cfg := e2eConfig(cfgTargets...)
		cfg.CollectionInterval = interval
		cfg.Timeout = 10 * time.Second
		cfg.MaxConcurrentProbes = 64
		cfg.Settle = 0

		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)

		set := receiverSettings()
		r, err := newDriftReceiver(set, cfg, newProber(cfg))
		if err != nil {
			b.Fatal(err)
		}
		rec := &intervalRecorder{}
		r.onProbeStart = rec.onStart
		logs, metrics := &countingLogs{}, &countingMetrics{}
		r.setLogs(logs)
		r.setMetrics(metrics)
		if err := r.Start(context.Background(), &storageHost{}); err != nil {
			b.Fatal(err)
		}
		// Warm-up: one interval for the jittered first probes to set baselines.
		time.Sleep(interval + 500*time.Millisecond)
		probes0 := totalProbes(r, nil)
		cpu0 := benchutil.CPUTime()
		rec.measure(time.Now(), time.Now().Add(window))
		time.Sleep(window)
		probes := totalProbes(r, nil) - probes0
		cpu := benchutil.CPUTime() - cpu0

		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if err := r.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
		failed := 0
		for _, t := range r.targets {
			if t.lastErrorClass() != "none" {
				failed++
			}
		}
		if failed > 0 || logs.drifts() > 0 {
			b.Fatalf("%d targets failing, %d drifts in an unchanged fleet", failed, logs.drifts())
		}
		scheduled := float64(targets) * window.Seconds() / interval.Seconds()
		b.ReportMetric(float64(probes), "probes")
		b.ReportMetric(float64(probes)/scheduled, "completed/scheduled")
		b.ReportMetric(ms(rec.latenessAt(0.99)), "p99-lateness-ms")
		b.ReportMetric(ms(rec.latenessAt(1)), "max-lateness-ms")
		b.ReportMetric(cpu.Seconds()/float64(probes)*1000, "cpu-ms/probe")
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/targets/1024, "heap-KiB/target")
		var skipped int64
		for _, t := range r.targets {
			skipped += t.skipped.Load()
		}
		b.ReportMetric(float64(skipped), "skipped-ticks")
	}
}

// totalProbes counts the probes completed by the targets watch selects
// (nil: all).
func totalProbes(r *driftReceiver, watch func(*target) bool) int64 {
	var n int64
	for _, t := range r.targets {
		if watch == nil || watch(t) {
			n += t.probes.Load()
		}
	}
	return n
}

// BenchmarkReceiverFleetHalfHung is the fleet of issue 11 over real
// loopback HTTP: 200 targets at a 5 s interval for 60 s, every other setting
// at its default (max_concurrent_probes 32, timeout 30 s, settle 500 ms);
// the odd-numbered half hang (their server accepts the connection, reads the
// request and never answers). It reports the share of the healthy targets'
// intervals whose probe started within a tenth of the interval of its due
// time (the goal is >= 95 %), healthy probes completed per target (12
// scheduled), the healthy targets' p99 lateness, and the probes that outran
// their slot budget and finished overtime. Run it with -benchtime 1x.
func BenchmarkReceiverFleetHalfHung(b *testing.B) {
	const (
		targets  = 200
		interval = 5 * time.Second
		window   = 60 * time.Second
	)
	urls := testservers.SpawnSelf(b, fleetServersEnv, 4)
	hung := hangingServer(b)
	for range b.N {
		cfg := createDefaultConfig().(*Config)
		cfg.CollectionInterval = interval
		for i := range targets {
			url := urls[i%len(urls)]
			if i%2 == 1 {
				url = hung
			}
			tc := httpTarget(fmt.Sprintf("t%03d", i), fmt.Sprintf("%s?target=%d", url, i))
			tc.Transport = TransportStreamableHTTP
			cfg.Targets = append(cfg.Targets, tc)
		}
		r, err := newDriftReceiver(receiverSettings(), cfg, newProber(cfg))
		if err != nil {
			b.Fatal(err)
		}
		healthy := func(t *target) bool { return !hangs(t) }
		rec := &intervalRecorder{watch: healthy}
		r.onProbeStart = rec.onStart
		if err := r.Start(context.Background(), &storageHost{}); err != nil {
			b.Fatal(err)
		}
		// Measure from one interval after start, once every target has had
		// its first (jittered) due time.
		time.Sleep(interval)
		rec.measure(time.Now(), time.Now().Add(window))
		probes0 := totalProbes(r, healthy)
		time.Sleep(window)
		probes := totalProbes(r, healthy) - probes0
		time.Sleep(onTimeTolerance(interval)) // for the window's last due probes to start
		var overtime int64
		for _, t := range r.targets {
			overtime += t.overtime.Load()
			if healthy(t) && t.lastErrorClass() != "none" {
				b.Fatalf("healthy target %s failing: %s", t.name, t.lastErrorClass())
			}
		}
		if err := r.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(100*rec.onTimeFraction(targets/2, interval), "%healthy-intervals-on-time")
		b.ReportMetric(float64(probes)/(targets/2), "probes/healthy-target")
		b.ReportMetric(ms(rec.latenessAt(0.99)), "healthy-p99-lateness-ms")
		b.ReportMetric(float64(overtime), "overtime-probes")
	}
}

// hangingServer returns the URL of a server that accepts connections, reads
// what they send and never answers.
func hangingServer(tb testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	tb.Cleanup(func() {
		_ = l.Close()
		wg.Wait() // the receiver's shutdown closed every connection
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(io.Discard, c)
				_ = c.Close()
			}()
		}
	}()
	return fmt.Sprintf("http://%s/mcp", l.Addr())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
