package gosdk

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/interceptor"
)

// conn records the messages of one connection. It forwards every message
// object as the SDK gave it, except a request whose params gained trace
// context, which is forwarded as a copy with the new params.
type conn struct {
	inner mcp.Connection
	in    *Instrumentation
	sess  *interceptor.Session
	bound atomic.Pointer[mcp.ClientSession]
}

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.inner.Read(ctx)
	if err != nil {
		return msg, err
	}
	c.in.ic.Protect(func() { c.received(msg) })
	return msg, nil
}

func (c *conn) received(msg jsonrpc.Message) {
	switch m := msg.(type) {
	case *jsonrpc.Response:
		c.sess.Response(interceptor.IDFromValue(m.ID.Raw()), m.Result, rpcError(m.Error))
		if sid := c.inner.SessionID(); sid != "" {
			c.sess.SetMCPSessionID(sid)
		}
	case *jsonrpc.Request:
		c.sess.Incoming(m.Method, m.Params)
	}
}

func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return c.inner.Write(ctx, msg) // a response to a server request
	}
	c.bind(ctx)
	id := interceptor.IDFromValue(req.ID.Raw())
	params := req.Params
	c.in.ic.Protect(func() { params = c.sess.Request(ctx, id, req.Method, req.Params) })
	if !sameParams(params, req.Params) {
		cp := *req
		cp.Params = params
		msg = &cp
	}
	err := c.inner.Write(ctx, msg)
	if err != nil && id.Valid() {
		c.sess.Fail(id, err)
	}
	return err
}

func (c *conn) Close() error {
	err := c.inner.Close()
	c.sess.Close()
	if cs := c.bound.Load(); cs != nil {
		c.in.sessions.Delete(cs)
	}
	return err
}

func (c *conn) SessionID() string { return c.inner.SessionID() }

// bind links the client session whose request this is (put in ctx by the
// sending middleware) to the interceptor session, once.
func (c *conn) bind(ctx context.Context) {
	if c.bound.Load() != nil {
		return
	}
	if cs, ok := ctx.Value(bindKey{}).(*mcp.ClientSession); ok && cs != nil && c.bound.CompareAndSwap(nil, cs) {
		c.in.sessions.Store(cs, c.sess)
	}
}

func rpcError(err error) *interceptor.RPCError {
	if err == nil {
		return nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return &interceptor.RPCError{Code: we.Code, Message: we.Message}
	}
	return &interceptor.RPCError{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

func sameParams(a, b json.RawMessage) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// rpcCoded exposes a JSON-RPC error's code to StartServerOperation.
func rpcCoded(err error) error {
	var we *jsonrpc.Error
	if err != nil && errors.As(err, &we) {
		return codedError{err, we.Code}
	}
	return err
}

type codedError struct {
	error
	code int64
}

func (e codedError) Code() int64   { return e.code }
func (e codedError) Unwrap() error { return e.error }
