// Package semconv holds the attribute keys, event names and values mcpdrift
// puts on the wire, shared by the interceptor, the receiver and the
// processor. Keys the OpenTelemetry GenAI / MCP semantic conventions define
// (status: Development) are used as they define them; what they do not define
// lives under the project namespace "mcpdrift.". No other package spells
// these strings.
package semconv

// Attributes from the OpenTelemetry semantic conventions.
const (
	MCPMethodName          = "mcp.method.name"          // JSON-RPC method of an MCP request (tools/call, tools/list, initialize, ...)
	MCPProtocolVersion     = "mcp.protocol.version"     // MCP protocol version negotiated on the connection
	MCPSessionID           = "mcp.session.id"           // session id the server issued (Mcp-Session-Id); never on 2026-07-28 servers; one over 1 KiB is recorded as "sha256:" and its hex digest
	GenAIOperationName     = "gen_ai.operation.name"    // GenAI operation; execute_tool on tools/call spans
	GenAIToolName          = "gen_ai.tool.name"         // name of the tool called, or changed (impact records)
	GenAIAgentName         = "gen_ai.agent.name"        // name of the calling agent, set by the application
	GenAIAgentID           = "gen_ai.agent.id"          // id of the calling agent, set by the application
	GenAIConversationID    = "gen_ai.conversation.id"   // the agent's own session or conversation id
	JSONRPCRequestID       = "jsonrpc.request.id"       // JSON-RPC request id, as a string
	RPCResponseStatusCode  = "rpc.response.status_code" // JSON-RPC error code of a failed request, as a string
	ErrorType              = "error.type"               // why a request failed: a JSON-RPC code, tool_error, or a transport reason
	ServerAddress          = "server.address"           // host of an HTTP MCP server
	ServerPort             = "server.port"              // port of an HTTP MCP server
	NetworkTransport       = "network.transport"        // pipe for stdio, tcp for HTTP
	URLFull                = "url.full"                 // endpoint URL without credentials, query or fragment (HTTP targets)
	ServiceName            = "service.name"             // resource service.name: the agent on client spans, the server on server-side spans
	EventName              = "event.name"               // attribute copy of a log record's event name, for backends that read only attributes
	MetricOverflow         = "otel.metric.overflow"     // true on the one series counting what arrived past a metric's cardinality limit (the OpenTelemetry metrics SDK's convention); it has no other attribute
	GenAIOperationExecTool = "execute_tool"             // value of gen_ai.operation.name on tools/call
	ErrorTypeToolError     = "tool_error"               // error.type when a tools/call result has isError
	NetworkTransportPipe   = "pipe"                     // network.transport for stdio
	NetworkTransportTCP    = "tcp"                      // network.transport for HTTP
)

