package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/proxy/gate"
	"github.com/mcpdrift/mcpdrift/proxy/internal/config"
	"github.com/mcpdrift/mcpdrift/proxy/internal/jsonrpc"
	"github.com/mcpdrift/mcpdrift/proxy/internal/streamhttp"
	"github.com/mcpdrift/mcpdrift/proxy/internal/telemetry"
	"github.com/mcpdrift/mcpdrift/proxy/lockfilter"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// Upstream is the server side of a relay whose agent speaks stdio.
type Upstream interface {
	// Send delivers one whole frame to the server, the relay's reading of
	// it (m, by value, so that it need not escape: its bytes are valid
	// until Send returns; not OK when the frame is no one message); the relay hands the server's frames back through
	// Relay.FromServer.
	Send(ctx context.Context, frame []byte, m jsonrpc.Message) error
	// SendPiece delivers part of a frame too large to parse; last ends it.
	SendPiece(b []byte, last bool) error
	// Describe names the server in errors the agent reads (no secrets).
	Describe() string
}

// Relay carries one agent connection: it feeds the interceptor session every
// frame, applies the gate, and answers for the server where the gate
// refuses. Frames pass in the order they arrive in each direction.
type Relay struct {
	cfg      *config.Config
	ic       *interceptor.Interceptor
	sess     *interceptor.Session
	tracer   trace.Tracer
	refusals metric.Int64Counter
	up       Upstream
	agent    *lineWriter
	gate     *gate.Gate

	initParams atomic.Pointer[[]byte] // the params of the agent's initialize request, replayed on re-initialization
	ready      atomic.Bool            // the handshake is complete: the proxy may send its own requests
	lists      sync.Map               // id of an agent's tools/list in flight -> its cursor was empty
	own        ownCalls
	relist     chan bool // a relist is wanted; true when the server announced the change

	// The oversized stdio frame the server is sending (fromServerPiece;
	// the server's reader alone uses these).
	inPieces, dropPieces bool

	// A relist the server announced is pending until relistWait closes:
	// the gate judges no call before it (a call right after list_changed
	// must not pass on what the proxy knew before).
	relistMu   sync.Mutex
	relistWait chan struct{}
	relistGen  uint64

	// The x-mcp-header bindings of the tools the agent was served, by
	// tool name (streamhttp.ParamBindings); nil while no tool has any.
	params atomic.Pointer[map[string][]streamhttp.ParamBinding]
}

// New is the relay of one agent, whose frames the proxy writes to agent.
// Its upstream is set (SetUpstream) before any frame is relayed.
func New(cfg *config.Config, tel telemetry.Telemetry, ep interceptor.Endpoint, g *gate.Gate, agent io.Writer) *Relay {
	ic := telemetry.Interceptor(cfg, tel)
	return &Relay{
		cfg: cfg, ic: ic, sess: ic.NewSession(ep), tracer: tel.Tracer.Tracer(telemetry.ScopeName),
		refusals: telemetry.Refusals(tel), gate: g, relist: make(chan bool, 1), agent: newLineWriter(agent),
	}
}

// SetUpstream sets the server side.
func (r *Relay) SetUpstream(up Upstream) { r.up = up }

// Session is the interceptor session the relay records.
func (r *Relay) Session() *interceptor.Session { return r.sess }

// InitParams are the params of the agent's initialize request (nil before
// it came), for a re-initialization on its behalf.
func (r *Relay) InitParams() []byte {
	if p := r.initParams.Load(); p != nil {
		return *p
	}
	return nil
}

