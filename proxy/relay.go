package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/proxy/gate"
	"github.com/mcpdrift/mcpdrift/proxy/internal/jsonrpc"
	"github.com/mcpdrift/mcpdrift/proxy/lockfilter"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// ScopeName is the instrumentation scope of the proxy's own spans and metrics.
const ScopeName = "github.com/mcpdrift/mcpdrift/proxy"

// upstream is the server side of a relay whose agent speaks stdio.
type upstream interface {
	// send delivers one whole frame to the server; the relay hands the
	// server's frames back through relay.fromServer.
	send(ctx context.Context, frame []byte) error
	// sendPiece delivers part of a frame too large to parse; last ends it.
	sendPiece(b []byte, last bool) error
	// describe names the server in errors the agent reads (no secrets).
	describe() string
}

// relay carries one agent connection: it feeds the interceptor session every
// frame, applies the gate, and answers for the server where the gate
// refuses. Frames pass in the order they arrive in each direction.
type relay struct {
	cfg      *Config
	ic       *interceptor.Interceptor
	sess     *interceptor.Session
	tracer   trace.Tracer
	refusals metric.Int64Counter
	up       upstream
	agent    *lineWriter
	gate     *gate.Gate

	initFrame atomic.Pointer[[]byte] // the agent's initialize request, replayed on re-initialization
	ready     atomic.Bool            // the handshake is complete: the proxy may send its own requests
	lists     sync.Map               // id of an agent's tools/list in flight -> its cursor was empty
	own       ownCalls
	relist    chan bool // a relist is wanted; true when the server announced the change

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
	// tool name (paramheaders.go); nil while no tool has any.
	params atomic.Pointer[map[string][]paramBinding]
}

func newRelay(cfg *Config, tel Telemetry, ep interceptor.Endpoint, g *gate.Gate) *relay {
	ic := interceptor.New(interceptorOptions(cfg, tel)...)
	meter := tel.Meter.Meter(ScopeName)
	refusals, _ := meter.Int64Counter(semconv.MetricProxyRefusals,
		metric.WithDescription("Calls the proxy answered itself instead of forwarding: stale or unapproved tool definitions."))
	r := &relay{
		cfg: cfg, ic: ic, sess: ic.NewSession(ep), tracer: tel.Tracer.Tracer(ScopeName),
		refusals: refusals, gate: g, relist: make(chan bool, 1),
	}
	return r
}

// interceptorOptions configure the interceptor as the proxy's flags say.
func interceptorOptions(cfg *Config, tel Telemetry) []interceptor.Option {
	opts := []interceptor.Option{
		interceptor.WithTracerProvider(tel.Tracer), interceptor.WithMeterProvider(tel.Meter),
		interceptor.WithPropagators(tel.Propagator), interceptor.WithLimits(cfg.Limits),
		interceptor.WithTraceContextInjection(cfg.InjectTraceContext),
		interceptor.WithTraceContextContinuation(cfg.InjectTraceContext),
		interceptor.WithErrorHandler(func(error) {}), // the proxy's stderr is the server's: nothing of ours goes there
	}
	if cfg.ServerName != "" {
		opts = append(opts, interceptor.WithServerName(cfg.ServerName))
	}
	if cfg.AgentName != "" {
		opts = append(opts, interceptor.WithAgent(cfg.AgentName, ""))
	} else {
		opts = append(opts, interceptor.WithClientInfoAgent()) // the agents name themselves
	}
	return opts
}