// Attributes under the project namespace.
const (
	ServerName           = "mcpdrift.server.name"                   // logical MCP server name: the receiver's target name, the interceptor's configured name or serverInfo.name
	ServerURL            = "mcpdrift.server.url"                    // MCP endpoint URL without credentials, query or fragment, or stdio:<command>
	ClientSession        = "mcpdrift.client.session"                // id the interceptor generates per client connection (32 hex)
	ToolDigest           = "mcpdrift.tool.digest"                   // digest of the tool definition the client had cached when it sent the call
	ToolsSetDigest       = "mcpdrift.tools.set_digest"              // set digest of a tools listing (the client's cached one on spans, the server's on snapshots)
	ToolKnown            = "mcpdrift.tool.known"                    // false when the called tool was not in the client's cached listing
	ToolsListingStale    = "mcpdrift.tools.listing_stale"           // true when list_changed arrived and no refresh has completed since
	ToolCurrentDigest    = "mcpdrift.tool.current_digest"           // set by mcpimpact: the digest the server had for the tool when the call was made
	ToolStale            = "mcpdrift.tool.stale"                    // true when the call was planned against a definition the server no longer serves (docs/mcpimpact.md#what-stale-means): set by mcpimpact, and by the guard on a call it refused as stale
	ToolStaleness        = "mcpdrift.tool.staleness"                // set by mcpimpact: current, stale, ahead (a digest no probe has shown yet) or unknown (docs/mcpimpact.md#what-stale-means)
	ServerInfoName       = "mcpdrift.server_info.name"              // serverInfo.name the server reported
	ServerInfoVersion    = "mcpdrift.server_info.version"           // serverInfo.version the server reported
	ProtocolVersion      = "mcpdrift.protocol_version"              // protocol version the probe negotiated
	SpecGeneration       = "mcpdrift.spec_generation"               // stateful_2025, stateless_2026 or empty
	Transport            = "mcpdrift.transport"                     // transport the probe used: stdio, streamable-http or sse
	ContractDigest       = "mcpdrift.contract.digest"               // contract digest of the server (docs/digests.md); after the change on drift events
	PreviousContract     = "mcpdrift.contract.previous_digest"      // contract digest before the change
	ToolDigests          = "mcpdrift.tools.digests"                 // map tool name -> digest on snapshot events
	PromptsSetDigest     = "mcpdrift.prompts.set_digest"            // set digest of the prompts listing
	ResourcesSetDigest   = "mcpdrift.resources.set_digest"          // set digest of the resources listing
	TemplatesSetDigest   = "mcpdrift.resource_templates.set_digest" // set digest of the resource templates listing
	InstructionsDigest   = "mcpdrift.instructions.digest"           // digest of the server instructions; absent when there are none
	ToolsCount           = "mcpdrift.tools.count"                   // number of tools in a listing
	DriftID              = "mcpdrift.drift.id"                      // stable id of a drift: the same change observed again has the same id
	DriftSeverity        = "mcpdrift.drift.severity"                // worst severity of a drift, or of one tool's changes on impact records
	DriftChanges         = "mcpdrift.drift.changes"                 // list of maps, one per change (keys below)
	DriftBreaking        = "mcpdrift.drift.breaking"                // number of breaking changes in a drift
	DriftWarning         = "mcpdrift.drift.warning"                 // number of warning changes in a drift
	DriftCompatible      = "mcpdrift.drift.compatible"              // number of compatible changes in a drift
	DriftInfo            = "mcpdrift.drift.info"                    // number of info changes in a drift
	ImpactAgents         = "mcpdrift.impact.agents"                 // on drift records: distinct agents that called the changed tools
	ImpactSessions       = "mcpdrift.impact.sessions"               // sessions that called the changed tool(s) in the window
	ImpactCalls          = "mcpdrift.impact.calls"                  // calls to the changed tool(s) in the window
	ImpactErrors         = "mcpdrift.impact.errors"                 // failed calls to the changed tool in the window
	ImpactLastCall       = "mcpdrift.impact.last_call"              // RFC 3339 time of the agent's last call to the tool
	ImpactRisk           = "mcpdrift.impact.risk"                   // high, medium or low
	ImpactSessionSample  = "mcpdrift.impact.session_ids"            // bounded sample of the most recently active session ids
	ImpactDigestsUsed    = "mcpdrift.impact.digests_used"           // map stale/before/new/ahead/unknown to the number of calls of each kind (they add up to the calls)
	ImpactNoRecentCaller = "mcpdrift.impact.no_recent_callers"      // true on the one record for a changed tool nobody called in the window
	ImpactStatus         = "mcpdrift.impact.status"                 // on a mixed fleet variant's impact records: hurt_now (the variant served the sessions) or at_risk_on_convergence (the baseline did)
	MixedVariants        = "mcpdrift.mixed.variants"                // list of maps, one per contract of a mixed fleet (keys below)
	MixedState           = "mcpdrift.mixed.state"                   // open, updated (a new variant) or resolved
	PreviousToolDigests  = "mcpdrift.tools.previous_digests"        // map tool name -> digest in the previous contract
	VolatileSubject      = "mcpdrift.volatile.subject"              // kind of definition holding a volatile field (tool, prompt, ...)
	VolatileName         = "mcpdrift.volatile.name"                 // name of the definition holding a volatile field
	VolatilePath         = "mcpdrift.volatile.path"                 // JSON pointer of the volatile field
	ProbeErrorClass      = "mcpdrift.probe.error_class"             // why a probe failed (unreachable, timeout, ...); none on success
	BaselineMode         = "mcpdrift.baseline.mode"                 // advance or pinned: what accepting a drift did
	AcceptBy             = "mcpdrift.accept.by"                     // who accepted a drift: the auth extension's principal, else what the request named, else anonymous
	AcceptAuthenticated  = "mcpdrift.accept.authenticated"          // true when mcpdrift.accept.by was established by the Collector's auth extension
	AcceptComment        = "mcpdrift.accept.comment"                // the operator's comment on an accept; absent when none
)

