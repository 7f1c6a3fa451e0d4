package mcpimpactprocessor

import (
	"encoding/hex"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// dialect is the convention a tool-call span follows.
type dialect uint8

const (
	dialectNone dialect = iota
	// dialectSemconv: mcp.method.name=tools/call with gen_ai.tool.name (the
	// GenAI / MCP semantic conventions; the mcpdrift interceptor).
	dialectSemconv
	// dialectTraceloop: @traceloop/instrumentation-mcp and its Python twin,
	// spans "{tool}.tool" with traceloop.span.kind=tool and
	// traceloop.entity.name={tool}, from an instrumentation scope whose name
	// mentions MCP (the Traceloop SDK uses the same span shape for every
	// decorated tool, MCP or not).
	dialectTraceloop
	// dialectToolName: mcp.tool.name (e.g. @shinzolabs/instrumentation-mcp).
	dialectToolName
	dialects
)

func (d dialect) String() string {
	switch d {
	case dialectSemconv:
		return "semconv"
	case dialectTraceloop:
		return "traceloop"
	case dialectToolName:
		return "mcp_tool_name"
	}
	return "none"
}

// toolCall is one recognised tool-call span.
type toolCall struct {
	span       ptrace.Span
	dialect    dialect
	key        callKey
	at         int64 // unix nanoseconds
	latency    int64 // span duration, microseconds; -1 when the span has none
	failed     bool
	serverSide bool // recorded by the server: it cannot name the agent
	// guardStale: the proxy or the guard found the call planned on a
	// definition the server no longer serves, and said so on the span
	// (mcpdrift.guard.refusal = STALE_TOOL_SCHEMA, or
	// mcpdrift.guard.stale_definition or mcpdrift.tool.stale = true).
	guardStale bool
}

// resourceInfo holds the resource attributes tool-call spans fall back on.
type resourceInfo struct {
	serviceName   string
	agent         string
	serverName    string
	serverURL     string
	conversation  string
	clientSession string
	mcpSession    string
}

func readResource(attrs pcommon.Map) resourceInfo {
	var r resourceInfo
	for k, v := range attrs.All() {
		if v.Type() != pcommon.ValueTypeStr {
			continue
		}
		switch k {
		case semconv.ServiceName:
			r.serviceName = v.Str()
		case semconv.GenAIAgentName:
			r.agent = v.Str()
		case semconv.ServerName:
			r.serverName = v.Str()
		case semconv.ServerURL:
			r.serverURL = v.Str()
		case semconv.GenAIConversationID:
			r.conversation = v.Str()
		case semconv.ClientSession:
			r.clientSession = v.Str()
		case semconv.MCPSessionID:
			r.mcpSession = v.Str()
		}
	}
	return r
}

// spanAttrs holds every span attribute the processor reads, collected in one
// pass: most spans are not tool calls, and one pass over their attributes is
// all they cost.
type spanAttrs struct {
	method, genaiTool, mcpTool, tlKind, tlEntity   string
	agent, conversation, clientSession, mcpSession string
	serverName, serverURL, urlFull, address        string
	port                                           pcommon.Value
	digest, errorType, clientAddress               string
	plannedDigest, refusal                         string
	staleDefinition                                bool
}

func readSpan(attrs pcommon.Map, a *spanAttrs) {
	*a = spanAttrs{}
	for k, v := range attrs.All() {
		switch k {
		case semconv.ServerPort:
			a.port = v
			continue
		case semconv.GuardStaleDefinition, semconv.ToolStale:
			// The guard sets both on a call it refused as stale.
			a.staleDefinition = a.staleDefinition || (v.Type() == pcommon.ValueTypeBool && v.Bool())
			continue
		}
		if v.Type() != pcommon.ValueTypeStr {
			continue
		}
		switch k {
		case semconv.MCPMethodName:
			a.method = v.Str()
		case semconv.GenAIToolName:
			a.genaiTool = v.Str()
		case semconv.MCPToolName:
			a.mcpTool = v.Str()
		case semconv.TraceloopSpanKind:
			a.tlKind = v.Str()
		case semconv.TraceloopEntityName:
			a.tlEntity = v.Str()
		case semconv.GenAIAgentName:
			a.agent = v.Str()
		case semconv.GenAIConversationID:
			a.conversation = v.Str()
		case semconv.ClientSession:
			a.clientSession = v.Str()
		case semconv.MCPSessionID:
			a.mcpSession = v.Str()
		case semconv.ServerName:
			a.serverName = v.Str()
		case semconv.ServerURL:
			a.serverURL = v.Str()
		case semconv.URLFull:
			a.urlFull = v.Str()
		case semconv.ServerAddress:
			a.address = v.Str()
		case semconv.ToolDigest:
			a.digest = v.Str()
		case semconv.ErrorType:
			a.errorType = v.Str()
		case semconv.ClientAddress:
			a.clientAddress = v.Str()
		case semconv.GuardPlannedDigest:
			a.plannedDigest = v.Str()
		case semconv.GuardRefusal:
			a.refusal = v.Str()
		}
	}
}

// mayBeToolCall is the cheap first look at every span: does it carry any
// attribute that marks a tool call in one of the dialects? Most spans are
// not tool calls and cost no more than this (one pass, no copies).
func mayBeToolCall(attrs pcommon.Map) bool {
	for k := range attrs.All() {
		switch k {
		case semconv.MCPMethodName, semconv.MCPToolName, semconv.TraceloopSpanKind:
			return true
		}
	}
	return false
}

// classify tells whether a span is a tool call, in which dialect, and of
// which tool.
func classify(spanName string, mcpScope bool, a *spanAttrs) (dialect, string) {
	switch {
	case a.method == semconv.MCPMethodToolsCall:
		switch {
		case a.genaiTool != "":
			return dialectSemconv, a.genaiTool
		case a.mcpTool != "":
			return dialectToolName, a.mcpTool
		}
		// The conventions name the span "{mcp.method.name} {target}".
		if tool, ok := strings.CutPrefix(spanName, semconv.MCPMethodToolsCall+" "); ok && tool != "" {
			return dialectSemconv, tool
		}
	case a.mcpTool != "" && (a.method == "" || strings.HasPrefix(a.method, semconv.MCPMethodToolsCall)):
		return dialectToolName, a.mcpTool
	case mcpScope && a.tlKind == semconv.TraceloopSpanKindTool && a.tlEntity != "":
		if tool, ok := strings.CutSuffix(spanName, semconv.TraceloopToolSuffix); ok && tool == a.tlEntity {
			return dialectTraceloop, tool
		}
	}
	return dialectNone, ""
}

// isMCPScope reports whether an instrumentation scope name mentions MCP.
func isMCPScope(name string) bool {
	for i := 0; i+3 <= len(name); i++ {
		if strings.EqualFold(name[i:i+3], "mcp") {
			return true
		}
	}
	return false
}

// collectCalls appends the tool-call spans of td to calls.
func collectCalls(td ptrace.Traces, now int64, calls []toolCall) []toolCall {
	var a spanAttrs
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		var res resourceInfo
		resRead := false
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			mcpScope := isMCPScope(ss.Scope().Name())
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				if !mayBeToolCall(span.Attributes()) {
					continue
				}
				readSpan(span.Attributes(), &a)
				d, tool := classify(span.Name(), mcpScope, &a)
				if d == dialectNone {
					continue
				}
				if !resRead {
					res, resRead = readResource(rs.Resource().Attributes()), true
				}
				calls = append(calls, newToolCall(span, d, tool, &a, &res, now))
			}
		}
	}
	return calls
}

