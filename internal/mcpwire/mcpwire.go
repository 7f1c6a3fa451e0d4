// Package mcpwire holds what every part of mcpdrift that touches the MCP
// wire shares, so each fact has one home: the protocol's names (methods,
// notifications, _meta keys) here, raw frame reading in jsonwire,
// event streams in sse, server identity in serverid, and in proctree the
// process tree of a stdio server that the probe or the proxy starts.
//
// It is a Go module of its own, with no dependency outside the standard
// library but golang.org/x/sys (proctree's Windows job objects): the
// agent-side modules (interceptor, its front-ends, the proxy) import it
// without pulling the root module and the Collector.
package mcpwire

// Requests.
const (
	MethodInitialize            = "initialize"
	MethodDiscover              = "server/discover" // 2026-07-28: the stateless handshake
	MethodPing                  = "ping"
	MethodToolsList             = "tools/list"
	MethodToolsCall             = "tools/call"
	MethodPromptsList           = "prompts/list"
	MethodPromptsGet            = "prompts/get"
	MethodResourcesList         = "resources/list"
	MethodResourceTemplatesList = "resources/templates/list"
	MethodSubscriptionsListen   = "subscriptions/listen" // 2026-07-28: the stream that carries list_changed
	MethodRootsList             = "roots/list"           // server to client
	MethodElicitationCreate     = "elicitation/create"   // server to client
)

// Notifications.
const (
	NotifyInitialized          = "notifications/initialized"
	NotifyCancelled            = "notifications/cancelled"
	NotifyToolsListChanged     = "notifications/tools/list_changed"
	NotifyPromptsListChanged   = "notifications/prompts/list_changed"
	NotifyResourcesListChanged = "notifications/resources/list_changed"
	NotifySubscriptionsAck     = "notifications/subscriptions/acknowledged"
)

// _meta: the member and the keys the protocol reserves in it.
const (
	Meta                   = "_meta"
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Protocol versions.
const (
	// ProtocolStateless is the first stateless revision (server/discover,
	// no initialize, no session id).
	ProtocolStateless = "2026-07-28"
)

// ProtocolsInitialize are the initialize-era revisions, newest first.
var ProtocolsInitialize = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