// fromAgent handles one whole frame the agent sent: it is read here, once,
// and what the gate, the session and the upstream need comes from that
// reading.
func (r *Relay) fromAgent(frame []byte) {
	ctx := context.Background()
	m := jsonrpc.Parse(frame)
	if m.Batch {
		r.fromAgentBatch(ctx, frame)
		return
	}
	if ref := r.gate.Unclear(m.Unclear); ref != nil {
		r.refuse(ctx, &m, ref)
		return
	}
	if !m.OK {
		r.Unparsed("agent", frame)
		r.sendUp(ctx, frame, &m)
		return
	}
	switch m.Method {
	case "":
		// A response to a server request (sampling, elicitation, roots).
	case mcpwire.MethodInitialize:
		p := bytes.Clone(m.Params)
		r.initParams.Store(&p)
	case mcpwire.NotifyInitialized:
		r.ready.Store(true)
	case mcpwire.MethodToolsList:
		if m.ID.Valid() {
			r.lists.Store(m.ID, m.Cursor() == "")
		}
	case mcpwire.MethodToolsCall:
		if m.ID.Valid() && r.gate.Active() {
			r.awaitRelist()
			if ref := r.checkCall(&m); ref != nil {
				r.refuse(ctx, &m, ref)
				return
			}
		}
	}
	if ref := r.gate.Failure(); ref != nil && m.Request() {
		r.refuse(ctx, &m, ref)
		return
	}
	r.forward(ctx, &m)
}

// fromAgentBatch handles a JSON-RPC batch (2025-03-26 clients). With the
// gate on, each call in it is judged like a lone one: a refused call is
// answered on its own (clients match answers by id) and left out of the
// batch the server gets, so a batch is no way around the gate.
func (r *Relay) fromAgentBatch(ctx context.Context, frame []byte) {
	batch := jsonrpc.Message{Frame: frame, Batch: true}
	if !r.gate.Active() {
		r.forward(ctx, &batch)
		return
	}
	a, _ := jsonwire.NewArray(frame)
	var kept [][]byte
	refused := false
	for {
		elem, ok := a.Next()
		if !ok {
			break
		}
		m := jsonrpc.Parse(elem)
		if ref := r.batchRefusal(&m); ref != nil {
			r.refuse(ctx, &m, ref)
			refused = true
			continue
		}
		kept = append(kept, elem)
	}
	switch {
	case a.Err() || !refused:
		r.forward(ctx, &batch) // malformed (the server answers it), or nothing refused: as it came
	case len(kept) > 0:
		r.forward(ctx, &jsonrpc.Message{Frame: jsonrpc.Array(kept), Batch: true})
	}
}

// batchRefusal is the gate's answer to one request of a batch (m), nil if
// it passes.
func (r *Relay) batchRefusal(m *jsonrpc.Message) *gate.Refusal {
	if ref := r.gate.Unclear(m.Unclear); ref != nil {
		return ref
	}
	if !m.Request() {
		return nil
	}
	if ref := r.gate.Failure(); ref != nil {
		return ref
	}
	if m.Method != mcpwire.MethodToolsCall {
		return nil
	}
	r.awaitRelist()
	return r.checkCall(m)
}

// forward records m on the session and sends the frame that returns.
func (r *Relay) forward(ctx context.Context, m *jsonrpc.Message) {
	out := m.Frame
	r.ic.Protect(func() { out = r.record(ctx, m) })
	r.sendUp(ctx, out, m)
}

// record records a message the agent sends on the session and returns the
// frame to send: with trace context in its params when that is on. A batch
// (or an unclear frame the proxy cannot read as one message) is read by
// the session itself.
func (r *Relay) record(ctx context.Context, m *jsonrpc.Message) []byte {
	switch {
	case !m.OK:
		return r.sess.SendFrame(ctx, m.Frame)
	case m.Method == "":
		return m.Frame // a response to a server request: nothing to record
	}
	return m.WithParams(r.sess.Request(ctx, m.ID, m.Method, m.Params))
}

// sendUp sends frame (m's, as recorded) upstream; a request that cannot be
// sent ends with a JSON-RPC error naming the upstream, so the agent never
// waits for nothing.
func (r *Relay) sendUp(ctx context.Context, frame []byte, m *jsonrpc.Message) {
	err := r.up.Send(ctx, frame, *m)
	if err == nil || !m.OK {
		return
	}
	r.UpstreamFailed(m.Message, err)
}