func newToolCall(span ptrace.Span, d dialect, tool string, a *spanAttrs, res *resourceInfo, now int64) toolCall {
	kind := span.Kind()
	serverSide := kind == ptrace.SpanKindServer || (kind != ptrace.SpanKindClient && a.clientAddress != "")
	id := identity{
		name: first(a.serverName, res.serverName),
		url:  withoutSecrets(first(a.serverURL, res.serverURL, a.urlFull)),
		host: a.address,
	}
	if a.address != "" {
		id.port = portString(a.port)
	}
	agent := first(a.agent, res.agent)
	if serverSide {
		// A server-side span's resource is the server, not the agent.
		id.info = res.serviceName
	} else if agent == "" {
		agent = res.serviceName
	}
	session := first(a.conversation, res.conversation, a.clientSession, res.clientSession, a.mcpSession, res.mcpSession)
	if session == "" && d == dialectTraceloop {
		session = traceloopSession(span)
	}
	start, end := int64(span.StartTimestamp()), int64(span.EndTimestamp())
	at, latency := start, int64(-1)
	if start != 0 && end >= start {
		latency = (end - start + 500) / 1000
	}
	if at == 0 {
		at = end
	}
	if at == 0 {
		at = now
	}
	return toolCall{
		span:    span,
		dialect: d,
		key: callKey{
			server:  id.clipped(),
			tool:    clip(tool),
			agent:   clip(agent),
			session: clip(session),
			// The definition the call was planned against is what staleness
			// and impact are about; the guard records it when the agent's
			// cache has moved on since.
			digest: clip(first(a.plannedDigest, a.digest)),
		},
		at:         at,
		latency:    latency,
		failed:     span.Status().Code() == ptrace.StatusCodeError || a.errorType != "",
		serverSide: serverSide,
		guardStale: a.refusal == semconv.RefusalStaleToolSchema || a.staleDefinition,
	}
}

// traceloopSession names the connection a Traceloop tool call was made on.
// Traceloop gives each connection an mcp.client.session span and makes every
// request on it a child of that span, so the call's parent span ID is the
// session's. It is read from the call itself: the session span ends, and is
// exported, only when the connection closes, usually in a later batch. The
// trace ID alone would merge two connections opened within one trace (two
// servers, or a reconnect, inside one agent request). A call with no parent
// (a client connected before it was instrumented) has no session.
func traceloopSession(span ptrace.Span) string {
	parent := span.ParentSpanID()
	if parent.IsEmpty() {
		return ""
	}
	trace := span.TraceID()
	var b [2*len(trace) + 1 + 2*len(parent)]byte
	hex.Encode(b[:], trace[:])
	b[2*len(trace)] = '/'
	hex.Encode(b[2*len(trace)+1:], parent[:])
	return string(b[:])
}

// withoutSecrets drops credentials, query and fragment from a URL before
// the index keeps (and may persist) it. Most URLs have none of them and are
// kept as they are; matching normalizes them anyway.
func withoutSecrets(u string) string {
	if strings.ContainsAny(u, "@?#") {
		return serverid.Normalize(u)
	}
	return u
}

func (id identity) clipped() identity {
	return identity{name: clip(id.name), url: clip(id.url), info: clip(id.info), host: clip(id.host), port: clip(id.port)}
}

func portString(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return strconv.FormatInt(v.Int(), 10)
	case pcommon.ValueTypeStr:
		return v.Str()
	}
	return ""
}

// first returns the first non-empty string.
func first(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