// Attributes the interceptor adds (appended; see docs/interceptor.md).
const (
	NetworkProtocolName    = "network.protocol.name"      // http on HTTP transports
	GenAIPromptName        = "gen_ai.prompt.name"         // prompt name on prompts/get
	MCPResourceURI         = "mcp.resource.uri"           // resource URI on resources/* requests
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
	// GuardCurrentDigest is the digest of the server's current definition
	// on a tools/call the proxy refused as stale ("" when the tool is gone).
	GuardCurrentDigest = "mcpdrift.guard.current_digest"
	// GuardRefusal is the error_code of a call the proxy answered itself
	// instead of forwarding: STALE_TOOL_SCHEMA or TOOL_NOT_APPROVED.
	GuardRefusal = "mcpdrift.guard.refusal"
	// GuardStaleBasis is the evidence a call was refused as stale on
	// (docs/mcpimpact.md#what-stale-means): arguments (they fit a
	// superseded definition and not the current one), digest (the session
	// was served a definition the server no longer serves) or window (the
	// opt-in refuse-once after a change arguments cannot show).
	GuardStaleBasis = "mcpdrift.guard.stale_basis"
	// GuardWitnessRule is the rule id (docs/rules.md) of the change the
	// arguments of a call refused on argument evidence no longer fit.
	GuardWitnessRule = "mcpdrift.guard.witness.rule"
	// GuardWitnessPath is the JSON pointer into those arguments where the
	// current definition rejects them ("" is the arguments object).
	GuardWitnessPath = "mcpdrift.guard.witness.path"
	// GuardWitnessKeyword is the JSON Schema keyword that rejects them
	// (required, type, enum, additionalProperties, ...).
	GuardWitnessKeyword = "mcpdrift.guard.witness.keyword"
	// GuardWitnessArgument names the argument that no longer fits (the
	// member now required, or now refused); a name, never a value.
	GuardWitnessArgument = "mcpdrift.guard.witness.argument"
)

// Values of mcpdrift.guard.stale_basis (the names contract/staleness gives
// its evidence).
const (
	StaleBasisArguments = "arguments" // the arguments fit a superseded definition and not the current one
	StaleBasisDigest    = "digest"    // the digest the session was served is not the server's
	StaleBasisWindow    = "window"    // the opt-in window: the first call after a change arguments cannot show
)

// Values of required_action in a refused call's structuredContent.
const (
	ActionRefreshTools     = "refresh_tools"     // list the tools again and plan the call again
	ActionRereadTool       = "reread_tool"       // read the changed tool's definition again; the next call is sent
	ActionOperatorApproval = "operator_approval" // an operator must approve the definition (TOOL_NOT_APPROVED)
)

// Values of mcpdrift.guard.refusal (and of the error_code the proxy puts in
// a refused call's structuredContent).
const (
	RefusalStaleToolSchema = "STALE_TOOL_SCHEMA" // the agent planned with a definition the server no longer serves
	RefusalToolNotApproved = "TOOL_NOT_APPROVED" // the server's definition is not in the proxy's lock
)

// MetricProxyRefusals counts the calls the proxy refused, by
// mcpdrift.guard.refusal, gen_ai.tool.name and mcpdrift.server.name.
const MetricProxyRefusals = "mcpdrift.proxy.refusals"

// MetricProxyUnannouncedChanges counts the tool changes the proxy's own
// relists found that the server had not announced, by
// mcpdrift.proxy.agent_notified and mcpdrift.server.name.
const MetricProxyUnannouncedChanges = "mcpdrift.proxy.unannounced_changes"

// ProxyAgentNotified is true when the proxy sent the agent
// notifications/tools/list_changed for a change the server did not
// announce; false when it had no way to (an HTTP session without a standing
// GET stream through the proxy).
const ProxyAgentNotified = "mcpdrift.proxy.agent_notified"

// Values of error.type the interceptor sets besides JSON-RPC codes and
// tool_error.
const (
	ErrorTypeCancelled        = "cancelled"         // the caller gave up (context done, notifications/cancelled)
	ErrorTypeConnectionClosed = "connection_closed" // the connection ended before the response
	ErrorTypeTransport        = "transport_error"   // the request could not be sent
	ErrorTypeOther            = "_OTHER"            // a reused request id, or over 4096 requests waiting
	ErrorTypeRefused          = "refused"           // the proxy answered the call itself (mcpdrift.guard.refusal says why)
)

// Keys inside each map of mcpdrift.drift.changes.
const (
	ChangeRule     = "rule"     // stable rule id (docs/rules.md)
	ChangeSeverity = "severity" // severity of the change
	ChangeSubject  = "subject"  // tool, prompt, resource, resource_template or server
	ChangeName     = "name"     // name of the changed definition; empty for server-level changes
	ChangePath     = "path"     // JSON pointer into the definition
	ChangeBefore   = "before"   // the value before, as JSON text; empty when absent
	ChangeAfter    = "after"    // the value after, as JSON text; empty when absent
	ChangeMessage  = "message"  // one sentence on the consequence
)