// UpstreamFailed ends an agent's request the upstream could not answer with
// a JSON-RPC error naming the upstream (notifications have nothing to end).
func (r *Relay) UpstreamFailed(m interceptor.Message, err error) {
	if !m.ID.Valid() || m.Method == "" {
		return
	}
	r.sess.Fail(m.ID, err)
	r.answerError(m.RawID, jsonrpc.CodeUpstream, fmt.Sprintf("mcpdrift proxy: upstream %s: %v", r.up.Describe(), err))
}

// answerError answers an agent's request with a JSON-RPC error.
func (r *Relay) answerError(id json.RawMessage, code int, message string) {
	r.ToAgent(jsonrpc.Error(id, code, message))
}

func (r *Relay) ToAgent(frame []byte) {
	_ = r.agent.frame(frame) // a gone agent ends the relay on its own (stdin EOF)
}

// FromServer handles one whole frame the server sent; the frame is valid
// until it returns.
func (r *Relay) FromServer(frame []byte) { r.FromServerMessage(jsonrpc.Parse(frame)) }

// FromServerMessage handles one whole frame the server sent, read (m);
// m.Frame is valid until it returns. Frames reach the agent before the
// proxy's span work unless the session must see them first.
func (r *Relay) FromServerMessage(m jsonrpc.Message) {
	frame := m.Frame
	if !m.OK {
		if r.ownUnreadable(frame, "could not be read") {
			r.Unparsed("server", frame)
			return
		}
		out := lockfilter.Filter(r.gate, r.cfg.Limits, frame, nil)
		if !m.Batch && len(bytes.TrimSpace(frame)) > 0 {
			r.ToAgent(out)
			r.Unparsed("server", frame)
			if m, ok := UnreadableResponse(frame); ok {
				r.sess.Fail(m.ID, errors.New("the server's answer could not be read"))
			}
			return
		}
		frame = bytes.Clone(out) // a batch: the session reads it, and may keep a listing in it
		r.ic.Protect(func() { r.sess.ReceiveFrame(frame) })
		r.ToAgent(frame)
		return
	}
	if m.Method == "" && jsonrpc.IsOwnID(m.RawID) {
		r.own.deliver(m.Message) // it copies what the waiting call reads
		return
	}
	if m.Method != "" {
		// Notifications and server requests go on at once: the proxy adds
		// no latency to them.
		if m.Method == mcpwire.NotifyToolsListChanged {
			r.announceRelist() // before the agent can act on it
		}
		r.ToAgent(frame)
		r.ic.Protect(func() { r.sess.ReceiveMessage(m.Message) })
		return
	}
	first, isList := r.lists.LoadAndDelete(m.ID)
	if !isList && r.sess.Established() {
		// A call's result: the agent has it first, the span ends after.
		// (The lock reads it too: an agent takes a listing under any id.)
		out := lockfilter.Filter(r.gate, r.cfg.Limits, frame, m.RawID)
		r.ToAgent(out)
		r.ic.Protect(func() { r.receive(&m, out) })
		return
	}
	// A listing or the handshake is recorded before the agent can read
	// it, so the next call sees the listing (and server) this one
	// delivered. The session keeps the listing's definitions: they are
	// read from a copy.
	m = m.In(bytes.Clone(frame))
	if isList && m.Result != nil {
		r.servedListing(m.Message, first.(bool))
	}
	out := lockfilter.Filter(r.gate, r.cfg.Limits, m.Frame, m.RawID)
	r.ic.Protect(func() { r.receive(&m, out) })
	r.ToAgent(out)
}

// receive records a response the agent gets as out: m itself, or the
// text the lock made of it (read by the session: it is another text).
func (r *Relay) receive(m *jsonrpc.Message, out []byte) {
	if jsonrpc.SameBytes(out, m.Frame) {
		r.sess.ReceiveMessage(m.Message)
		return
	}
	r.sess.ReceiveFrame(out)
}

