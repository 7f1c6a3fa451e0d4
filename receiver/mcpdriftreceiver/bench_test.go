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
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/internal/benchutil"
	"github.com/mcpdrift/mcpdrift/internal/testservers"
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
		var mu sync.Mutex
		var lateness []time.Duration
		measuring := false
		r.onProbeStart = func(_ *target, due, started time.Time) {
			mu.Lock()
			if measuring {
				lateness = append(lateness, started.Sub(due))
			}
			mu.Unlock()
		}
		logs, metrics := &countingLogs{}, &countingMetrics{}
		r.setLogs(logs)
		r.setMetrics(metrics)
		if err := r.Start(context.Background(), &storageHost{}); err != nil {
			b.Fatal(err)
		}
		// Warm-up: one interval for the jittered first probes to set baselines.
		time.Sleep(interval + 500*time.Millisecond)
		probes0 := totalProbes(r)
		cpu0 := benchutil.CPUTime()
		mu.Lock()
		measuring = true
		mu.Unlock()
		time.Sleep(window)
		mu.Lock()
		measuring = false
		late := slices.Clone(lateness)
		mu.Unlock()
		probes := totalProbes(r) - probes0
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
		slices.Sort(late)
		p := func(q float64) time.Duration { return late[int(q*float64(len(late)-1))] }
		b.ReportMetric(float64(probes), "probes")
		b.ReportMetric(float64(probes)/scheduled, "completed/scheduled")
		b.ReportMetric(float64(p(0.99).Microseconds())/1000, "p99-lateness-ms")
		b.ReportMetric(float64(late[len(late)-1].Microseconds())/1000, "max-lateness-ms")
		b.ReportMetric(cpu.Seconds()/float64(probes)*1000, "cpu-ms/probe")
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/targets/1024, "heap-KiB/target")
		var skipped int64
		for _, t := range r.targets {
			skipped += t.skipped.Load()
		}
		b.ReportMetric(float64(skipped), "skipped-ticks")
	}
}

func totalProbes(r *driftReceiver) int64 {
	var n int64
	for _, t := range r.targets {
		n += t.probes.Load()
	}
	return n
}
