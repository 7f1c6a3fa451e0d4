package interceptor

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/contract/canon"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// The MCP names the session interprets (their one home is mcpwire).
const (
	methodInitialize       = mcpwire.MethodInitialize
	methodDiscover         = mcpwire.MethodDiscover
	methodToolsCall        = mcpwire.MethodToolsCall
	methodToolsList        = mcpwire.MethodToolsList
	methodPromptsGet       = mcpwire.MethodPromptsGet
	methodListen           = mcpwire.MethodSubscriptionsListen
	notifyCancelled        = mcpwire.NotifyCancelled
	notifyToolsListChanged = mcpwire.NotifyToolsListChanged
	notifySubscriptionsAck = mcpwire.NotifySubscriptionsAck
	metaProtocolVersion    = mcpwire.MetaProtocolVersion
	metaServerInfo         = mcpwire.MetaServerInfo
	metaSubscriptionID     = mcpwire.MetaSubscriptionID
)

var clientKind = trace.WithSpanKind(trace.SpanKindClient)

// Request records an outgoing request (a message with an id) sent with ctx
// and returns the params to put on the wire: params itself, or, when trace
// context injection is on, params with the trace context added to _meta.
// Call it before writing the request, so the response cannot overtake it.
// A request without an id is a notification.
func (s *Session) Request(ctx context.Context, id ID, method string, params json.RawMessage) json.RawMessage {
	if !id.Valid() {
		return s.Notification(ctx, method, params)
	}
	_, params = s.request(ctx, id, method, params, true)
	return params
}

// request starts the span of a request and, when register is set, makes it
// pending; otherwise the caller ends it (a call the guard refused, which
// may not have an id yet).
func (s *Session) request(ctx context.Context, id ID, method string, params json.RawMessage, register bool) (*call, json.RawMessage) {
	ident := s.ident.Load()
	p := readParams(method, params, ident.protocolVersion == "", s.wantsClientName(ctx))
	if method == methodInitialize && p.clientName != "" {
		s.clientName.Store(&p.clientName) // only read with WithClientInfoAgent
	}
	if ident.protocolVersion == "" && p.protocolVersion != "" && method != methodInitialize && method != methodDiscover {
		// 2026-07-28 requests carry the version they speak in _meta.
		s.updateIdentity(func(i *identity) { i.protocolVersion = p.protocolVersion })
		ident = s.ident.Load()
	}
	ctx = s.continued(ctx, params)
	c := &call{id: id, method: method}
	b := s.ic.starts.get()
	defer s.ic.starts.put(b)
	attrs := append(b.attrs[:0], attribute.String(semconv.MCPMethodName, method))
	if id.Valid() {
		attrs = append(attrs, attribute.String(semconv.JSONRPCRequestID, id.String()))
	}
	attrs = s.appendAgent(ctx, attrs, p.clientName)
	attrs = append(attrs, ident.spanAttrs...)
	name := method
	switch method {
	case methodToolsCall:
		attrs, name = s.toolCallAttributes(ctx, c, p, attrs)
	case methodPromptsGet:
		c.target, _ = canon.UnquoteKey(p.name) // the key the listing uses, unpaired surrogates kept
		if c.target != "" {
			label := canon.KeyUTF8(c.target)
			attrs = append(attrs, attribute.String(semconv.GenAIPromptName, label))
			name = spanName(method, label)
		}
	case methodToolsList:
		c.firstPage = !p.cursor
		c.gen = s.gen.Load()
	case methodDiscover:
		c.askedVersion = p.protocolVersion
	}
	if p.uri != "" && strings.HasPrefix(method, "resources/") {
		attrs = append(attrs, attribute.String(semconv.MCPResourceURI, p.uri))
	}
	b.attrs = attrs
	ctx, c.span = s.ic.tracer.Start(ctx, name, b.options()...)
	c.started(ctx)
	params = s.inject(ctx, &c.meta, params)
	if register {
		s.register(ctx, c)
	}
	return c, params
}

// startBuf holds what a span starts with. The API copies attributes and
// options into the span's start configuration, so a startBuf is free once
// Start returns, and is recycled: a call allocates neither.
type startBuf struct {
	attrs []attribute.KeyValue
	opts  [2]trace.SpanStartOption
}

// options are the span start options: a CLIENT span with attrs.
func (b *startBuf) options() []trace.SpanStartOption {
	b.opts = [2]trace.SpanStartOption{clientKind, trace.WithAttributes(b.attrs...)}
	return b.opts[:]
}

type startPool struct{ p sync.Pool }

func (a *startPool) get() *startBuf {
	if b, ok := a.p.Get().(*startBuf); ok {
		return b
	}
	return &startBuf{attrs: make([]attribute.KeyValue, 0, 32)}
}

