// Package semconv holds the attribute keys, event names and values mcpdrift
// puts on the wire, shared by the interceptor, the receiver and the
// processor. Keys the OpenTelemetry GenAI / MCP semantic conventions define
// (status: Development) are used as they define them; what they do not define
// lives under the project namespace "mcpdrift.". No other package spells
// these strings.
package semconv

// Attributes from the OpenTelemetry semantic conventions.
const (
	MCPMethodName          = "mcp.method.name"
	MCPProtocolVersion     = "mcp.protocol.version"
	MCPSessionID           = "mcp.session.id"
	GenAIOperationName     = "gen_ai.operation.name"
	GenAIToolName          = "gen_ai.tool.name"
	GenAIAgentName         = "gen_ai.agent.name"
	GenAIAgentID           = "gen_ai.agent.id"
	GenAIConversationID    = "gen_ai.conversation.id"
	JSONRPCRequestID       = "jsonrpc.request.id"
	RPCResponseStatusCode  = "rpc.response.status_code"
	ErrorType              = "error.type"
	ServerAddress          = "server.address"
	ServerPort             = "server.port"
	NetworkTransport       = "network.transport"
	URLFull                = "url.full"
	ServiceName            = "service.name"
	EventName              = "event.name"
	GenAIOperationExecTool = "execute_tool" // value of gen_ai.operation.name on tools/call
	ErrorTypeToolError     = "tool_error"   // error.type when a tools/call result has isError
	NetworkTransportPipe   = "pipe"         // network.transport for stdio
	NetworkTransportTCP    = "tcp"
)

// Attributes under the project namespace.
const (
	ServerName           = "mcpdrift.server.name"
	ServerURL            = "mcpdrift.server.url"
	ClientSession        = "mcpdrift.client.session"
	ToolDigest           = "mcpdrift.tool.digest"
	ToolsSetDigest       = "mcpdrift.tools.set_digest"
	ToolKnown            = "mcpdrift.tool.known"
	ToolsListingStale    = "mcpdrift.tools.listing_stale"
	ToolCurrentDigest    = "mcpdrift.tool.current_digest"
	ToolStale            = "mcpdrift.tool.stale"
	ServerInfoName       = "mcpdrift.server_info.name"
	ServerInfoVersion    = "mcpdrift.server_info.version"
	ProtocolVersion      = "mcpdrift.protocol_version"
	SpecGeneration       = "mcpdrift.spec_generation"
	Transport            = "mcpdrift.transport"
	ContractDigest       = "mcpdrift.contract.digest"
	PreviousContract     = "mcpdrift.contract.previous_digest"
	ToolDigests          = "mcpdrift.tools.digests" // map tool name -> digest on snapshot events
	PromptsSetDigest     = "mcpdrift.prompts.set_digest"
	ResourcesSetDigest   = "mcpdrift.resources.set_digest"
	TemplatesSetDigest   = "mcpdrift.resource_templates.set_digest"
	InstructionsDigest   = "mcpdrift.instructions.digest"
	ToolsCount           = "mcpdrift.tools.count"
	DriftID              = "mcpdrift.drift.id"
	DriftSeverity        = "mcpdrift.drift.severity"
	DriftChanges         = "mcpdrift.drift.changes"
	DriftBreaking        = "mcpdrift.drift.breaking"
	DriftWarning         = "mcpdrift.drift.warning"
	DriftCompatible      = "mcpdrift.drift.compatible"
	DriftInfo            = "mcpdrift.drift.info"
	ImpactAgents         = "mcpdrift.impact.agents"
	ImpactSessions       = "mcpdrift.impact.sessions"
	ImpactCalls          = "mcpdrift.impact.calls"
	ImpactErrors         = "mcpdrift.impact.errors"
	ImpactLastCall       = "mcpdrift.impact.last_call"
	ImpactRisk           = "mcpdrift.impact.risk"
	ImpactSessionSample  = "mcpdrift.impact.session_ids"
	ImpactDigestsUsed    = "mcpdrift.impact.digests_used"
	ImpactNoRecentCaller = "mcpdrift.impact.no_recent_callers"
	MixedVariants        = "mcpdrift.mixed.variants"
	MixedState           = "mcpdrift.mixed.state"
	PreviousToolDigests  = "mcpdrift.tools.previous_digests"
	VolatileSubject      = "mcpdrift.volatile.subject"
	VolatileName         = "mcpdrift.volatile.name"
	VolatilePath         = "mcpdrift.volatile.path"
	ProbeErrorClass      = "mcpdrift.probe.error_class"
	ProbeErrorStep       = "mcpdrift.probe.error_step"
)

