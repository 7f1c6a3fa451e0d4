// Package benchspans builds tool-call spans shaped like those the mcpdrift
// interceptor emits, for benchmarks and load generators: the processor's
// throughput benchmark and the scale-out end-to-end run send the same
// spans. (It lives apart from dev/testkit/benchutil so that packages whose
// benchmarks need no spans do not import pdata.)
package benchspans

import (
	"strconv"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpdrift/mcpdrift/semconv"
)

// ToolCall is one tools/call as the interceptor records it.
type ToolCall struct {
	Server       string // mcpdrift.server.name; the URL and address derive from it
	Tool         string
	Agent        string
	Conversation string
	Session      string // mcpdrift.client.session
	Digest       string // the cached definition's digest
	SetDigest    string
	RequestID    int
}

// Fill sets span's name, kind and attributes (not its ids or times).
func (c ToolCall) Fill(span ptrace.Span) {
	span.SetName("tools/call " + c.Tool)
	span.SetKind(ptrace.SpanKindClient)
	host := c.Server + ".internal"
	a := span.Attributes()
	a.EnsureCapacity(17)
	a.PutStr(semconv.MCPMethodName, semconv.MCPMethodToolsCall)
	a.PutStr(semconv.GenAIOperationName, semconv.GenAIOperationExecTool)
	a.PutStr(semconv.GenAIToolName, c.Tool)
	a.PutStr(semconv.JSONRPCRequestID, strconv.Itoa(c.RequestID))
	a.PutStr(semconv.MCPProtocolVersion, "2025-11-25")
	a.PutStr(semconv.ServerAddress, host)
	a.PutInt(semconv.ServerPort, 443)
	a.PutStr(semconv.NetworkTransport, semconv.NetworkTransportTCP)
	a.PutStr(semconv.GenAIAgentName, c.Agent)
	a.PutStr(semconv.GenAIConversationID, c.Conversation)
	a.PutStr(semconv.ServerName, c.Server)
	a.PutStr(semconv.ServerURL, "https://"+host+"/mcp")
	a.PutStr(semconv.ClientSession, c.Session)
	a.PutStr(semconv.ToolDigest, c.Digest)
	a.PutStr(semconv.ToolsSetDigest, c.SetDigest)
	a.PutBool(semconv.ToolKnown, true)
}
