package main

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// otlpGRPC is a minimal OTLP/gRPC endpoint counting the spans it receives.
type otlpGRPC struct {
	collectortrace.UnimplementedTraceServiceServer
	spans, metrics atomic.Int64
}

func (o *otlpGRPC) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			o.spans.Add(int64(len(ss.Spans)))
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

type metricsService struct {
	collectormetrics.UnimplementedMetricsServiceServer
	o *otlpGRPC
}

func (m metricsService) Export(_ context.Context, req *collectormetrics.ExportMetricsServiceRequest) (*collectormetrics.ExportMetricsServiceResponse, error) {
	m.o.metrics.Add(int64(len(req.ResourceMetrics)))
	return &collectormetrics.ExportMetricsServiceResponse{}, nil
}

func TestOTLPGRPCExport(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &otlpGRPC{}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, o)
	collectormetrics.RegisterMetricsServiceServer(srv, metricsService{o: o})
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()

	runExporting(t, "-otlp-endpoint", l.Addr().String(), "-otlp-protocol", "grpc")
	if o.spans.Load() < 5 || o.metrics.Load() == 0 {
		t.Errorf("received %d spans, %d metric batches", o.spans.Load(), o.metrics.Load())
	}
}