// agentPieces is how the pieces of an oversized frame from the agent go
// upstream (send), unread: under a lock the gate cannot judge the frame, so
// it is not sent, and a request whose id comes first gets an error.
func (r *Relay) agentPieces(send func([]byte, bool) error) func([]byte, bool) error {
	if !r.gate.Locked() {
		return send
	}
	inFrame := false
	return func(b []byte, last bool) error {
		if !inFrame {
			if id := jsonwire.LookupTop(b, "id"); jsonrpc.IsID(id) && jsonwire.LookupTop(b, "method") != nil {
				r.answerError(id, jsonrpc.CodeUpstream, "mcpdrift proxy: a request over "+strconv.Itoa(r.cfg.Limits.MaxDocumentBytes)+
					" bytes cannot be judged against --lock: it was not sent")
			}
		}
		inFrame = !last
		return nil
	}
}

// ownUnreadable reports whether frame, which the proxy cannot parse (too
// deep, say, or too large), answers one of the proxy's own requests; if so
// that request fails with the reason. Such a frame is never the agent's: it
// must not reach an agent that never sent its id.
func (r *Relay) ownUnreadable(frame []byte, reason string) bool {
	m, ok := UnreadableResponse(frame)
	if !ok || !jsonrpc.IsOwnID(m.RawID) {
		return false
	}
	m.Error = jsonrpc.ErrorObject(jsonrpc.CodeUpstream, "the server's answer "+reason)
	r.own.deliver(m)
	return true
}

// UnreadableResponse is what the proxy can tell of a frame it cannot parse
// (nested past the parse depth, say, or the start of one too large): a
// response's top-level id, found without a depth limit. Relayed as it
// came, such a frame still answers the agent's request with that id.
func UnreadableResponse(frame []byte) (interceptor.Message, bool) {
	id := jsonwire.LookupTop(frame, "id")
	if id == nil || jsonwire.LookupTop(frame, "method") != nil {
		return interceptor.Message{}, false
	}
	return interceptor.ParseMessage(append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), '}'))
}

// fromServerPiece relays a piece of an oversized frame from the server to
// the agent, unless the frame answers one of the proxy's own requests (its
// id comes before the limit): then its pieces are dropped and the request
// fails; or a lock is set: then they are dropped too.
func (r *Relay) fromServerPiece(b []byte, last bool) error {
	if !r.inPieces {
		r.dropPieces = r.ownUnreadable(b, fmt.Sprintf("is over the %d-byte limit", r.cfg.Limits.MaxDocumentBytes))
		if !r.dropPieces && r.gate.Locked() {
			// The lock cannot read it (it may hold a listing): not relayed;
			// a response whose id comes first is answered with an error.
			r.dropPieces = true
			if id := jsonwire.LookupTop(b, "id"); jsonrpc.IsID(id) && jsonwire.LookupTop(b, "method") == nil {
				r.answerError(id, jsonrpc.CodeUpstream, lockfilter.UnreadableText(lockfilter.OverLimit(r.cfg.Limits)))
			}
		}
	}
	r.inPieces = !last
	if r.dropPieces {
		return nil
	}
	return r.agent.piece(b, last)
}

// servedListing learns the server's definitions from a listing on its way
// to the agent (which gets what the lock leaves of it).
func (r *Relay) servedListing(m interceptor.Message, firstPage bool) {
	defs, readable, _ := interceptor.ToolDefinitions(r.cfg.Limits, m.Result)
	if !readable {
		return
	}
	r.learnParamHeaders(m.Result, defs)
	next, _ := jsonwire.String(jsonwire.Lookup(m.Result, "nextCursor"))
	if firstPage && next == "" {
		// What the session now plans with is what the server serves. The
		// digest a call was planned with is the session's (ToolDigest:
		// it follows pages and list_changed); the gate keeps the
		// definitions, schemas included, for judging arguments.
		served := gate.Read(nil, defs, true)
		r.gate.Serve(served)
		r.gate.Learn(served)
	}
}

