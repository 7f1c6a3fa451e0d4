package gate

import (
	"encoding/json"
	"fmt"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/proxy/internal/jsonrpc"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// Refusal is a call the proxy answered itself. As an error it ends the
// call's span: error.type "refused", the reason in mcpdrift.guard.refusal.
type Refusal struct {
	code     string // semconv.Refusal*
	tool     string
	current  string
	rpcError bool // answered with a JSON-RPC error (a failed session), not a tool result
	unclear  bool // a call the gate could not read as servers would (Unclear)
	// guard, for a stale call, is the refusal as the interceptor's guard
	// words it: the same envelope (basis, witness) and span attributes.
	guard *interceptor.Refusal
}

// Unapproved is the refusal of a listing that holds a definition of tool
// the lock does not approve (current: its digest, "" if it does not hash):
// the session's failure under refuse-session.
func Unapproved(tool, current string) *Refusal {
	return &Refusal{code: semconv.RefusalToolNotApproved, tool: tool, current: current, rpcError: true}
}

// Code is the refusal's semconv.Refusal* code.
func (r *Refusal) Code() string { return r.code }

// RPCError reports whether the refusal is answered with a JSON-RPC error
// (a failed session, an unclear call) rather than a tool result.
func (r *Refusal) RPCError() bool { return r.rpcError }

func (r *Refusal) Error() string     { return r.Text() }
func (r *Refusal) ErrorType() string { return semconv.ErrorTypeRefused }

// SpanAttributes are the mcpdrift.guard.* attributes of the refused call's span.
func (r *Refusal) SpanAttributes() []attribute.KeyValue {
	if r.guard != nil {
		return r.guard.SpanAttributes()
	}
	return []attribute.KeyValue{
		attribute.String(semconv.GuardRefusal, r.code),
		attribute.String(semconv.GuardCurrentDigest, r.current),
	}
}

// Text is what the agent (an LLM, often) reads: what happened, that nothing
// ran, and what to do.
func (r *Refusal) Text() string {
	if r.unclear {
		return r.code + ": this tools/call names its method, params or tool more than once or in another case, or has no id, " +
			"so which tool a server would run cannot be told: it was not sent and nothing ran."
	}
	if r.guard != nil {
		return r.guard.Text()
	}
	return fmt.Sprintf("%s: the server's current definition of tool %q is not approved in this proxy's lock file, so this call was not sent and nothing ran. "+
		"An operator must review and approve it (mcpdrift approve).", r.code, r.tool)
}

// Answer is the frame the agent gets for the refused request id (method:
// its method): the tool execution error a refused tools/call gets (isError,
// the refusal in structuredContent), else a JSON-RPC error.
func (r *Refusal) Answer(id json.RawMessage, method string) []byte {
	if r.rpcError || method != mcpwire.MethodToolsCall {
		return jsonrpc.Error(id, jsonrpc.CodeUpstream, r.Text())
	}
	if r.guard != nil {
		return jsonrpc.Response(id, r.guard.Result())
	}
	res, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": r.Text()}},
		"structuredContent": map[string]any{
			"error_code": r.code, "tool": r.tool, "required_action": semconv.ActionOperatorApproval,
			"side_effect_started": false, "current_digest": r.current,
		},
		"isError": true,
	})
	return jsonrpc.Response(id, res)
}
