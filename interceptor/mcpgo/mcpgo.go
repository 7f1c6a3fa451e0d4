// Package mcpgo instruments github.com/mark3labs/mcp-go clients with the
// mcpdrift interceptor: a decorator for any mcp-go client transport.
//
//	t, _ := transport.NewStreamableHTTP(url)
//	c := client.NewClient(mcpgo.NewTransport(t, interceptor.Endpoint{URL: url},
//		interceptor.WithServerName("search")))
//
// The decorator implements exactly the optional interfaces the transport it
// wraps implements (BidirectionalInterface, HTTPConnection,
// RequiresLegacyProtocol, SetConnectionLostHandler, Stderr), so the client
// behaves as it would without it. Helpers that need the concrete transport
// (client.GetEndpoint) need Unwrap.
package mcpgo

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

//go:generate go run ./internal/gen -o wrap_gen.go

// NewTransport wraps inner, which reaches the server described by ep (its
// URL or command: mcp-go transports do not expose them). An empty ep is
// filled in for in-process transports.
func NewTransport(inner transport.Interface, ep interceptor.Endpoint, opts ...interceptor.Option) transport.Interface {
	return NewTransportWith(inner, ep, interceptor.New(opts...))
}

// NewTransportWith is NewTransport with an existing Interceptor.
func NewTransportWith(inner transport.Interface, ep interceptor.Endpoint, ic *interceptor.Interceptor) transport.Interface {
	if _, ok := inner.(*transport.InProcessTransport); ok && ep.URL == "" && len(ep.Command) == 0 {
		ep.Pipe = true
	}
	return wrap(&base{inner: inner, ic: ic, sess: ic.NewSession(ep)})
}

// Unwrapper is implemented by every transport NewTransport returns.
type Unwrapper interface {
	Unwrap() transport.Interface
}

// Session returns the interceptor session of a transport NewTransport
// returned, or nil.
func Session(t transport.Interface) *interceptor.Session {
	if b, ok := t.(interface{ session() *interceptor.Session }); ok {
		return b.session()
	}
	return nil
}

// base is the decorator proper; the optional interfaces are added by wrap.
type base struct {
	inner transport.Interface
	ic    *interceptor.Interceptor
	sess  *interceptor.Session
}

func (b *base) Unwrap() transport.Interface     { return b.inner }
func (b *base) session() *interceptor.Session   { return b.sess }
func (b *base) Start(ctx context.Context) error { return b.inner.Start(ctx) }
func (b *base) GetSessionId() string            { return b.inner.GetSessionId() }
func (b *base) Close() error                    { err := b.inner.Close(); b.sess.Close(); return err }

// SendRequest records the request and its response. Params are encoded
// here, once, exactly as the transport would (encoding/json), so only the
// trace context added to _meta differs from what it would have sent.
func (b *base) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	raw, err := encodeParams(req.Params)
	if err != nil {
		return b.inner.SendRequest(ctx, req) // let the transport report it
	}
	id := interceptor.IDFromValue(req.ID.Value())
	if req.Method == string(mcp.MethodToolsCall) {
		name, _ := jsonwire.String(jsonwire.Lookup(raw, "name"))
		if ctx, err = b.sess.BeforeToolCall(ctx, name); err != nil {
			return nil, err
		}
		if r := b.sess.GuardCall(ctx, id, raw); r != nil {
			// Answered here, never sent: the stale guard's tool error.
			return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: req.ID, Result: r.Result()}, nil
		}
	}
	params := raw
	b.ic.Protect(func() { params = b.sess.Request(ctx, id, req.Method, raw) })
	if !same(params, raw) {
		req.Params = json.RawMessage(params)
	}
	resp, err := b.inner.SendRequest(ctx, req)
	if err != nil {
		b.sess.Fail(id, err)
		return resp, err
	}
	b.ic.Protect(func() {
		var rpcErr *interceptor.RPCError
		if resp.Error != nil {
			rpcErr = &interceptor.RPCError{Code: int64(resp.Error.Code), Message: resp.Error.Message}
		}
		b.sess.Response(id, resp.Result, rpcErr)
		if sid := b.inner.GetSessionId(); sid != "" {
			b.sess.SetMCPSessionID(sid)
		}
	})
	return resp, nil
}

// SendNotification records the notification. Trace context goes into its
// params' _meta map (mcp-go encodes notification params from maps).
func (b *base) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	b.ic.Protect(func() {
		raw, err := json.Marshal(n.Params)
		if err != nil {
			return
		}
		if out := b.sess.Notification(ctx, n.Method, raw); !same(out, raw) {
			var p mcp.NotificationParams
			if json.Unmarshal(out, &p) == nil {
				n.Params = p
			}
		}
	})
	return b.inner.SendNotification(ctx, n)
}

// SetNotificationHandler shows the session each notification first.
func (b *base) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	b.inner.SetNotificationHandler(func(n mcp.JSONRPCNotification) {
		b.ic.Protect(func() {
			var raw []byte
			if n.Method == mcpwire.NotifySubscriptionsAck {
				raw, _ = json.Marshal(n.Params)
			}
			b.sess.Incoming(n.Method, raw)
		})
		if h != nil {
			h(n)
		}
	})
}

func encodeParams(p any) (json.RawMessage, error) {
	switch p := p.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding params: %w", err)
	}
	if string(raw) == "null" {
		return nil, nil
	}
	return raw, nil
}

func same(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
