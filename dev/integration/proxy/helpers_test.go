package proxy_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"golang.org/x/sys/unix"

	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/dev/integration/proxy/internal/testchild"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// telemetry records the proxy's spans and metrics in memory.
type telemetry struct {
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
	proxy.Telemetry
}

func newTelemetry(t testing.TB) *telemetry {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(notifying{exp}))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	return &telemetry{spans: exp, reader: reader, Telemetry: proxy.Telemetry{
		Tracer: tp, Meter: mp, Propagator: propagation.TraceContext{},
		Shutdown: func(context.Context) error { return nil },
	}}
}

// notifying is the span exporter the tests read, saying each export to
// eventually.
type notifying struct{ *tracetest.InMemoryExporter }

func (n notifying) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	defer changed.notify()
	return n.InMemoryExporter.ExportSpans(ctx, spans)
}

// named returns the ended spans with this name.
func (tel *telemetry) named(name string) tracetest.SpanStubs {
	var out tracetest.SpanStubs
	for _, s := range tel.spans.GetSpans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// waitNamed waits (generously) until n spans with this name ended.
func (tel *telemetry) waitNamed(t testing.TB, name string, n int) tracetest.SpanStubs {
	t.Helper()
	eventually(t, func() bool { return len(tel.named(name)) >= n }, "%d span(s) %q; have %v", n, name, tel.names())
	return tel.named(name)
}

func (tel *telemetry) names() []string {
	var n []string
	for _, s := range tel.spans.GetSpans() {
		n = append(n, s.Name)
	}
	return n
}

// counter sums an Int64 counter's points whose attributes include want.
func (tel *telemetry) counter(t testing.TB, name string, want ...attribute.KeyValue) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				if itest.HasAttributes(p.Attributes, want...) {
					sum += p.Value
				}
			}
		}
	}
	return sum
}

// attr returns a span attribute (the SDK ends a span with each key once).
func attr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	set := attribute.NewSet(s.Attributes...)
	return set.Value(attribute.Key(key))
}

func str(s tracetest.SpanStub, key string) string {
	v, _ := attr(s, key)
	return v.String()
}

// changes is a broadcast: every piece of test-side state a test waits on
// (spans, recorded requests, counts in test servers) calls changed.notify
// when it changes, and eventually re-checks its condition then, instead of
// polling on a clock.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

var changed = &changes{ch: make(chan struct{})}

func (c *changes) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.ch)
	c.ch = make(chan struct{})
}

// next is closed at the next notify.
func (c *changes) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ch
}

// eventually waits until cond holds, re-checking it at every change of
// test-side state (changed); the deadline only bounds a broken test, so
// tests never depend on wall-clock speed.
func eventually(t testing.TB, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		next := changed.next() // before the check: a change after it is not missed
		if cond() {
			return
		}
		select {
		case <-next:
		case <-deadline.C:
			t.Fatalf("timed out waiting for "+format, args...)
		}
	}
}

// exited waits until process pid has exited (a zombie counts), as the
// kernel tells through a pidfd; the deadline only bounds a broken test.
func exited(t testing.TB, pid int, format string, args ...any) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return // gone and reaped already
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 30_000)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			t.Fatalf("poll pidfd %d: %v", pid, err)
		case n == 0:
			t.Fatalf("timed out waiting for "+format, args...)
		}
		return
	}
}

// stdioProxy is a stdio → stdio proxy running in the test, its agent side
// on pipes.
type stdioProxy struct {
	in     io.WriteCloser // the agent writes here
	out    *bufio.Reader  // and reads here
	outR   io.ReadCloser
	inR    io.ReadCloser
	stderr *itest.LockedBuffer
	sigs   chan os.Signal
	code   chan int
	log    string // what reached the child server
}