// fromAgent handles one whole frame the agent sent.
func (r *relay) fromAgent(frame []byte) {
	ctx := context.Background()
	m, ok := interceptor.ParseMessage(frame)
	if !ok && jsonrpc.IsBatch(frame) {
		r.fromAgentBatch(ctx, frame)
		return
	}
	if ref := r.gate.Unclear(frame); ref != nil {
		r.refuse(ctx, m, frame, ref)
		return
	}
	if !ok {
		r.unparsed("agent", frame)
		r.sendUp(ctx, frame, nil)
		return
	}
	switch m.Method {
	case "":
		// A response to a server request (sampling, elicitation, roots).
	case mcpwire.MethodInitialize:
		f := bytes.Clone(frame)
		r.initFrame.Store(&f)
	case mcpwire.NotifyInitialized:
		r.ready.Store(true)
	case mcpwire.MethodToolsList:
		if m.ID.Valid() {
			cursor, _ := jsonwire.String(jsonwire.Lookup(m.Params, "cursor"))
			r.lists.Store(m.ID, cursor == "")
		}
	case mcpwire.MethodToolsCall:
		if m.ID.Valid() && r.gate.Active() {
			r.awaitRelist()
			if ref := r.checkCall(&m); ref != nil {
				r.refuse(ctx, m, frame, ref)
				return
			}
		}
	}
	if ref := r.gate.Failure(); ref != nil && m.ID.Valid() && m.Method != "" {
		r.refuse(ctx, m, frame, ref)
		return
	}
	r.forward(ctx, frame, &m)
}

// fromAgentBatch handles a JSON-RPC batch (2025-03-26 clients). With the
// gate on, each call in it is judged like a lone one: a refused call is
// answered on its own (clients match answers by id) and left out of the
// batch the server gets, so a batch is no way around the gate.
func (r *relay) fromAgentBatch(ctx context.Context, frame []byte) {
	if !r.gate.Active() {
		r.forward(ctx, frame, nil)
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
		m, ok := interceptor.ParseMessage(elem)
		if ref := r.batchRefusal(elem, &m, ok); ref != nil {
			r.refuse(ctx, m, elem, ref)
			refused = true
			continue
		}
		kept = append(kept, elem)
	}
	switch {
	case a.Err() || !refused:
		r.forward(ctx, frame, nil) // malformed (the server answers it), or nothing refused: as it came
	case len(kept) > 0:
		r.forward(ctx, jsonrpc.Array(kept), nil)
	}
}

