package interceptor

import (
	"context"
	"os"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// Option configures an Interceptor (and the front-ends, which take the same
// options and build one).
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	propagator     propagation.TextMapPropagator
	serverName     string
	serverURL      string
	agentName      string
	agentID        string
	clientInfoName bool
	resource       Resource
	injectContext  bool
	continueMeta   bool
	captureContent bool
	validateArgs   bool
	staleHook      StaleToolHook
	refuseStale    bool
	staleWindow    time.Duration
	errorHandler   func(error)
	limits         contract.Limits
	maxPending     int
}

func newConfig(opts []Option) config {
	c := config{
		injectContext: true,
		limits:        contract.DefaultLimits(),
		maxPending:    defaultMaxPending,
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	// The documented OpenTelemetry global defaults, as otelhttp uses them.
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	if c.propagator == nil {
		c.propagator = otel.GetTextMapPropagator()
	}
	if c.errorHandler == nil {
		c.errorHandler = otel.Handle
	}
	if c.agentName == "" {
		c.agentName = serviceName(c.resource)
	}
	c.limits = c.limits.Complete()
	return c
}

// defaultMaxPending bounds the requests one session tracks while waiting for
// their responses, so a peer that never answers cannot grow memory.
const defaultMaxPending = 4096

// WithTracerProvider sets the tracer provider; the default is the global one
// (otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tracerProvider = tp })
}

// WithMeterProvider sets the meter provider for the
// mcp.client.operation.duration histogram; the default is the global one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.meterProvider = mp })
}

// WithPropagators sets the propagator whose fields are written into
// params._meta; the default is the global one (otel.GetTextMapPropagator).
func WithPropagators(p propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) { c.propagator = p })
}

// WithServerName sets mcpdrift.server.name, the logical name the drift
// receiver knows the server by. Without it the server's serverInfo.name is
// used once the server has sent it.
func WithServerName(name string) Option {
	return optionFunc(func(c *config) { c.serverName = name })
}

// WithServerURL sets mcpdrift.server.url when the front-end cannot know the
// endpoint (in-memory transports) or should record another one.
func WithServerURL(url string) Option {
	return optionFunc(func(c *config) { c.serverURL = url })
}

// WithAgent sets the default gen_ai.agent.name and gen_ai.agent.id for calls
// whose context carries none (see ContextWithAgent). Without it the agent
// name is the service.name of WithResource, else OTEL_SERVICE_NAME.
func WithAgent(name, id string) Option {
	return optionFunc(func(c *config) { c.agentName, c.agentID = name, id })
}

// WithClientInfoAgent names the agent, for calls that neither the context
// nor the defaults name, by the clientInfo.name the session's initialize
// sent (or a 2026-07-28 request's _meta carries). It is for proxies, which
// stand in for many agents and know them only by what they send; an agent
// names itself with WithAgent.
func WithClientInfoAgent() Option {
	return optionFunc(func(c *config) { c.clientInfoName = true })
}

// Resource is what the interceptor reads of an OpenTelemetry resource: its
// attributes. The SDK's *resource.Resource satisfies it, so an application
// passes the resource it built while the interceptor imports only the API.
type Resource interface{ Set() *attribute.Set }

// WithResource gives the application's OpenTelemetry resource; its
// service.name is the default agent name. Without it the default is the
// OTEL_SERVICE_NAME environment variable, and without that the spans carry
// no gen_ai.agent.name: the resource the application's SDK exports with
// them names the service, and consumers (mcpimpact) fall back to it.
// Reading OTEL_RESOURCE_ATTRIBUTES or building a default resource is the
// SDK's job, not the instrumentation's.
func WithResource(r Resource) Option {
	return optionFunc(func(c *config) { c.resource = r })
}

// WithTraceContextInjection turns writing the trace context (traceparent,
// tracestate, and whatever else the propagator writes) into each outgoing
// request's params._meta on or off. It is on by default, as the MCP semantic
// conventions recommend, so server spans join the agent's trace. It is the
// only change the interceptor ever makes to the bytes on the wire: members
// are added to params._meta (created if absent), nothing else moves or is
// re-encoded, and keys the application already set are left alone.
func WithTraceContextInjection(on bool) Option {
	return optionFunc(func(c *config) { c.injectContext = on })
}

