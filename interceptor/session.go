package interceptor

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/contract/staleness"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// Session is the interceptor's view of one client connection to one server.
// Front-ends create one per connection and feed it every message in both
// directions. All methods are safe for concurrent use and never fail: what
// the session cannot read it reports to the error handler and ignores.
type Session struct {
	ic            *Interceptor
	endpoint      Endpoint
	clientSession string

	ident atomic.Pointer[identity]
	tools atomic.Pointer[listing]
	gen   atomic.Uint64 // tools list_changed notifications received

	mu      sync.Mutex // guards pending, closed and identity updates
	pending map[ID]*call
	closed  bool

	listMu sync.Mutex        // serializes applying tools/list pages
	window *staleness.Window // WithStaleWindow; nil without it

	// clientName is the initialize clientInfo.name: gen_ai.agent.name when
	// neither the context nor WithAgent names the agent.
	clientName atomic.Pointer[string]
}

// NewSession starts tracking one client connection that reaches its server
// through ep.
func (ic *Interceptor) NewSession(ep Endpoint) *Session {
	s := &Session{
		ic:            ic,
		endpoint:      ep,
		clientSession: newClientSessionID(),
		pending:       map[ID]*call{},
		window:        staleness.NewWindow(ic.cfg.staleWindow),
	}
	id := &identity{serverName: ic.cfg.serverName}
	s.ident.Store(s.build(id))
	return s
}

// ClientSessionID is the generated mcpdrift.client.session of this connection.
func (s *Session) ClientSessionID() string { return s.clientSession }

// Endpoint is how this session reaches its server.
func (s *Session) Endpoint() Endpoint { return s.endpoint }

// SetMCPSessionID records the session id the server issued (Mcp-Session-Id
// on Streamable HTTP before 2026-07-28); later spans carry it as
// mcp.session.id (a digest of an overlong one: mcpwire.SessionKey).
func (s *Session) SetMCPSessionID(id string) {
	id = mcpwire.SessionKey(id)
	if cur := s.ident.Load(); id == "" || cur.mcpSessionID == id {
		return
	}
	s.updateIdentity(func(i *identity) { i.mcpSessionID = id })
}

// ServerName is the current mcpdrift.server.name (configured, else the
// serverInfo.name the server sent, else "").
func (s *Session) ServerName() string { return s.ident.Load().serverName }

// Established reports whether the handshake (initialize or server/discover)
// has succeeded on this session.
func (s *Session) Established() bool { return s.ident.Load().established }

// ProtocolVersion is the negotiated protocol version, once known.
func (s *Session) ProtocolVersion() string { return s.ident.Load().protocolVersion }

// Close ends the session: requests still waiting for a response end with
// error.type connection_closed. Messages fed after Close are ignored.
func (s *Session) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	pending := s.pending
	s.pending = map[ID]*call{}
	s.mu.Unlock()
	now := time.Now()
	for _, c := range pending {
		s.finish(c, outcome{errType: semconv.ErrorTypeConnectionClosed, message: "connection closed before the response"}, now)
	}
}

// identity is what the session knows about its server; it is replaced, never
// mutated, so the call path reads it without locking.
type identity struct {
	serverName      string // mcpdrift.server.name
	serverInfoName  string
	protocolVersion string
	stateless       bool // 2026-07-28+ (server/discover)
	established     bool // a handshake succeeded
	mcpSessionID    string

	spanAttrs   []attribute.KeyValue
	metricAttrs []attribute.KeyValue
	setsMu      sync.RWMutex
	sets        map[metricKey][]metric.RecordOption
}

// updateIdentity applies f to a copy of the identity and publishes it.
func (s *Session) updateIdentity(f func(*identity)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.ident.Load()
	next := &identity{
		serverName:      cur.serverName,
		serverInfoName:  cur.serverInfoName,
		protocolVersion: cur.protocolVersion,
		stateless:       cur.stateless,
		established:     cur.established,
		mcpSessionID:    cur.mcpSessionID,
	}
	f(next)
	if s.ic.cfg.serverName != "" {
		next.serverName = s.ic.cfg.serverName
	} else if next.serverName == "" {
		next.serverName = next.serverInfoName
	}
	s.ident.Store(s.build(next))
}

// build precomputes the attributes every span and measurement of the
// session carries.
func (s *Session) build(id *identity) *identity {
	ep := s.endpoint.attributes()
	span := make([]attribute.KeyValue, 0, 6+len(ep))
	span = append(span, attribute.String(semconv.ClientSession, s.clientSession))
	metric := make([]attribute.KeyValue, 0, 3+len(ep))
	if id.serverName != "" {
		kv := attribute.String(semconv.ServerName, id.serverName)
		span, metric = append(span, kv), append(metric, kv)
	}
	url := s.ic.cfg.serverURL
	if url == "" {
		url = s.endpoint.ServerURL()
	}
	if url != "" {
		span = append(span, attribute.String(semconv.ServerURL, url))
	}
	if id.protocolVersion != "" {
		kv := attribute.String(semconv.MCPProtocolVersion, id.protocolVersion)
		span, metric = append(span, kv), append(metric, kv)
	}
	if id.mcpSessionID != "" {
		span = append(span, attribute.String(semconv.MCPSessionID, id.mcpSessionID))
	}
	id.spanAttrs = append(span, ep...)
	id.metricAttrs = append(metric, ep...)
	return id
}

