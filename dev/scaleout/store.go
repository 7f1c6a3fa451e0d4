package scaleout

import (
	"context"
	"net"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // the Collector's OTLP exporter compresses by default

	"github.com/mcpdrift/mcpdrift/dev/quickstart"
)

// Store is an OTLP/gRPC endpoint in the test process that stands for the
// trace/log store behind one tier-2 instance (its otlp_grpc/store
// exporter): it keeps what it receives, so a test can tell which instance
// sent which span and event, and counts spans, for throughput. Like a
// Collector-based store with default settings, it refuses requests over
// gRPC's default 4 MiB.
type Store struct {
	Endpoint string // host:port
	srv      *grpc.Server
	spans    atomic.Int64
	discard  atomic.Bool

	mu  sync.Mutex
	out quickstart.Outputs
}

// NewStore listens on a free loopback port and serves OTLP traces and logs.
func NewStore() (*Store, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Store{Endpoint: l.Addr().String(), srv: grpc.NewServer()}
	ptraceotlp.RegisterGRPCServer(s.srv, &traceService{s: s})
	plogotlp.RegisterGRPCServer(s.srv, &logService{s: s})
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// Close stops serving.
func (s *Store) Close() { s.srv.Stop() }

// Spans is how many spans the store has received.
func (s *Store) Spans() int64 { return s.spans.Load() }

// Discard makes the store count what it receives from now on without
// keeping it (a throughput run sends more than a test should hold).
func (s *Store) Discard() { s.discard.Store(true) }

// Outputs returns what the store has kept so far.
func (s *Store) Outputs() *quickstart.Outputs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &quickstart.Outputs{Logs: s.out.Logs[:len(s.out.Logs):len(s.out.Logs)], Traces: s.out.Traces[:len(s.out.Traces):len(s.out.Traces)]}
}

type traceService struct {
	ptraceotlp.UnimplementedGRPCServer
	s *Store
}

func (t *traceService) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	td := req.Traces()
	t.s.spans.Add(int64(td.SpanCount()))
	if !t.s.discard.Load() {
		t.s.keep(func(o *quickstart.Outputs) { o.Traces = append(o.Traces, td) })
	}
	return ptraceotlp.NewExportResponse(), nil
}

type logService struct {
	plogotlp.UnimplementedGRPCServer
	s *Store
}

func (l *logService) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	ld := req.Logs()
	if !l.s.discard.Load() {
		l.s.keep(func(o *quickstart.Outputs) { o.Logs = append(o.Logs, ld) })
	}
	return plogotlp.NewExportResponse(), nil
}

func (s *Store) keep(add func(*quickstart.Outputs)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	add(&s.out)
}