// startStdio runs cfg with the test binary as the child server in mode
// (testchild), or cfg.Command as given when mode is "".
func startStdio(t *testing.T, cfg proxy.Config, tel *telemetry, mode string) *stdioProxy {
	t.Helper()
	testservers.MarkProcesses(t) // no process the test started outlives it
	p := &stdioProxy{stderr: &itest.LockedBuffer{}, sigs: make(chan os.Signal, 1), code: make(chan int, 1)}
	p.log = filepath.Join(t.TempDir(), "child.log")
	if mode != "" {
		t.Setenv(testchild.Env, mode)
		t.Setenv(testchild.Log, p.log)
		cfg.Command = []string{os.Args[0], "-test.run=^$"}
	}
	return p.run(t, func(io proxy.Stdio) (int, error) {
		return proxy.RunCommand(context.Background(), cfg, tel.Telemetry, io)
	})
}

// run runs a proxy mode with its agent side on p's pipes.
func (p *stdioProxy) run(t *testing.T, mode func(proxy.Stdio) (int, error)) *stdioProxy {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p.in, p.inR, p.outR, p.out = inW, inR, outR, bufio.NewReader(outR)
	go func() {
		code, err := mode(proxy.Stdio{In: inR, Out: outW, Err: p.stderr, Signals: p.sigs})
		if err != nil {
			t.Errorf("proxy: %v", err)
		}
		outW.Close()
		p.code <- code
	}()
	t.Cleanup(func() {
		p.in.Close()
		p.outR.Close()
		select {
		case <-p.code:
		case <-time.After(60 * time.Second):
			t.Error("the proxy did not end")
		}
	})
	return p
}

func (p *stdioProxy) send(t testing.TB, line string) {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (p *stdioProxy) recv(t testing.TB) string {
	t.Helper()
	line, err := p.out.ReadString('\n')
	if err != nil {
		t.Fatalf("reading from the proxy: %v (read %q)", err, line)
	}
	return strings.TrimSuffix(line, "\n")
}

// recvID reads until the response with this id (as JSON text) and returns it.
func (p *stdioProxy) recvID(t testing.TB, id string) string {
	t.Helper()
	for {
		line := p.recv(t)
		if strings.Contains(line, `"id":`+id+`,`) || strings.Contains(line, `"id":`+id+`}`) {
			return line
		}
	}
}

// serverLog is what reached the child server so far.
func (p *stdioProxy) serverLog(t testing.TB) []string {
	b, err := os.ReadFile(p.log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// awaitServerLog waits until ok holds of what reached the child server,
// checking each time the child writes its log (it appends a line per
// frame), for 30 s at most; what names the wait in the failure.
func (p *stdioProxy) awaitServerLog(t testing.TB, what string, ok func(log []string) bool) {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(filepath.Dir(p.log)); err != nil { // the log may not exist yet
		t.Fatal(err)
	}
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for !ok(p.serverLog(t)) { // checked after the watch began: no write is missed
		select {
		case <-w.Events: // any change in the log's directory: check again
		case err := <-w.Errors:
			t.Fatalf("watching the server's log: %v", err)
		case <-timeout.C:
			t.Fatalf("%s: the server's log is %q", what, p.serverLog(t))
		}
	}
}

// hangUp closes the agent's session and the proxy's input, as a host does
// when it is done, and checks the proxy exits 0.
func (p *stdioProxy) hangUp(t testing.TB, a *agent) {
	t.Helper()
	a.cs.Close()
	p.in.Close()
	code := <-p.code
	p.code <- code // for the cleanup
	if code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// checkCallSpan checks a tools/call span's string attributes and that it
// carries the definition digest it was planned with.
func checkCallSpan(t testing.TB, span tracetest.SpanStub, want map[string]string) {
	t.Helper()
	for key, v := range want {
		if got := str(span, key); got != v {
			t.Errorf("%s = %q, want %q", key, got, v)
		}
	}
	if len(str(span, semconv.ToolDigest)) != 64 {
		t.Errorf("%s = %q", semconv.ToolDigest, str(span, semconv.ToolDigest))
	}
}
