package scaleout

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/mcpdrift/mcpdrift/dev/benchspans"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// Load sends OTLP/gRPC export requests of interceptor tool-call spans, as a
// fleet of agent processes would: each request is one agent process's
// batch, agent turns of a few calls each, every call to the next server in
// turn, so a request mixes servers (the case tier 1's groupbyattrs is for).
type Load struct {
	Servers  []string // mcpdrift.server.name values, used in turn
	Tools    int      // distinct tools per server (default 4)
	Agents   int      // distinct agent processes and names (default 4)
	Sessions int      // sessions per agent (default 4)
	Batch    int      // spans per request (default 100)
	Workers  int      // concurrent senders (default 4)
}

// turn is how many tool calls one agent turn (one trace) makes.
const turn = 4

// requestKinds is how many distinct requests Send builds and cycles through.
const requestKinds = 16

func (l Load) withDefaults() Load {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.Tools, 4)
	def(&l.Agents, 4)
	def(&l.Sessions, 4)
	def(&l.Batch, 100)
	def(&l.Workers, 4)
	return l
}

// Send exports at least n spans, in whole requests, to the OTLP/gRPC
// endpoint (host:port) and returns how many it sent. A request the
// collector refuses (its memory limiter or queue is full) is sent again
// after a short pause, as an SDK's exporter retries.
func (l Load) Send(ctx context.Context, endpoint string, n int) (int, error) {
	if len(l.Servers) == 0 {
		return 0, errors.New("load: no servers")
	}
	l = l.withDefaults()
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	client := ptraceotlp.NewGRPCClient(conn)
	reqs := l.requests(time.Now())
	total := (n + l.Batch - 1) / l.Batch
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, l.Workers)
	for w := range l.Workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(total) {
					return
				}
				if err := exportRetrying(ctx, client, reqs[i%int64(len(reqs))]); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return total * l.Batch, errors.Join(errs...)
}

func exportRetrying(ctx context.Context, client ptraceotlp.GRPCClient, req ptraceotlp.ExportRequest) error {
	for {
		_, err := client.Export(ctx, req)
		if err == nil {
			return nil
		}
		switch status.Code(err) {
		case codes.Unavailable, codes.ResourceExhausted, codes.Aborted, codes.DeadlineExceeded:
		default:
			return fmt.Errorf("export: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("export: %w (last error: %v)", ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// requests builds the requests Send cycles through, the spans ending at now.
func (l Load) requests(now time.Time) []ptraceotlp.ExportRequest {
	reqs := make([]ptraceotlp.ExportRequest, requestKinds)
	call := 0
	for r := range reqs {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		agent := r % l.Agents
		rs.Resource().Attributes().PutStr(semconv.ServiceName, fmt.Sprintf("load-agent-%d", agent))
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(interceptor.ScopeName)
		spans := ss.Spans()
		spans.EnsureCapacity(l.Batch)
		var trace pcommon.TraceID
		for i := range l.Batch {
			if i%turn == 0 {
				_, _ = rand.Read(trace[:])
			}
			server := l.Servers[call%len(l.Servers)]
			session := (call / len(l.Servers)) % l.Sessions
			call++
			span := spans.AppendEmpty()
			benchspans.ToolCall{
				Server:       server,
				Tool:         fmt.Sprintf("tool_%d", i%l.Tools),
				Agent:        fmt.Sprintf("load-agent-%d", agent),
				Conversation: fmt.Sprintf("conv-%d-%d", agent, session),
				Session:      fmt.Sprintf("load-%d-%d", agent, session),
				Digest:       fmt.Sprintf("%064x", i%l.Tools),
				SetDigest:    fmt.Sprintf("%064x", 7),
				RequestID:    i,
			}.Fill(span)
			var id pcommon.SpanID
			_, _ = rand.Read(id[:])
			span.SetTraceID(trace)
			span.SetSpanID(id)
			start := now.Add(-time.Duration(l.Batch-i) * time.Millisecond)
			span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			span.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(35 * time.Millisecond)))
		}
		reqs[r] = ptraceotlp.NewExportRequestFromTraces(td)
	}
	return reqs
}