// Keys inside each map of mcpdrift.mixed.variants. While a mixed state is
// open, a variant other than the baseline also carries its classification
// against the baseline under the keys a drift uses: mcpdrift.drift.severity,
// the mcpdrift.drift.breaking… counts and mcpdrift.drift.changes.
const (
	MixedVariantDigest    = "contract_digest" // the variant's contract digest (masked when volatile fields are known)
	MixedVariantCount     = "count"           // observations of the variant since the fleet started to disagree
	MixedVariantShare     = "share"           // count over all those observations
	MixedVariantFirstSeen = "first_seen"      // RFC 3339 time of its first observation
	MixedVariantLastSeen  = "last_seen"       // RFC 3339 time of its last observation
	MixedVariantBaseline  = "baseline"        // true for the contract drift is reported against
	MixedVariantSummary   = "summary"         // one line on what the variant changes against the baseline
)

// Event names (the event.name of log records).
const (
	EventSnapshot      = "mcpdrift.snapshot"       // a server's current contract
	EventDrift         = "mcpdrift.drift"          // one confirmed change between two known-good snapshots
	EventImpact        = "mcpdrift.impact"         // from mcpimpact: one per (drift, changed tool, calling agent)
	EventMixedContract = "mcpdrift.mixed_contract" // a fleet serving two or more contracts alternately
	EventVolatileField = "mcpdrift.volatile_field" // a definition field that changes on every probe, now ignored
	EventDriftAccepted = "mcpdrift.drift_accepted" // an operator accepted a drift through the control plane (the history keeps it)
)

// Metric names shared outside mdatagen-generated code.
const (
	MetricClientOperationDuration = "mcp.client.operation.duration" // interceptor histogram of MCP request durations, in seconds
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
	TraceloopSpanKindTool = "tool"                  // value of traceloop.span.kind on tool calls
	TraceloopToolSuffix   = ".tool"                 // traceloop names tool-call spans "{tool}.tool"
	ClientAddress         = "client.address"        // set by server-side instrumentations
)

// Values of mcpdrift.drift.severity and of the severity member of each change,
// worst first.
const (
	DriftSeverityBreaking   = "breaking"   // callers planned against the old contract can fail
	DriftSeverityWarning    = "warning"    // callers may behave differently
	DriftSeverityCompatible = "compatible" // additive change; existing callers are unaffected
	DriftSeverityInfo       = "info"       // recorded, never alerts (e.g. a reordered required array)
)

// Value of the subject member of a change about a tool.
const ChangeSubjectTool = "tool"

// Values of mcpdrift.impact.risk, and the keys of mcpdrift.impact.digests_used.
const (
	ImpactRiskHigh      = "high"    // breaking change, and the agent called with the previous digest within recent_window
	ImpactRiskMedium    = "medium"  // breaking change called within the window, or a warning called within recent_window
	ImpactRiskLow       = "low"     // anything else
	ImpactDigestBefore  = "before"  // calls made with the tool's previous digest while the server still served it
	ImpactDigestStale   = "stale"   // calls judged stale: planned against a definition the server no longer served (as many as the spans marked mcpdrift.tool.stale=true)
	ImpactDigestNew     = "new"     // calls made with the tool's current digest (or one a prompt probe has seen served)
	ImpactDigestAhead   = "ahead"   // calls with a digest no probe has shown yet, waiting for the prompt probe
	ImpactDigestUnknown = "unknown" // calls without a digest, or with another one
)

// Values of mcpdrift.impact.status: while a fleet is mixed, whose sessions
// a variant affects now, and whose it will affect once the fleet converges.
const (
	ImpactStatusHurtNow             = "hurt_now"               // the variant served the sessions: its change meets their calls now
	ImpactStatusAtRiskOnConvergence = "at_risk_on_convergence" // the baseline served the sessions: the change meets their calls when the fleet converges on the variant
)

// Values of mcpdrift.tool.staleness.
const (
	StalenessCurrent = "current" // the call used the definition the server served
	StalenessStale   = "stale"   // planned against a definition the server no longer served
	StalenessAhead   = "ahead"   // a digest no probe has shown yet; a prompt probe settles it
	StalenessUnknown = "unknown" // nothing decides; never stale
)
