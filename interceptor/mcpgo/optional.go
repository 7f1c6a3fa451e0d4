package mcpgo

import (
	"context"
	"io"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
)

// The optional interfaces of mcp-go transports, each as a small type that
// forwards to the wrapped transport; wrap embeds exactly those the wrapped
// transport implements.

type bidirectional struct{ b *base }

// SetRequestHandler wraps the client's handler for requests the server sends
// (sampling, elicitation, roots) with a SERVER span.
func (x bidirectional) SetRequestHandler(h transport.RequestHandler) {
	x.b.inner.(transport.BidirectionalInterface).SetRequestHandler(func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		ctx, end := x.b.ic.StartServerOperation(ctx, x.b.sess, req.Method, metaOf(req.Params))
		resp, err := h(ctx, req)
		switch {
		case err != nil:
			end(err)
		case resp != nil && resp.Error != nil:
			end(codedError{resp.Error.Message, int64(resp.Error.Code)})
		default:
			end(nil)
		}
		return resp, err
	})
}

type httpConnection struct{ b *base }

func (x httpConnection) SetProtocolVersion(v string) {
	x.b.inner.(transport.HTTPConnection).SetProtocolVersion(v)
}

type legacyRequiring struct{ b *base }

func (x legacyRequiring) RequiresLegacyProtocol() bool {
	return x.b.inner.(interface{ RequiresLegacyProtocol() bool }).RequiresLegacyProtocol()
}

type connectionLost struct{ b *base }

func (x connectionLost) SetConnectionLostHandler(h func(error)) {
	x.b.inner.(interface{ SetConnectionLostHandler(func(error)) }).SetConnectionLostHandler(h)
}

type stderr struct{ b *base }

func (x stderr) Stderr() io.Reader {
	return x.b.inner.(interface{ Stderr() io.Reader }).Stderr()
}

type codedError struct {
	msg  string
	code int64
}

func (e codedError) Error() string { return e.msg }
func (e codedError) Code() int64   { return e.code }

// metaOf reads _meta from a server request's params (a map after decoding).
func metaOf(params any) map[string]any {
	if m, ok := params.(map[string]any); ok {
		meta, _ := m[mcpwire.Meta].(map[string]any)
		return meta
	}
	return nil
}
