package interceptor_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// The default gen_ai.agent.name comes from what the application configured
// through the API (WithAgent, WithResource, OTEL_SERVICE_NAME), never from a
// resource the interceptor builds itself: without any, the span carries no
// agent name and the exported resource names the service.
func TestDefaultAgent(t *testing.T) {
	res := resource.NewSchemaless(attribute.String(semconv.ServiceName, "from-resource"))
	for _, c := range []struct {
		name     string
		env      string
		opts     []interceptor.Option
		ctxAgent *interceptor.Agent
		want     map[string]any
	}{
		{name: "nothing", want: map[string]any{semconv.GenAIAgentName: nil, semconv.GenAIAgentID: nil}},
		{name: "environment", env: "from-env", want: map[string]any{semconv.GenAIAgentName: "from-env"}},
		{name: "resource", env: "from-env", opts: []interceptor.Option{interceptor.WithResource(res)},
			want: map[string]any{semconv.GenAIAgentName: "from-resource"}},
		{name: "nil resource", env: "from-env", opts: []interceptor.Option{interceptor.WithResource((*resource.Resource)(nil))},
			want: map[string]any{semconv.GenAIAgentName: "from-env"}},
		{name: "resource without service.name", env: "from-env", opts: []interceptor.Option{interceptor.WithResource(resource.Empty())},
			want: map[string]any{semconv.GenAIAgentName: "from-env"}},
		{name: "WithAgent", env: "from-env", opts: []interceptor.Option{interceptor.WithAgent("planner", "planner-7"), interceptor.WithResource(res)},
			want: map[string]any{semconv.GenAIAgentName: "planner", semconv.GenAIAgentID: "planner-7"}},
		{name: "clientInfo", opts: []interceptor.Option{interceptor.WithClientInfoAgent()}, want: map[string]any{semconv.GenAIAgentName: "c"}},
		{name: "WithAgent over clientInfo", opts: []interceptor.Option{interceptor.WithClientInfoAgent(), interceptor.WithAgent("planner", "")},
			want: map[string]any{semconv.GenAIAgentName: "planner"}},
		{name: "context", opts: []interceptor.Option{interceptor.WithAgent("planner", "planner-7")}, ctxAgent: &interceptor.Agent{Name: "researcher", ID: "researcher-1"},
			want: map[string]any{semconv.GenAIAgentName: "researcher", semconv.GenAIAgentID: "researcher-1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("OTEL_SERVICE_NAME", c.env)
			w := newWire(t, c.opts...)
			if c.ctxAgent != nil {
				w.ctx = interceptor.ContextWithAgent(context.Background(), *c.ctxAgent)
			}
			w.initialize()
			w.list(1, "", listResult("", toolA))
			w.call(2, "a", `{"q":"x"}`)
			w.last("tools/call a").want(t, c.want)
		})
	}
}