// learnParamHeaders keeps the x-mcp-header bindings of a listing's tools
// (a tool listed again without them loses them).
func (r *Relay) learnParamHeaders(result []byte, defs []contract.Definition) {
	old := r.params.Load()
	if old == nil && !bytes.Contains(result, []byte("x-mcp-header")) {
		return // the common case: no tool has any, nothing to do
	}
	next := map[string][]streamhttp.ParamBinding{}
	if old != nil {
		maps.Copy(next, *old)
	}
	for _, d := range defs {
		if b := streamhttp.ParamBindings(d.Raw); b != nil {
			next[d.Key] = b
		} else {
			delete(next, d.Key)
		}
	}
	r.params.Store(&next)
}

// ParamHeaders are the bindings of tool, as the agent was served it.
func (r *Relay) ParamHeaders(tool string) []streamhttp.ParamBinding {
	if p := r.params.Load(); p != nil {
		return (*p)[tool]
	}
	return nil
}

// refuse answers a call for the server: a span that ends with the refusal,
// a count, and the tool execution error the agent reads.
func (r *Relay) refuse(ctx context.Context, m *jsonrpc.Message, ref *gate.Refusal) {
	r.ic.Protect(func() { r.record(ctx, m) })
	r.answerRefusal(ctx, m.Message, ref)
}

// answerRefusal ends a recorded call with a refusal: the span, the count,
// and what the agent reads.
func (r *Relay) answerRefusal(ctx context.Context, m interceptor.Message, ref *gate.Refusal) {
	r.sess.Fail(m.ID, ref)
	r.refusals.Add(ctx, 1, metric.WithAttributes(
		attribute.String(semconv.GuardRefusal, ref.Code()),
		attribute.String(semconv.ServerName, r.sess.ServerName())))
	r.ToAgent(ref.Answer(m.RawID, m.Method))
}

// Regate judges an agent's tools/call again after a re-initialization (it
// was judged on the definitions of the dead session) and answers it with
// the refusal if the gate now refuses it. It reports whether it did.
func (r *Relay) Regate(m *jsonrpc.Message) bool {
	if m == nil || !m.Request() || m.Method != mcpwire.MethodToolsCall || !r.gate.Active() {
		return false
	}
	ref := r.checkCall(m)
	if ref == nil {
		return false
	}
	r.answerRefusal(context.Background(), m.Message, ref)
	return true
}

// Unparsed records a frame the proxy could not read; it is relayed as is.
func (r *Relay) Unparsed(from string, frame []byte) {
	_, span := r.tracer.Start(context.Background(), "mcpdrift.proxy unparsed frame", trace.WithAttributes(
		attribute.String(semconv.ErrorType, "malformed_frame"),
		attribute.String("mcpdrift.proxy.direction", from),
		attribute.Int("mcpdrift.proxy.frame_bytes", len(frame)),
		attribute.String(semconv.ClientSession, r.sess.ClientSessionID())))
	span.SetStatus(codes.Error, "frame is not JSON-RPC; relayed unchanged")
	span.End()
}

// oversized records a frame too large to parse; it is relayed unparsed.
func (r *Relay) oversized(from string) {
	_, span := r.tracer.Start(context.Background(), "mcpdrift.proxy oversized frame", trace.WithAttributes(
		attribute.String("mcpdrift.proxy.direction", from),
		attribute.Int("mcpdrift.proxy.limit_bytes", r.cfg.Limits.MaxDocumentBytes),
		attribute.String(semconv.ClientSession, r.sess.ClientSessionID())))
	span.End()
}

// checkCall asks the gate about a tools/call against the session's listing.
func (r *Relay) checkCall(m *jsonrpc.Message) *gate.Refusal {
	tool := m.Name()
	planned, listed := r.sess.ToolDigest(tool)
	return r.gate.Check(gate.Call{Tool: tool, Planned: planned, Listed: listed, Arguments: m.Arguments})
}
