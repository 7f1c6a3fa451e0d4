package interceptor

import (
	"encoding/json"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// RPCError is the error member of a JSON-RPC response.
type RPCError struct {
	Code    int64
	Message string
}

// Response records an incoming response to one of the session's requests:
// result as received on the wire (it is hashed as-is and may be retained;
// the caller must not modify it afterwards), or rpcErr. Responses to ids the
// session does not know are ignored.
func (s *Session) Response(id ID, result json.RawMessage, rpcErr *RPCError) {
	c := s.take(id)
	if c == nil {
		return
	}
	// The span ends as finish runs, except after a tools/list page: hashing
	// it is the interceptor's time, not the server's.
	var arrived time.Time
	if c.method == methodToolsList {
		arrived = time.Now()
	}
	if rpcErr != nil {
		code := strconv.FormatInt(rpcErr.Code, 10)
		s.finish(c, outcome{errType: code, code: code, message: rpcErr.Message}, arrived)
		return
	}
	o := outcome{result: result}
	switch c.method {
	case methodToolsCall:
		if jsonwire.IsTrue(jsonwire.Lookup(result, "isError")) {
			o.errType, o.message = semconv.ErrorTypeToolError, "the tool reported an error (isError)"
		} else if s.ic.cfg.captureContent && len(result) <= maxCapture {
			o.extra = append(o.extra, attribute.String(semconv.GenAIToolCallResult, string(result)))
		}
	case methodToolsList:
		o.extra = s.applyToolsPage(c, result)
	case methodInitialize:
		s.learnInitialize(result)
		o.extra = s.identityAttributes()
	case methodDiscover:
		s.learnDiscover(c, result)
		o.extra = s.identityAttributes()
	}
	if s.ident.Load().serverInfoName == "" && c.method != methodInitialize {
		s.learnServerInfo(jsonwire.Lookup(jsonwire.Lookup(result, mcpwire.Meta), metaServerInfo))
	}
	s.finish(c, o, arrived)
}

// Incoming records a request or notification the server sent. It tracks
// tools list_changed notifications and ends subscriptions/listen requests
// when the server acknowledges them; nothing else needs the session.
func (s *Session) Incoming(method string, params json.RawMessage) {
	switch method {
	case notifyToolsListChanged:
		s.gen.Add(1)
	case notifySubscriptionsAck:
		id := rawID(jsonwire.Lookup(jsonwire.Lookup(params, mcpwire.Meta), metaSubscriptionID))
		if !id.Valid() {
			return
		}
		s.mu.Lock()
		c := s.pending[id]
		s.mu.Unlock()
		if c != nil && c.method == methodListen {
			// The listen call lives as long as the stream; its span covers
			// the time to the server's acknowledgement, the listen's "ack".
			if c = s.take(id); c != nil {
				s.finish(c, outcome{}, time.Now())
			}
		}
	}
}

func (s *Session) learnInitialize(result []byte) {
	version, _ := jsonwire.String(jsonwire.Lookup(result, "protocolVersion"))
	info := serverInfoName(jsonwire.Lookup(result, "serverInfo"))
	s.updateIdentity(func(i *identity) {
		i.stateless, i.established = false, true
		if version != "" {
			i.protocolVersion = version
		}
		if info != "" {
			i.serverInfoName = info
		}
	})
}

// learnDiscover records a 2026-07-28 server/discover result: the server's
// identity is in _meta, and the version is the one the client asked for when
// the server supports it (otherwise the next request's _meta tells).
func (s *Session) learnDiscover(c *call, result []byte) {
	info := serverInfoName(jsonwire.Lookup(jsonwire.Lookup(result, mcpwire.Meta), metaServerInfo))
	supported := c.askedVersion != "" && arrayHasString(jsonwire.Lookup(result, "supportedVersions"), c.askedVersion)
	s.updateIdentity(func(i *identity) {
		i.stateless, i.established = true, true
		if supported {
			i.protocolVersion = c.askedVersion
		}
		if info != "" {
			i.serverInfoName = info
		}
	})
}

func (s *Session) learnServerInfo(raw []byte) {
	if info := serverInfoName(raw); info != "" {
		s.updateIdentity(func(i *identity) { i.serverInfoName = info })
	}
}

func serverInfoName(raw []byte) string {
	name, _ := jsonwire.String(jsonwire.Lookup(raw, "name"))
	return name
}

// identityAttributes are the identity attributes learned from a handshake
// response, set on that response's own span.
func (s *Session) identityAttributes() []attribute.KeyValue {
	id := s.ident.Load()
	var kv []attribute.KeyValue
	if id.serverName != "" {
		kv = append(kv, attribute.String(semconv.ServerName, id.serverName))
	}
	if id.protocolVersion != "" {
		kv = append(kv, attribute.String(semconv.MCPProtocolVersion, id.protocolVersion))
	}
	return kv
}

// finish ends c's span at end (the zero time: now) and records its
// duration with the request's context, so the measurement can carry an
// exemplar of the span.
func (s *Session) finish(c *call, o outcome, end time.Time) {
	if c.span.IsRecording() {
		if o.errType != "" || o.code != "" || c.staleDefinition {
			var buf [3]attribute.KeyValue
			attrs := buf[:0]
			if o.errType != "" {
				attrs = append(attrs, attribute.String(semconv.ErrorType, o.errType))
				c.span.SetStatus(codes.Error, contract.TruncateBytes(o.message, 512))
			}
			if o.code != "" {
				attrs = append(attrs, attribute.String(semconv.RPCResponseStatusCode, o.code))
			}
			if c.staleDefinition {
				attrs = append(attrs, attribute.Bool(semconv.GuardStaleDefinition, true))
			}
			c.span.SetAttributes(attrs...)
		}
		if len(o.extra) > 0 {
			c.span.SetAttributes(o.extra...)
		}
	}
	if end.IsZero() {
		c.span.End() // an end option would cost two allocations per call
	} else {
		c.span.End(trace.WithTimestamp(end))
	}
	s.ic.duration.Record(c.ctx, c.duration(end).Seconds(), s.ident.Load().recordOptions(c, o)...)
}

// metricKey identifies one combination of per-call metric attributes.
type metricKey struct{ method, target, errType, code string }

// maxMetricSets bounds the cached attribute sets per identity; past it sets
// are built per measurement (still correct, just slower).
const maxMetricSets = 1024

// recordOptions returns the measurement options for c's outcome, building
// the attribute set once per combination.
func (id *identity) recordOptions(c *call, o outcome) []metric.RecordOption {
	key := metricKey{c.method, c.target, o.errType, o.code}
	id.setsMu.RLock()
	opts, ok := id.sets[key]
	id.setsMu.RUnlock()
	if ok {
		return opts
	}
	kv := make([]attribute.KeyValue, 0, len(id.metricAttrs)+5)
	kv = append(kv, attribute.String(semconv.MCPMethodName, c.method))
	switch {
	case c.method == methodToolsCall && c.target != "":
		kv = append(kv,
			attribute.String(semconv.GenAIOperationName, semconv.GenAIOperationExecTool),
			attribute.String(semconv.GenAIToolName, canon.KeyUTF8(c.target)))
	case c.method == methodPromptsGet && c.target != "":
		kv = append(kv, attribute.String(semconv.GenAIPromptName, canon.KeyUTF8(c.target)))
	}
	if o.errType != "" {
		kv = append(kv, attribute.String(semconv.ErrorType, o.errType))
	}
	if o.code != "" {
		kv = append(kv, attribute.String(semconv.RPCResponseStatusCode, o.code))
	}
	kv = append(kv, id.metricAttrs...)
	opts = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
	id.setsMu.Lock()
	if len(id.sets) < maxMetricSets {
		if id.sets == nil {
			id.sets = map[metricKey][]metric.RecordOption{}
		}
		id.sets[key] = opts
	}
	id.setsMu.Unlock()
	return opts
}

func arrayHasString(arr []byte, want string) bool {
	a, ok := jsonwire.NewArray(arr)
	if !ok {
		return false
	}
	for {
		v, ok := a.Next()
		if !ok {
			return false
		}
		if s, ok := jsonwire.String(v); ok && s == want {
			return true
		}
	}
}
