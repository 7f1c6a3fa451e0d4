package proxy_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/integration/proxy/internal/testchild"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// listenEnv, in a "proxy" child, makes it `mcpdrift proxy --listen` to the
// upstream it names, processors governed as the CLI governs them.
const listenEnv = "MCPDRIFT_PROXY_TEST_LISTEN_UPSTREAM"

// listenMain serves the HTTP → HTTP proxy to upstream on a free loopback
// port, printed as a URL, until its input ends; telemetry off, as a proxy
// with no exporter configured runs.
func listenMain(upstream string) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 1
	}
	fmt.Println("http://" + l.Addr().String())
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); cancel() }()
	stop := proxy.GovernProcs()
	defer stop()
	if proxy.Serve(ctx, l, proxy.Config{Upstream: upstream, Listen: l.Addr().String()}, proxy.NoTelemetry()) != nil {
		return 1
	}
	return 0
}

// BenchmarkHTTPProcs measures what the processor governor of `mcpdrift
// proxy --listen` (proxy.GovernProcs) does to a call: two HTTP → HTTP
// proxies in child processes to the same in-process go-sdk server, one
// governed, one on the runtime's default (its GOMAXPROCS set, which the
// governor leaves alone: the proxy before the governor), each called over
// a session of its own in turn, rounds interleaved. cpu-ratio is the
// governed child's CPU time per call over the other's (Linux: /proc);
// ratio the governed call's time over the other's; the -cpu-us/op figures
// are each child's CPU per call. ns/op is the governed call's, client and
// server included.
func BenchmarkHTTPProcs(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("child CPU time is read from /proc")
	}
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("one processor here: nothing to govern")
	}
	up := sdkHTTPServer(b, testchild.BenchServer(1))
	governed := listenChild(b, up.URL, "")
	plain := listenChild(b, up.URL, strconv.Itoa(runtime.GOMAXPROCS(0)))
	for _, c := range []*procsChild{governed, plain} {
		c.call = sessionCaller(b, streamable(b, c.url))
		for range 200 { // warm: connections, pools, the governor's first ticks
			if err := c.call(); err != nil {
				b.Fatal(err)
			}
		}
	}
	const rounds = 10
	b.ResetTimer()
	b.StopTimer()
	for r := range rounds {
		per := b.N / rounds
		if r < b.N%rounds {
			per++
		}
		for _, c := range []*procsChild{governed, plain} {
			cpu := c.cpu(b)
			if c == governed {
				b.StartTimer()
			}
			start := time.Now()
			for range per {
				if err := c.call(); err != nil {
					b.Fatal(err)
				}
			}
			c.wall += time.Since(start)
			if c == governed {
				b.StopTimer()
			}
			c.used += c.cpu(b) - cpu
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(governed.used)/float64(max(plain.used, 1)), "cpu-ratio")
	b.ReportMetric(float64(governed.wall)/float64(plain.wall), "ratio")
	b.ReportMetric(float64(governed.used.Microseconds())/n, "governed-cpu-us/op")
	b.ReportMetric(float64(plain.used.Microseconds())/n, "default-cpu-us/op")
}

// procsChild is one proxy child of BenchmarkHTTPProcs.
type procsChild struct {
	pid        int
	url        string
	call       func() error
	wall, used time.Duration
}

// listenChild starts the test binary as an HTTP → HTTP proxy to upstream,
// with GOMAXPROCS=procs in its environment unless procs is empty; it ends
// with the benchmark.
func listenChild(b *testing.B, upstream, procs string) *procsChild {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), testchild.Env+"=proxy", listenEnv+"="+upstream)
	if procs != "" {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+procs)
	}
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	out := bufio.NewScanner(stdout)
	if !out.Scan() {
		b.Fatalf("the proxy child ended: %v", out.Err())
	}
	return &procsChild{pid: cmd.Process.Pid, url: out.Text()}
}

// cpu is the child's user and system CPU time so far, from /proc (in clock
// ticks of 1/100 s, USER_HZ on every Linux: a few thousand calls make it
// fine enough).
func (c *procsChild) cpu(b *testing.B) time.Duration {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(c.pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // the name may hold spaces
	if len(fields) < 13 {
		b.Fatalf("/proc/%d/stat: %q", c.pid, s)
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
