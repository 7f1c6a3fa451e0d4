package gosdk

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
)

type bindKey struct{}

// SendingMiddleware returns the middleware for mcp.Client.AddSendingMiddleware.
// It links each client session to its interceptor session and, for
// tools/call, runs the guard's stale-tool hook (interceptor.WithStaleToolHook)
// before the request is sent, where the hook may refresh the listing through
// the same session. A hook error refuses the call: it is returned to the
// caller and nothing is sent. Then the stale guard (interceptor.
// WithStaleRefusal, WithStaleWindow) judges it: a refused call returns the
// refusal's tool error (isError, STALE_TOOL_SCHEMA) as its result, unsent.
func (in *Instrumentation) SendingMiddleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			cs, _ := req.GetSession().(*mcp.ClientSession)
			sess := in.Session(cs)
			if sess == nil && cs != nil {
				ctx = context.WithValue(ctx, bindKey{}, cs) // the transport binds it
			}
			if method == mcpwire.MethodToolsCall && sess != nil {
				if p, ok := req.GetParams().(*mcp.CallToolParams); ok && p != nil {
					var err error
					if ctx, err = sess.BeforeToolCall(ctx, p.Name); err != nil {
						return nil, err
					}
					if res := guard(ctx, sess, p); res != nil {
						return res, nil
					}
				}
			}
			return next(ctx, method, req)
		}
	}
}

// guard runs the interceptor's stale guard (WithStaleRefusal,
// WithStaleWindow) on a call about to be sent: a refused call is answered
// here with the refusal's tool error and never reaches the transport. The
// params are encoded only when a guard option is on.
func guard(ctx context.Context, sess *interceptor.Session, p *mcp.CallToolParams) *mcp.CallToolResult {
	if !sess.GuardsCalls() {
		return nil
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil // the transport reports it
	}
	r := sess.GuardCall(ctx, interceptor.ID{}, raw)
	if r == nil {
		return nil
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(r.Result(), &res); err != nil {
		return nil
	}
	return &res
}

// ReceivingMiddleware returns the middleware for
// mcp.Client.AddReceivingMiddleware: a SERVER span for each request or
// notification the server sends to the client, parented by the trace context
// in its _meta (see interceptor.Interceptor.StartServerOperation).
func (in *Instrumentation) ReceivingMiddleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			cs, _ := req.GetSession().(*mcp.ClientSession)
			ctx, end := in.ic.StartServerOperation(ctx, in.Session(cs), method, metaOf(req))
			res, err := next(ctx, method, req)
			end(rpcCoded(err))
			return res, err
		}
	}
}

// metaOf returns a request's params._meta. GetParams may hold a typed nil
// whose GetMeta panics; that is no meta.
func metaOf(req mcp.Request) (meta map[string]any) {
	defer func() { _ = recover() }()
	if p := req.GetParams(); p != nil {
		meta = p.GetMeta()
	}
	return meta
}