// batchRefusal is the gate's answer to one request of a batch (elem, read
// as m), nil if it passes.
func (r *relay) batchRefusal(elem []byte, m *interceptor.Message, parsed bool) *gate.Refusal {
	if ref := r.gate.Unclear(elem); ref != nil {
		return ref
	}
	if !parsed || !m.ID.Valid() || m.Method == "" {
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

// forward records frame on the session and sends what it returns.
func (r *relay) forward(ctx context.Context, frame []byte, m *interceptor.Message) {
	out := frame
	r.ic.Protect(func() { out = r.sess.SendFrame(ctx, frame) })
	r.sendUp(ctx, out, m)
}

// sendUp sends a frame upstream; a request that cannot be sent ends with a
// JSON-RPC error naming the upstream, so the agent never waits for nothing.
func (r *relay) sendUp(ctx context.Context, frame []byte, m *interceptor.Message) {
	err := r.up.send(ctx, frame)
	if err == nil || m == nil {
		return
	}
	r.upstreamFailed(*m, err)
}

// upstreamFailed ends an agent's request the upstream could not answer with
// a JSON-RPC error naming the upstream (notifications have nothing to end).
func (r *relay) upstreamFailed(m interceptor.Message, err error) {
	if !m.ID.Valid() || m.Method == "" {
		return
	}
	r.sess.Fail(m.ID, err)
	r.answerError(m.RawID, jsonrpc.CodeUpstream, fmt.Sprintf("mcpdrift proxy: upstream %s: %v", r.up.describe(), err))
}

// answerError answers an agent's request with a JSON-RPC error.
func (r *relay) answerError(id json.RawMessage, code int, message string) {
	r.toAgent(jsonrpc.Error(id, code, message))
}

func (r *relay) toAgent(frame []byte) {
	_ = r.agent.frame(frame) // a gone agent ends the relay on its own (stdin EOF)
}

// fromServer handles one whole frame the server sent; the frame is valid
// until it returns. Frames reach the agent before the proxy's span work
// unless the session must see them first.
func (r *relay) fromServer(frame []byte) {
	m, ok := interceptor.ParseMessage(frame)
	if !ok {
		if r.ownUnreadable(frame, "could not be read") {
			r.unparsed("server", frame)
			return
		}
		out := lockfilter.Filter(r.gate, r.cfg.Limits, frame, nil)
		if !jsonrpc.IsBatch(frame) && len(bytes.TrimSpace(frame)) > 0 {
			r.toAgent(out)
			r.unparsed("server", frame)
			if m, ok := unreadableResponse(frame); ok {
				r.sess.Fail(m.ID, errors.New("the server's answer could not be read"))
			}
			return
		}
		frame = bytes.Clone(out) // a batch: the session may keep a listing in it
		r.ic.Protect(func() { r.sess.ReceiveFrame(frame) })
		r.toAgent(frame)
		return
	}
	if m.Method == "" && jsonrpc.IsOwnID(m.RawID) {
		// The waiting call reads the response after this returns, when
		// the frame's bytes may hold the next frame: it gets a copy.
		m, _ = interceptor.ParseMessage(bytes.Clone(frame))
		r.own.deliver(m)
		return
	}
	if m.Method != "" {
		// Notifications and server requests go on at once: the proxy adds
		// no latency to them.
		if m.Method == mcpwire.NotifyToolsListChanged {
			r.announceRelist() // before the agent can act on it
		}
		r.toAgent(frame)
		r.ic.Protect(func() { r.sess.ReceiveFrame(frame) })
		return
	}
	first, isList := r.lists.LoadAndDelete(m.ID)
	if !isList && r.sess.Established() {
		// A call's result: the agent has it first, the span ends after.
		// (The lock reads it too: an agent takes a listing under any id.)
		frame = lockfilter.Filter(r.gate, r.cfg.Limits, frame, m.RawID)
		r.toAgent(frame)
		r.ic.Protect(func() { r.sess.ReceiveFrame(frame) })
		return
	}
	// A listing or the handshake is recorded before the agent can read
	// it, so the next call sees the listing (and server) this one
	// delivered. The session keeps the listing's definitions.
	frame = bytes.Clone(frame)
	if isList && m.Result != nil {
		m, _ = interceptor.ParseMessage(frame)
		r.servedListing(m, first.(bool))
	}
	frame = lockfilter.Filter(r.gate, r.cfg.Limits, frame, m.RawID)
	r.ic.Protect(func() { r.sess.ReceiveFrame(frame) })
	r.toAgent(frame)
}

// agentPieces is how the pieces of an oversized frame from the agent go
// upstream (send), unread: under a lock the gate cannot judge the frame, so
// it is not sent, and a request whose id comes first gets an error.
func (r *relay) agentPieces(send func([]byte, bool) error) func([]byte, bool) error {
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
func (r *relay) ownUnreadable(frame []byte, reason string) bool {
	m, ok := unreadableResponse(frame)
	if !ok || !jsonrpc.IsOwnID(m.RawID) {
		return false
	}
	m.Error = jsonrpc.ErrorObject(jsonrpc.CodeUpstream, "the server's answer "+reason)
	r.own.deliver(m)
	return true
}

// unreadableResponse is what the proxy can tell of a frame it cannot parse
// (nested past the parse depth, say, or the start of one too large): a
// response's top-level id, found without a depth limit. Relayed as it
// came, such a frame still answers the agent's request with that id.
func unreadableResponse(frame []byte) (interceptor.Message, bool) {
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
func (r *relay) fromServerPiece(b []byte, last bool) error {
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
func (r *relay) servedListing(m interceptor.Message, firstPage bool) {
	defs, readable, _ := interceptor.ToolDefinitions(r.cfg.Limits, m.Result)
	if !readable {
		return
	}
	r.learnParamHeaders(m.Result, defs)
	next, _ := jsonwire.String(jsonwire.Lookup(m.Result, "nextCursor"))
	if firstPage && next == "" {
		r.gate.Learn(gate.Read(nil, defs, true))
	}
}

// learnParamHeaders keeps the x-mcp-header bindings of a listing's tools
// (a tool listed again without them loses them).
func (r *relay) learnParamHeaders(result []byte, defs []contract.Definition) {
	old := r.params.Load()
	if old == nil && !bytes.Contains(result, []byte("x-mcp-header")) {
		return // the common case: no tool has any, nothing to do
	}
	next := map[string][]paramBinding{}
	if old != nil {
		maps.Copy(next, *old)
	}
	for _, d := range defs {
		if b := paramBindings(d.Raw); b != nil {
			next[d.Key] = b
		} else {
			delete(next, d.Key)
		}
	}
	r.params.Store(&next)
}

// paramHeaders are the bindings of tool, as the agent was served it.
func (r *relay) paramHeaders(tool string) []paramBinding {
	if p := r.params.Load(); p != nil {
		return (*p)[tool]
	}
	return nil
}

// refuse answers a call for the server: a span that ends with the refusal,
// a count, and the tool execution error the agent reads.
func (r *relay) refuse(ctx context.Context, m interceptor.Message, frame []byte, ref *gate.Refusal) {
	r.ic.Protect(func() { r.sess.SendFrame(ctx, frame) })
	r.answerRefusal(ctx, m, ref)
}

// answerRefusal ends a recorded call with a refusal: the span, the count,
// and what the agent reads.
func (r *relay) answerRefusal(ctx context.Context, m interceptor.Message, ref *gate.Refusal) {
	r.sess.Fail(m.ID, ref)
	r.refusals.Add(ctx, 1, metric.WithAttributes(
		attribute.String(semconv.GuardRefusal, ref.Code()),
		attribute.String(semconv.ServerName, r.sess.ServerName())))
	r.toAgent(ref.Answer(m.RawID, m.Method))
}

// unparsed records a frame the proxy could not read; it is relayed as is.
func (r *relay) unparsed(from string, frame []byte) {
	_, span := r.tracer.Start(context.Background(), "mcpdrift.proxy unparsed frame", trace.WithAttributes(
		attribute.String(semconv.ErrorType, "malformed_frame"),
		attribute.String("mcpdrift.proxy.direction", from),
		attribute.Int("mcpdrift.proxy.frame_bytes", len(frame)),
		attribute.String(semconv.ClientSession, r.sess.ClientSessionID())))
	span.SetStatus(codes.Error, "frame is not JSON-RPC; relayed unchanged")
	span.End()
}

// oversized records a frame too large to parse; it is relayed unparsed.
func (r *relay) oversized(from string) {
	_, span := r.tracer.Start(context.Background(), "mcpdrift.proxy oversized frame", trace.WithAttributes(
		attribute.String("mcpdrift.proxy.direction", from),
		attribute.Int("mcpdrift.proxy.limit_bytes", r.cfg.Limits.MaxDocumentBytes),
		attribute.String(semconv.ClientSession, r.sess.ClientSessionID())))
	span.End()
}

// checkCall asks the gate about a tools/call against the session's listing.
func (r *relay) checkCall(m *interceptor.Message) *gate.Refusal {
	tool := toolName(m.Params)
	planned, listed := r.sess.ToolDigest(tool)
	return r.gate.Check(gate.Call{Tool: tool, Planned: planned, Listed: listed, Arguments: jsonwire.Lookup(m.Params, "arguments")})
}

func toolName(params json.RawMessage) string {
	name, _ := jsonwire.String(jsonwire.Lookup(params, "name"))
	return name
}

// wantRelist asks the relist loop for a relist (coalesced).
func (r *relay) wantRelist(announced bool) {
	select {
	case r.relist <- announced:
	default:
	}
}

// announceRelist marks a relist pending (the server said its tools changed)
// and asks for it.
func (r *relay) announceRelist() {
	r.relistMu.Lock()
	if r.relistWait == nil {
		r.relistWait = make(chan struct{})
	}
	r.relistGen++
	r.relistMu.Unlock()
	r.wantRelist(true)
}

// relisted ends the pending relist if no announcement came since gen.
func (r *relay) relisted(gen uint64) {
	r.relistMu.Lock()
	defer r.relistMu.Unlock()
	if r.relistWait == nil {
		return
	}
	if r.relistGen != gen {
		r.wantRelist(true) // changed again meanwhile: list once more
		return
	}
	close(r.relistWait)
	r.relistWait = nil
}

// awaitRelist waits (at most UpstreamTimeout) for a pending relist.
func (r *relay) awaitRelist() {
	r.relistMu.Lock()
	ch := r.relistWait
	r.relistMu.Unlock()
	if ch == nil {
		return
	}
	t := time.NewTimer(r.cfg.UpstreamTimeout)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

// relistLoop lists tools on the proxy's own request ids when the server
// announces a change, and every RelistInterval.
func (r *relay) relistLoop(ctx context.Context) {
	var tick <-chan time.Time
	if r.cfg.RelistInterval > 0 {
		t := time.NewTicker(r.cfg.RelistInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		announced := false
		select {
		case <-ctx.Done():
			return
		case announced = <-r.relist:
		case <-tick:
		}
		r.relistMu.Lock()
		gen := r.relistGen
		r.relistMu.Unlock()
		if r.ready.Load() || (r.sess.Established() && r.sess.ProtocolVersion() >= mcpwire.ProtocolStateless) {
			r.relistTools(ctx, !announced)
		}
		r.relisted(gen)
	}
}

// relistTools lists the server's tools on the proxy's own ids and updates
// the gate. When notify is set and a definition changed, the agent is told
// (notifications/tools/list_changed), as the server would have.
func (r *relay) relistTools(ctx context.Context, notify bool) bool {
	current, err := r.listTools(ctx)
	if err != nil {
		return false
	}
	changed := r.gate.Learn(current)
	if changed && notify {
		r.notifyListChanged()
	}
	return changed
}

// notifyListChanged tells the agent its listing is stale, and the session.
func (r *relay) notifyListChanged() {
	frame := []byte(`{"jsonrpc":"2.0","method":"` + mcpwire.NotifyToolsListChanged + `"}`)
	r.toAgent(frame)
	r.sess.ReceiveFrame(frame)
}

// listTools reads the server's whole tools listing on the proxy's own ids.
func (r *relay) listTools(ctx context.Context) (gate.Definitions, error) {
	return gate.ListTools(ctx, r.cfg.Limits, true, r.call)
}

// call sends a request on the proxy's own id space and waits for its result.
func (r *relay) call(ctx context.Context, method string, params []byte) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.UpstreamTimeout)
	defer cancel()
	id, ch := r.own.register()
	defer r.own.forget(id)
	frame := make([]byte, 0, 64+len(params))
	frame = append(frame, `{"jsonrpc":"2.0","id":`...)
	frame = jsonwire.AppendString(frame, id)
	frame = append(frame, `,"method":`...)
	frame = jsonwire.AppendString(frame, method)
	frame = append(frame, `,"params":`...)
	frame = append(append(frame, params...), '}')
	if err := r.up.send(ctx, frame); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			msg, _ := jsonwire.String(jsonwire.Lookup(m.Error, "message"))
			return nil, fmt.Errorf("%s: %s", method, msg)
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// ownCalls are the proxy's own requests waiting for their responses. Their
// ids are strings no agent uses ("mcpdrift-proxy-N"), so they are never
// confused with the agent's.
type ownCalls struct {
	mu      sync.Mutex
	seq     uint64
	waiting map[interceptor.ID]chan interceptor.Message
}

func (o *ownCalls) register() (string, chan interceptor.Message) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seq++
	id := jsonrpc.OwnPrefix + strconv.FormatUint(o.seq, 10)
	if o.waiting == nil {
		o.waiting = map[interceptor.ID]chan interceptor.Message{}
	}
	ch := make(chan interceptor.Message, 1)
	o.waiting[interceptor.StringID(id)] = ch
	return id, ch
}

func (o *ownCalls) forget(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.waiting, interceptor.StringID(id))
}

// deliver hands a response to the own call it answers. It reports whether
// the response has one of the proxy's ids: such a response (even a late one)
// is never the agent's.
func (o *ownCalls) deliver(m interceptor.Message) bool {
	if !jsonrpc.IsOwnID(m.RawID) {
		return false
	}
	o.mu.Lock()
	ch, ok := o.waiting[m.ID]
	o.mu.Unlock()
	if ok {
		// The waiting call reads the result after the frame is gone.
		m.Result, m.Error = bytes.Clone(m.Result), bytes.Clone(m.Error)
		select {
		case ch <- m:
		default: // answered twice: the first answer stands
		}
	}
	return true
}