func (a *startPool) put(b *startBuf) {
	if cap(b.attrs) <= 64 {
		clear(b.attrs[:cap(b.attrs)]) // drop references to attribute values
		b.opts = [2]trace.SpanStartOption{}
		a.p.Put(b)
	}
}

// Notification records an outgoing notification sent with ctx (a span that
// ends at once: notifications have no response) and returns the params to
// put on the wire. An outgoing notifications/cancelled ends the request it
// cancels.
func (s *Session) Notification(ctx context.Context, method string, params json.RawMessage) json.RawMessage {
	if method == notifyCancelled {
		if id := rawID(jsonwire.Lookup(params, "requestId")); id.Valid() {
			if c := s.take(id); c != nil {
				msg := "cancelled by the client"
				if r, ok := jsonwire.String(jsonwire.Lookup(params, "reason")); ok && r != "" {
					msg = r
				}
				s.finish(c, outcome{errType: semconv.ErrorTypeCancelled, message: msg}, time.Now())
			}
		}
	}
	ctx = s.continued(ctx, params)
	ident := s.ident.Load()
	c := &call{method: method}
	b := s.ic.starts.get()
	defer s.ic.starts.put(b)
	b.attrs = append(b.attrs[:0], attribute.String(semconv.MCPMethodName, method))
	b.attrs = s.appendAgent(ctx, b.attrs, "")
	b.attrs = append(b.attrs, ident.spanAttrs...)
	ctx, c.span = s.ic.tracer.Start(ctx, method, b.options()...)
	c.started(ctx)
	params = s.inject(ctx, &c.meta, params)
	s.finish(c, outcome{}, time.Time{})
	return params
}

// appendAgent adds the calling agent's identity: from ctx, else the
// defaults (WithAgent), else (WithClientInfoAgent) the clientInfo name the
// request carries (2026-07-28 _meta; client), else the one the session's
// initialize did.
func (s *Session) appendAgent(ctx context.Context, attrs []attribute.KeyValue, client string) []attribute.KeyValue {
	name, id := s.ic.cfg.agentName, s.ic.cfg.agentID
	if a, ok := AgentFromContext(ctx); ok {
		if a.Name != "" {
			name = a.Name
		}
		if a.ID != "" {
			id = a.ID
		}
	}
	if name == "" {
		name = client
	}
	if name == "" {
		if c := s.clientName.Load(); c != nil {
			name = *c
		}
	}
	if name != "" {
		attrs = append(attrs, attribute.String(semconv.GenAIAgentName, name))
	}
	if id != "" {
		attrs = append(attrs, attribute.String(semconv.GenAIAgentID, id))
	}
	if conv, ok := ConversationIDFromContext(ctx); ok && conv != "" {
		attrs = append(attrs, attribute.String(semconv.GenAIConversationID, conv))
	}
	return attrs
}

// toolCallAttributes adds what the client had cached for the called tool,
// and returns the span name. It is map lookups only: digests, labels and
// span names were computed when the listing arrived.
func (s *Session) toolCallAttributes(ctx context.Context, c *call, p reqParams, attrs []attribute.KeyValue) ([]attribute.KeyValue, string) {
	l := s.tools.Load()
	def, known := l.lookup(p.name)
	if !known {
		// Not cached (or an escaped name): spelled out once, for this call.
		key, _ := canon.UnquoteKey(p.name)
		def = newToolDef(key, "", nil)
	}
	c.target = def.name
	attrs = append(attrs,
		attribute.String(semconv.GenAIOperationName, semconv.GenAIOperationExecTool),
		attribute.String(semconv.GenAIToolName, def.label))
	if l == nil || l.readable {
		attrs = append(attrs, attribute.Bool(semconv.ToolKnown, known))
	}
	if known && def.digest != "" {
		c.digest = def.digest
		attrs = append(attrs, attribute.String(semconv.ToolDigest, def.digest))
	}
	if l != nil && l.setDigest != "" {
		attrs = append(attrs, attribute.String(semconv.ToolsSetDigest, l.setDigest))
	}
	attrs = append(attrs, attribute.Bool(semconv.ToolsListingStale, s.listingStale(l)))
	if s.ic.cfg.staleHook == nil {
		// Only the stale-tool hook plans calls (BeforeToolCall).
	} else if planned, ok := ctx.Value(plannedKey{}).(plannedCall); ok && planned.tool == def.name && planned.digest != c.digest {
		// The stale-tool hook refreshed the listing and the definition the
		// agent planned with is gone.
		c.staleDefinition = true
		if planned.digest != "" {
			attrs = append(attrs, attribute.String(semconv.GuardPlannedDigest, planned.digest))
		}
	}
	if s.ic.cfg.validateArgs && known {
		attrs = s.guardArguments(c, l, def, p, attrs)
	}
	if s.ic.cfg.captureContent && len(p.arguments) > 0 && len(p.arguments) <= maxCapture {
		attrs = append(attrs, attribute.String(semconv.GenAIToolCallArguments, string(p.arguments)))
	}
	return attrs, def.spanName
}