// WithTraceContextContinuation makes a trace context that arrives in an
// outgoing request's params._meta (traceparent, as the MCP semantic
// conventions carry it) the parent of the request's span, and has injection
// replace it with the span's own context. It is for a proxy, which forwards
// requests that an instrumented agent already stamped: the server's spans
// then hang under the proxy's, and the proxy's under the agent's. Off by
// default (an application's own _meta value wins).
func WithTraceContextContinuation(on bool) Option {
	return optionFunc(func(c *config) { c.continueMeta = on })
}

// WithContentCapture records tool-call arguments and results on spans
// (gen_ai.tool.call.arguments, gen_ai.tool.call.result). Off by default:
// they may hold personal or secret data. Values over 64 KiB are omitted.
func WithContentCapture(on bool) Option {
	return optionFunc(func(c *config) { c.captureContent = on })
}

// WithArgumentValidation validates the arguments of each outgoing tools/call
// against the inputSchema of the tool definition the client had cached (JSON
// Schema 2020-12 unless the schema says otherwise) and records the outcome
// on the span. It never blocks the call.
func WithArgumentValidation(on bool) Option {
	return optionFunc(func(c *config) { c.validateArgs = on })
}

// StaleToolHook is called before a tools/call is sent while the session's
// cached listing is stale (a list_changed arrived and no refresh has
// completed since). The agent may refresh its listing in the hook (through
// the same client); returning an error refuses the call, and the front-end
// returns that error to the caller instead of sending the request. Only
// front-ends that sit above the wire call it (go-sdk middleware, the mcp-go
// transport decorator, the HTTP RoundTripper); the stdio tap cannot.
type StaleToolHook func(ctx context.Context, call StaleToolCall) error

// StaleToolCall describes a call about to be sent against a stale listing.
type StaleToolCall struct {
	Tool       string // the tool being called
	Digest     string // digest of the definition the agent planned with ("" if unknown)
	ServerName string // mcpdrift.server.name
}

// WithStaleToolHook installs the opt-in stale-definition hook.
func WithStaleToolHook(h StaleToolHook) Option {
	return optionFunc(func(c *config) { c.staleHook = h })
}

// WithStaleRefusal makes the guard refuse a tools/call whose arguments fit
// a definition of the tool the session was served earlier and not the one
// it was served last (docs/mcpimpact.md#what-stale-means): the model
// planned it on the old definition, even if the agent has listed the tools
// again since. Front-ends that sit above the wire (go-sdk, mcp-go, the
// HTTP RoundTripper) answer such a call themselves with a STALE_TOOL_SCHEMA
// tool error and never send it; its span ends with error.type refused and
// mcpdrift.tool.stale=true. Off by default.
func WithStaleRefusal(on bool) Option {
	return optionFunc(func(c *config) { c.refuseStale = on })
}

// WithStaleWindow guards the changes a call's arguments cannot show (a
// description, annotations, an output schema, a default): the first call to
// a tool within d after the session was served a changed definition of it is
// refused once, with a STALE_TOOL_SCHEMA tool error whose required_action,
// reread_tool, tells the model to read the tool's definition again; the next
// call is sent. Off by default (d of 0); front-ends as for WithStaleRefusal.
func WithStaleWindow(d time.Duration) Option {
	return optionFunc(func(c *config) { c.staleWindow = d })
}

// WithErrorHandler receives the interceptor's own errors (a listing that
// cannot be hashed, a frame that cannot be read). They never fail a call.
// The default is otel.Handle, the global OpenTelemetry error handler.
func WithErrorHandler(h func(error)) Option {
	return optionFunc(func(c *config) { c.errorHandler = h })
}

// WithLimits bounds what the interceptor reads from a server (listing size,
// depth, definitions); see contract.Limits. Frames over MaxDocumentBytes
// pass through unobserved.
func WithLimits(l contract.Limits) Option {
	return optionFunc(func(c *config) { c.limits = l })
}

// serviceName is the default agent name: the service.name of r, else
// OTEL_SERVICE_NAME (the environment variable the OpenTelemetry
// specification defines for it).
func serviceName(r Resource) string {
	if r != nil {
		if set := r.Set(); set != nil {
			if v, ok := set.Value(attribute.Key(semconv.ServiceName)); ok {
				return v.AsString()
			}
		}
	}
	return os.Getenv("OTEL_SERVICE_NAME")
}
