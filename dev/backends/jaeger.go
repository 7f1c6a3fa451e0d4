package backends

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/procs"
)

// JaegerOptions describe a Jaeger v2 to start.
type JaegerOptions struct {
	Binary       string // _build/jaeger (scripts/backends/build-jaeger.sh)
	Config       string // examples/jaeger/config.yaml
	Dir          string // jaeger.log goes here
	StartTimeout time.Duration
}

// JaegerPorts are the loopback ports a Jaeger listens on; the config reads
// them from JAEGER_* environment variables.
type JaegerPorts struct {
	OTLPGRPC, OTLPHTTP, QueryHTTP, QueryGRPC, Health int
}

// Jaeger is a running Jaeger.
type Jaeger struct {
	proc   *procs.Proc
	Ports  JaegerPorts
	client *http.Client
}

// StartJaeger starts Jaeger with free loopback ports and returns when its
// health check and query API answer.
func StartJaeger(ctx context.Context, o JaegerOptions) (*Jaeger, error) {
	if o.StartTimeout == 0 {
		o.StartTimeout = 30 * time.Second
	}
	ports, err := procs.FreePorts(5)
	if err != nil {
		return nil, err
	}
	j := &Jaeger{
		Ports:  JaegerPorts{OTLPGRPC: ports[0], OTLPHTTP: ports[1], QueryHTTP: ports[2], QueryGRPC: ports[3], Health: ports[4]},
		client: &http.Client{Timeout: 10 * time.Second},
	}
	env := []string{
		"JAEGER_OTLP_GRPC_PORT=" + strconv.Itoa(j.Ports.OTLPGRPC),
		"JAEGER_OTLP_HTTP_PORT=" + strconv.Itoa(j.Ports.OTLPHTTP),
		"JAEGER_QUERY_HTTP_PORT=" + strconv.Itoa(j.Ports.QueryHTTP),
		"JAEGER_QUERY_GRPC_PORT=" + strconv.Itoa(j.Ports.QueryGRPC),
		"JAEGER_HEALTH_PORT=" + strconv.Itoa(j.Ports.Health),
	}
	log := filepath.Join(o.Dir, "jaeger.log")
	if j.proc, err = procs.Start("jaeger", o.Binary, []string{"--config", o.Config}, env, log); err != nil {
		return nil, err
	}
	for _, u := range []string{fmt.Sprintf("http://127.0.0.1:%d/status", j.Ports.Health), j.QueryURL() + "/api/services"} {
		if err := j.proc.WaitHTTP(ctx, u, o.StartTimeout, procs.StatusOK); err != nil {
			j.Stop()
			return nil, fmt.Errorf("jaeger did not become ready (see %s): %w", log, err)
		}
	}
	return j, nil
}

// Stop stops Jaeger and waits for it.
func (j *Jaeger) Stop() { j.proc.Stop(10 * time.Second) }

// QueryURL is the base URL of the query service (UI and HTTP API).
func (j *Jaeger) QueryURL() string { return fmt.Sprintf("http://127.0.0.1:%d", j.Ports.QueryHTTP) }

// SpanQuery is a search of Jaeger's HTTP query API (GET /api/traces).
type SpanQuery struct {
	Service    string            // required by Jaeger
	Tags       map[string]string // all must match on one span (span, scope or resource attributes)
	Start, End time.Time         // span start window
	Limit      int               // traces; default 1000
}

// Span is one span of a query result, with its process (resource).
type Span struct {
	TraceID, SpanID, Operation string
	Start                      time.Time
	Service                    string
	Tags                       map[string]string // span tags, values as strings
}

// FindSpans searches traces and returns the spans that match every tag:
// Jaeger returns whole traces that contain a matching span, and the
// question is about calls, i.e. spans.
func (j *Jaeger) FindSpans(ctx context.Context, q SpanQuery) ([]Span, error) {
	u, err := q.url(j.QueryURL())
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jaeger /api/traces: HTTP %d: %s", resp.StatusCode, truncate(body))
	}
	var res tracesResponse
	if err := json.Unmarshal(body, &res); err != nil {
		return nil, fmt.Errorf("jaeger /api/traces: %w", err)
	}
	if len(res.Data) >= q.limit() {
		return nil, fmt.Errorf("jaeger /api/traces: %d traces, the limit: narrow the time window or raise the limit", len(res.Data))
	}
	var out []Span
	for _, t := range res.Data {
		for _, s := range t.Spans {
			sp := Span{
				TraceID: s.TraceID, SpanID: s.SpanID, Operation: s.OperationName,
				Start:   time.UnixMicro(s.StartTime),
				Service: t.Processes[s.ProcessID].ServiceName,
				Tags:    map[string]string{},
			}
			for _, kv := range s.Tags {
				sp.Tags[kv.Key] = kv.String()
			}
			if sp.matches(q.Tags) {
				out = append(out, sp)
			}
		}
	}
	return out, nil
}

func (q SpanQuery) url(base string) (string, error) {
	if q.Service == "" {
		return "", fmt.Errorf("jaeger: a service is required")
	}
	v := url.Values{"service": {q.Service}}
	if len(q.Tags) > 0 {
		b, err := json.Marshal(q.Tags)
		if err != nil {
			return "", err
		}
		v.Set("tags", string(b))
	}
	if !q.Start.IsZero() {
		v.Set("start", strconv.FormatInt(q.Start.UnixMicro(), 10))
	}
	if !q.End.IsZero() {
		v.Set("end", strconv.FormatInt(q.End.UnixMicro(), 10))
	}
	v.Set("limit", strconv.Itoa(q.limit()))
	return base + "/api/traces?" + v.Encode(), nil
}

func (q SpanQuery) limit() int {
	if q.Limit > 0 {
		return q.Limit
	}
	return 1000
}

func (s Span) matches(tags map[string]string) bool {
	for k, want := range tags {
		if s.Tags[k] != want {
			return false
		}
	}
	return true
}

// tracesResponse is the part of Jaeger's /api/traces answer used here.
type tracesResponse struct {
	Data []struct {
		TraceID string `json:"traceID"`
		Spans   []struct {
			TraceID       string     `json:"traceID"`
			SpanID        string     `json:"spanID"`
			OperationName string     `json:"operationName"`
			StartTime     int64      `json:"startTime"` // µs since the epoch
			ProcessID     string     `json:"processID"`
			Tags          []keyValue `json:"tags"`
		} `json:"spans"`
		Processes map[string]struct {
			ServiceName string `json:"serviceName"`
		} `json:"processes"`
	} `json:"data"`
}

// keyValue is a Jaeger tag; its value is a JSON string, bool or number.
type keyValue struct {
	Key   string          `json:"key"`
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

func (kv keyValue) String() string {
	var s string
	if json.Unmarshal(kv.Value, &s) == nil {
		return s
	}
	return string(kv.Value) // true, false, 42, 1.5
}
