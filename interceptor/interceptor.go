// Package interceptor is the agent-side half of mcpdrift: it emits an
// OpenTelemetry CLIENT span for every MCP request an agent sends, stamped
// with the digest of the tool definition the client had cached when it sent
// it, so a drift seen by the Collector can be joined with the calls it hurt.
//
// The core here is transport-independent: a Session per client connection is
// fed JSON-RPC messages in both directions (Request, Notification, Response,
// Incoming, or raw frames with SendFrame and ReceiveFrame). It pairs
// responses with requests, keeps the session's cached tools listing with
// digests computed once per listing from the raw wire JSON (package
// contract), tracks list_changed notifications, records the server's
// identity, and emits spans and the mcp.client.operation.duration histogram
// with the names in package semconv. Front-ends wire it to clients:
//
//   - interceptor/gosdk: the official Go SDK (middleware and Transport wrapper)
//   - interceptor/mcpgo: a mark3labs/mcp-go transport decorator
//   - interceptor/httptap: an http.RoundTripper (Streamable HTTP, legacy SSE)
//   - interceptor/stdiotap: a tap over a child process's pipes
//
// Nothing the interceptor does fails a call: its own errors go to the error
// handler (WithErrorHandler) and are swallowed. The only change it makes to
// the bytes on the wire is the trace context it writes into params._meta
// (WithTraceContextInjection, on by default). See docs/interceptor.md.
package interceptor

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/staleness"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// ScopeName is the instrumentation scope of the interceptor's spans and metrics.
const ScopeName = "github.com/mcpdrift/mcpdrift/interceptor"

// Version is the instrumentation scope version.
const Version = "0.1.0"

// durationBuckets are the explicit bucket boundaries the MCP semantic
// conventions advise for mcp.client.operation.duration.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Interceptor holds the configuration, tracer and instruments shared by the
// sessions it creates. It is safe for concurrent use.
type Interceptor struct {
	cfg      config
	tracer   trace.Tracer
	duration metric.Float64Histogram
	starts   startPool
	listings sharedListings
	judge    *staleness.Judge // compiled inputSchemas shared by the sessions
	errMu    sync.Mutex
	errSeen  map[string]bool // error texts already reported (bounded)
}

// maxErrSeen bounds the remembered error texts; past it errors are
// reported every time rather than remembered.
const maxErrSeen = 1024

// New returns an Interceptor configured by opts.
func New(opts ...Option) *Interceptor {
	cfg := newConfig(opts)
	ic := &Interceptor{cfg: cfg}
	ic.tracer = cfg.tracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(Version))
	meter := cfg.meterProvider.Meter(ScopeName, metric.WithInstrumentationVersion(Version))
	h, err := meter.Float64Histogram(semconv.MetricClientOperationDuration,
		metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil || h == nil {
		ic.report(fmt.Errorf("creating %s: %w", semconv.MetricClientOperationDuration, err))
		h, _ = noop.NewMeterProvider().Meter(ScopeName).Float64Histogram(semconv.MetricClientOperationDuration)
	}
	ic.duration = h
	ic.judge = staleness.NewJudge(staleness.NewSchemas(0, func(digest string, err error) {
		ic.report(fmt.Errorf("inputSchema of tool definition %.12s: %w", digest, err))
	}))
	if err := cfg.limits.Validate(); err != nil {
		ic.report(err)
		ic.cfg.limits = contract.DefaultLimits()
	}
	return ic
}

// Limits are the bounds on what the interceptor reads from servers.
func (ic *Interceptor) Limits() contract.Limits { return ic.cfg.limits }

// report hands one of the interceptor's own errors to the error handler. The
// same message is reported once per Interceptor, so a server that sends the
// same unhashable listing on every refresh does not flood the handler.
func (ic *Interceptor) report(err error) {
	if err == nil {
		return
	}
	msg := err.Error()
	ic.errMu.Lock()
	seen := ic.errSeen[msg]
	if !seen && len(ic.errSeen) < maxErrSeen {
		if ic.errSeen == nil {
			ic.errSeen = map[string]bool{}
		}
		ic.errSeen[msg] = true
	}
	ic.errMu.Unlock()
	if seen {
		return
	}
	ic.cfg.errorHandler(fmt.Errorf("mcpdrift interceptor: %w", err))
}

// newClientSessionID returns a random id for one client connection
// (mcpdrift.client.session): 2026-07-28 servers issue no session id, so the
// interceptor makes its own.
func newClientSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b[:])
}

// Protect runs f, turning a panic into a reported error: front-ends call the
// session through it where a bug in the interceptor must not take down the
// agent.
func (ic *Interceptor) Protect(f func()) {
	defer func() {
		if r := recover(); r != nil {
			ic.report(fmt.Errorf("recovered from panic: %v", r))
		}
	}()
	f()
}
