// Package gosdk instruments clients of the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk) with the mcpdrift interceptor.
//
//	inst := gosdk.New(interceptor.WithServerName("search"))
//	client := mcp.NewClient(impl, nil)
//	inst.Instrument(client)
//	session, err := client.Connect(ctx, inst.Transport(transport), nil)
//
// Transport wraps command, IO and in-memory transports at the JSON-RPC
// message level; for the Streamable HTTP and legacy SSE client transports it
// instead wraps their HTTP client with interceptor/httptap, because wrapping
// those Connections breaks the SDK. Instrument adds the sending middleware
// (the opt-in stale-tool hook runs there, above the transport, so the hook
// can refresh the listing through the same client) and the receiving
// middleware (SERVER spans for requests and notifications the server
// sends to the client, parented by the trace context in their _meta).
package gosdk

import (
	"context"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/interceptor/httptap"
)

// Instrumentation instruments go-sdk clients and transports with one
// Interceptor. It is safe for concurrent use; one is enough for a process.
type Instrumentation struct {
	ic       *interceptor.Interceptor
	sessions sync.Map // *mcp.ClientSession -> *interceptor.Session
}

// New returns an Instrumentation with a new Interceptor configured by opts.
func New(opts ...interceptor.Option) *Instrumentation {
	return NewWith(interceptor.New(opts...))
}

// NewWith returns an Instrumentation using ic.
func NewWith(ic *interceptor.Interceptor) *Instrumentation {
	return &Instrumentation{ic: ic}
}

// Interceptor is the Interceptor behind this Instrumentation.
func (in *Instrumentation) Interceptor() *interceptor.Interceptor { return in.ic }

// Instrument adds the sending and receiving middleware to c.
func (in *Instrumentation) Instrument(c *mcp.Client) {
	c.AddSendingMiddleware(in.SendingMiddleware())
	c.AddReceivingMiddleware(in.ReceivingMiddleware())
}

// Session returns the interceptor session of a connected client session, once
// its first request has gone through an instrumented transport.
func (in *Instrumentation) Session(cs *mcp.ClientSession) *interceptor.Session {
	if s, ok := in.sessions.Load(cs); ok {
		return s.(*interceptor.Session)
	}
	return nil
}

// Transport wraps t so its traffic is recorded. Command, IO and in-memory
// transports (and any other transport) are wrapped at the message level;
// *mcp.StreamableClientTransport and *mcp.SSEClientTransport are copied
// with their HTTP client wrapped by httptap instead; an *mcp.LoggingTransport
// keeps logging what it wraps, which is instrumented.
func (in *Instrumentation) Transport(t mcp.Transport) mcp.Transport {
	switch tt := t.(type) {
	case *mcp.StreamableClientTransport:
		c := *tt
		c.HTTPClient = in.httpClient(tt.HTTPClient)
		return &c
	case *mcp.SSEClientTransport:
		c := *tt
		c.HTTPClient = in.httpClient(tt.HTTPClient)
		return &c
	case *mcp.LoggingTransport:
		// Instrument what it logs, so HTTP transports inside get the tap.
		return &mcp.LoggingTransport{Transport: in.Transport(tt.Transport), Writer: tt.Writer}
	}
	return &transport{inner: t, in: in, endpoint: endpointOf(t)}
}

func (in *Instrumentation) httpClient(c *http.Client) *http.Client {
	return httptap.ClientWith(c, in.ic)
}

// endpointOf describes the server a transport reaches.
func endpointOf(t mcp.Transport) interceptor.Endpoint {
	switch tt := t.(type) {
	case *mcp.CommandTransport:
		if tt.Command != nil {
			return interceptor.Endpoint{Command: tt.Command.Args}
		}
	case *mcp.InMemoryTransport, *mcp.IOTransport:
		return interceptor.Endpoint{Pipe: true}
	}
	return interceptor.Endpoint{}
}

// transport wraps an mcp.Transport at the message level.
type transport struct {
	inner    mcp.Transport
	in       *Instrumentation
	endpoint interceptor.Endpoint
}

func (t *transport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{inner: c, in: t.in, sess: t.in.ic.NewSession(t.endpoint)}, nil
}