// maxCapture bounds captured arguments and results; larger ones are omitted.
const maxCapture = 64 << 10

func spanName(method, target string) string {
	if target == "" {
		return method
	}
	return method + " " + target
}

// inject writes the propagator's fields into params._meta, collecting them
// in carrier (the call's own, so that it costs no allocation).
func (s *Session) inject(ctx context.Context, carrier *metaCarrier, params json.RawMessage) json.RawMessage {
	if !s.ic.cfg.injectContext {
		return params
	}
	s.ic.cfg.propagator.Inject(ctx, carrier)
	if len(carrier.fields) == 0 {
		return params
	}
	if s.ic.cfg.continueMeta {
		out, _ := jsonwire.SetMeta(params, carrier.fields)
		return out
	}
	out, _ := jsonwire.InjectMeta(params, carrier.fields)
	return out
}

// continued returns ctx with the trace context in params._meta as its
// parent, when continuation is on and params carry one.
func (s *Session) continued(ctx context.Context, params json.RawMessage) context.Context {
	if !s.ic.cfg.continueMeta {
		return ctx
	}
	meta := jsonwire.Lookup(params, mcpwire.Meta)
	if meta == nil {
		return ctx
	}
	return s.ic.cfg.propagator.Extract(ctx, metaReader(meta))
}

// metaReader reads propagation fields from a raw _meta object.
type metaReader []byte

func (m metaReader) Get(k string) string {
	v, _ := jsonwire.String(jsonwire.Lookup(m, k))
	return v
}
func (m metaReader) Keys() []string     { return nil }
func (m metaReader) Set(string, string) {}

// metaCarrier collects the propagator's fields.
type metaCarrier struct {
	fields []jsonwire.Field
	buf    [3]jsonwire.Field
}

func (c *metaCarrier) Get(string) string { return "" }
func (c *metaCarrier) Keys() []string    { return nil }
func (c *metaCarrier) Set(k, v string) {
	if c.fields == nil {
		c.fields = c.buf[:0]
	}
	c.fields = append(c.fields, jsonwire.Field{Key: k, Value: v})
}

// reqParams is what the session reads from a request's params.
type reqParams struct {
	name            []byte // the JSON string token, quotes and escapes included
	uri             string
	arguments       []byte
	cursor          bool   // a non-empty cursor: a later page of a listing
	protocolVersion string // initialize params.protocolVersion, or _meta's
	clientName      string // initialize params.clientInfo.name, or _meta's (when asked for)
}

// wantsClientName reports whether a request's clientInfo may name the agent
// (WithClientInfoAgent): nothing else does.
func (s *Session) wantsClientName(ctx context.Context) bool {
	if !s.ic.cfg.clientInfoName || s.ic.cfg.agentName != "" {
		return false
	}
	a, ok := AgentFromContext(ctx)
	return !ok || a.Name == ""
}

// readParams reads, in one pass over the top-level members, what the method
// needs. Malformed params yield what was read before the fault.
func readParams(method string, params []byte, needVersion, needClient bool) reqParams {
	var p reqParams
	o, ok := jsonwire.NewObject(params)
	if !ok {
		return p
	}
	for {
		m, ok := o.Next()
		if !ok {
			return p
		}
		switch {
		case jsonwire.KeyIs(m.Key, "name"):
			p.name = m.Value
		case jsonwire.KeyIs(m.Key, "arguments"):
			p.arguments = m.Value
		case jsonwire.KeyIs(m.Key, "uri"):
			p.uri, _ = jsonwire.String(m.Value)
		case jsonwire.KeyIs(m.Key, "cursor"):
			c, ok := jsonwire.String(m.Value)
			p.cursor = ok && c != ""
		case jsonwire.KeyIs(m.Key, "protocolVersion") && method == methodInitialize:
			p.protocolVersion, _ = jsonwire.String(m.Value)
		case needClient && method == methodInitialize && jsonwire.KeyIs(m.Key, "clientInfo"):
			p.clientName, _ = jsonwire.String(jsonwire.Lookup(m.Value, "name"))
		case (needVersion || needClient) && method != methodInitialize && jsonwire.KeyIs(m.Key, mcpwire.Meta):
			if v, ok := jsonwire.String(jsonwire.Lookup(m.Value, metaProtocolVersion)); ok && needVersion {
				p.protocolVersion = v
			}
			if needClient {
				p.clientName, _ = jsonwire.String(jsonwire.Lookup(jsonwire.Lookup(m.Value, mcpwire.MetaClientInfo), "name"))
			}
		}
	}
}
