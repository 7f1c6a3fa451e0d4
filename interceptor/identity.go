package interceptor

import "context"

// Agent identifies the agent making MCP calls: gen_ai.agent.name and
// gen_ai.agent.id on every span.
type Agent struct {
	Name string
	ID   string
}

type agentKey struct{}
type conversationKey struct{}

// ContextWithAgent returns ctx carrying the calling agent. Calls made with it
// are attributed to that agent; calls without one use the interceptor's
// default (WithAgent, else the resource's service.name).
func ContextWithAgent(ctx context.Context, a Agent) context.Context {
	return context.WithValue(ctx, agentKey{}, a)
}

// AgentFromContext returns the agent ContextWithAgent put in ctx.
func AgentFromContext(ctx context.Context) (Agent, bool) {
	a, ok := ctx.Value(agentKey{}).(Agent)
	return a, ok
}

// ContextWithConversationID returns ctx carrying the agent's own session or
// conversation id (gen_ai.conversation.id): the unit a user would recognise,
// which outlives and differs from the MCP connection (mcpdrift.client.session).
func ContextWithConversationID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, conversationKey{}, id)
}

// ConversationIDFromContext returns the id ContextWithConversationID put in ctx.
func ConversationIDFromContext(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(conversationKey{}).(string)
	return id, ok
}
