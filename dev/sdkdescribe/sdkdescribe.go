// Package sdkdescribe makes a go-sdk MCP server's tool description change
// from one tools/list to the next, as a description that embeds a
// timestamp or a session URL does: the tests of volatile fields (the
// receiver's, and e2e's against the built distribution) serve it.
package sdkdescribe

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Rewrite is receiving middleware that sets tool's description to desc()
// in every tools/list result, leaving the server's own tool alone.
func Rewrite(tool string, desc func() string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			lr, ok := res.(*mcp.ListToolsResult)
			if !ok || err != nil {
				return res, err
			}
			out := *lr
			out.Tools = nil
			for _, t := range lr.Tools {
				c := *t
				if c.Name == tool {
					c.Description = desc()
				}
				out.Tools = append(out.Tools, &c)
			}
			return &out, nil
		}
	}
}