// call is one request waiting for its response.
type call struct {
	id     ID
	method string
	target string    // tool or prompt name: the span name's target
	start  time.Time // when the span does not know (see started)
	span   trace.Span
	ctx    context.Context // the request's, with span: measurements link to it (exemplars)
	stop   func() bool     // unregisters the context.AfterFunc, if any
	meta   metaCarrier     // the trace context fields injected into params._meta

	// tools/call
	digest string
	// tools/list
	firstPage bool
	gen       uint64
	// server/discover: the protocol version the request asked for
	askedVersion string
	// set under Session.mu when a refresh shows the called tool changed
	staleDefinition bool
}

// spanTimes is what the OpenTelemetry SDK's spans tell about their times
// (sdktrace.ReadOnlySpan; asserted, so the interceptor depends on the API
// only).
type spanTimes interface {
	StartTime() time.Time
	EndTime() time.Time
}

// started records the request's context, with its span, once the span has
// started. A span that does not know its times is timed here.
func (c *call) started(ctx context.Context) {
	c.ctx = ctx
	if _, ok := c.span.(spanTimes); !ok {
		c.start = time.Now()
	}
}

// duration is how long c took, ending at end (the zero time: now). An SDK
// span has its start and end times already: the measurement is exactly the
// span's, and costs no clock reads (about 100 ns each under a VM's
// kvm-clock).
func (c *call) duration(end time.Time) time.Duration {
	if t, ok := c.span.(spanTimes); ok {
		if e := t.EndTime(); !e.IsZero() {
			return e.Sub(t.StartTime())
		}
	}
	if end.IsZero() {
		end = time.Now()
	}
	return end.Sub(c.start)
}

// outcome is how a call ended.
type outcome struct {
	errType string // error.type; "" on success
	code    string // rpc.response.status_code (JSON-RPC error code)
	message string // span status description
	result  json.RawMessage
	extra   []attribute.KeyValue
}

// take removes and returns the pending call with this id.
func (s *Session) take(id ID) *call {
	s.mu.Lock()
	c := s.pending[id]
	if c != nil {
		delete(s.pending, id)
	}
	s.mu.Unlock()
	if c != nil && c.stop != nil {
		c.stop()
	}
	return c
}

// Awaiting reports whether the request with this id still waits for its
// response (or the acknowledgement that ends it): a front-end relaying a
// response stream learns when the last answer it carries has gone by.
func (s *Session) Awaiting(id ID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending[id] != nil
}

// Fail ends the request with this id when it could not be sent or its
// response will never be read (the front-end's write failed, the caller's
// context ended, the HTTP exchange failed, a proxy refused it). err
// classifies it: an error with an ErrorType() string method gives error.type
// itself, context errors are "cancelled", others "transport_error"; an error
// with a SpanAttributes() []attribute.KeyValue method adds those to the span.
func (s *Session) Fail(id ID, err error) {
	c := s.take(id)
	if c == nil {
		return
	}
	s.finish(c, failure(err), time.Now())
}

func failure(err error) outcome {
	o := outcome{errType: semconv.ErrorTypeTransport}
	if err == nil {
		return o
	}
	o.message = err.Error()
	var attributed interface{ SpanAttributes() []attribute.KeyValue }
	if errors.As(err, &attributed) {
		o.extra = attributed.SpanAttributes()
	}
	var typed interface{ ErrorType() string }
	switch {
	case errors.As(err, &typed):
		o.errType = typed.ErrorType()
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		o.errType = semconv.ErrorTypeCancelled
	}
	return o
}

// register makes c pending until its response arrives, the connection
// closes, or ctx ends (then it ends as cancelled). It reports false, having
// ended c, if it could not be registered.
func (s *Session) register(ctx context.Context, c *call) bool {
	if ctx.Done() != nil {
		id := c.id
		// Registered before c is published, so take always sees c.stop.
		c.stop = context.AfterFunc(ctx, func() {
			s.mu.Lock()
			cur := s.pending[id]
			if cur == c {
				delete(s.pending, id)
			}
			s.mu.Unlock()
			if cur == c {
				s.finish(c, cancelled(ctx), time.Now())
			}
		})
	}
	s.mu.Lock()
	var o *outcome
	superseded := s.pending[c.id]
	switch {
	case s.closed:
		o = &outcome{errType: semconv.ErrorTypeConnectionClosed, message: "connection closed"}
	case ctx.Err() != nil:
		cc := cancelled(ctx)
		o = &cc
	case len(s.pending) >= s.ic.cfg.maxPending:
		o = &outcome{errType: semconv.ErrorTypeOther, message: "too many requests waiting for a response; no longer tracked"}
	default:
		s.pending[c.id] = c
	}
	s.mu.Unlock()
	if superseded != nil && o == nil {
		// The client reused an id still in flight: the older request will
		// never be paired now.
		if superseded.stop != nil {
			superseded.stop()
		}
		s.finish(superseded, outcome{errType: semconv.ErrorTypeOther, message: "request id reused before the response"}, time.Now())
	}
	if o != nil {
		if c.stop != nil {
			c.stop()
		}
		s.finish(c, *o, time.Now())
		return false
	}
	return true
}

func cancelled(ctx context.Context) outcome {
	msg := "context done"
	if err := context.Cause(ctx); err != nil {
		msg = err.Error()
	}
	return outcome{errType: semconv.ErrorTypeCancelled, message: msg}
}