// Attributes the interceptor adds (appended; see docs/interceptor.md).
const (
	NetworkProtocolName    = "network.protocol.name"
	GenAIPromptName        = "gen_ai.prompt.name"
	MCPResourceURI         = "mcp.resource.uri"
	GenAIToolCallArguments = "gen_ai.tool.call.arguments" // opt-in content capture
	GenAIToolCallResult    = "gen_ai.tool.call.result"    // opt-in content capture
	// GuardArgumentsValid is false when a tools/call's arguments failed the
	// cached inputSchema (set only when argument validation is on).
	GuardArgumentsValid = "mcpdrift.guard.arguments_valid"
	// GuardViolation names where and which keyword the arguments failed
	// ("/query: required"); never argument values.
	GuardViolation = "mcpdrift.guard.violation"
	// GuardStaleDefinition is true on a tools/call planned against a tool
	// definition the client's own refresh has since shown to be changed.
	GuardStaleDefinition = "mcpdrift.guard.stale_definition"
	// GuardPlannedDigest is the digest the call was planned with, when it
	// differs from mcpdrift.tool.digest.
	GuardPlannedDigest = "mcpdrift.guard.planned_digest"
)

// Values of error.type the interceptor sets besides JSON-RPC codes and
// tool_error.
const (
	ErrorTypeCancelled        = "cancelled"         // the caller gave up (context done, notifications/cancelled)
	ErrorTypeConnectionClosed = "connection_closed" // the connection ended before the response
	ErrorTypeTransport        = "transport_error"   // the request could not be sent
	ErrorTypeOther            = "_OTHER"
)

// Keys inside each map of mcpdrift.drift.changes.
const (
	ChangeRule     = "rule"
	ChangeSeverity = "severity"
	ChangeSubject  = "subject"
	ChangeName     = "name"
	ChangePath     = "path"
	ChangeBefore   = "before"
	ChangeAfter    = "after"
	ChangeMessage  = "message"
)

// Event names (the event.name of log records).
const (
	EventSnapshot      = "mcpdrift.snapshot"
	EventDrift         = "mcpdrift.drift"
	EventImpact        = "mcpdrift.impact"
	EventMixedContract = "mcpdrift.mixed_contract"
	EventVolatileField = "mcpdrift.volatile_field"
)

// Metric names shared outside mdatagen-generated code.
const (
	MetricClientOperationDuration = "mcp.client.operation.duration"
)

// Value of mcp.method.name on tool calls.
const MCPMethodToolsCall = "tools/call"

// Attributes and values of other MCP instrumentations that the mcpimpact
// processor recognises on tool-call spans (they do not follow the GenAI / MCP
// semantic conventions).
const (
	MCPToolName           = "mcp.tool.name"         // tool name (e.g. @shinzolabs/instrumentation-mcp)
	TraceloopSpanKind     = "traceloop.span.kind"   // @traceloop/instrumentation-mcp: "tool" on tools/call spans
	TraceloopEntityName   = "traceloop.entity.name" // @traceloop/instrumentation-mcp: the tool name
	TraceloopSpanKindTool = "tool"
	TraceloopToolSuffix   = ".tool"          // traceloop names tool-call spans "{tool}.tool"
	ClientAddress         = "client.address" // set by server-side instrumentations
)

// Values of mcpdrift.drift.severity and of the severity member of each change,
// worst first.
const (
	DriftSeverityBreaking   = "breaking"
	DriftSeverityWarning    = "warning"
	DriftSeverityCompatible = "compatible"
	DriftSeverityInfo       = "info"
)

// Value of the subject member of a change about a tool.
const ChangeSubjectTool = "tool"

// Values of mcpdrift.impact.risk, and the keys of mcpdrift.impact.digests_used.
const (
	ImpactRiskHigh      = "high"
	ImpactRiskMedium    = "medium"
	ImpactRiskLow       = "low"
	ImpactDigestOld     = "old"
	ImpactDigestNew     = "new"
	ImpactDigestUnknown = "unknown"
)
