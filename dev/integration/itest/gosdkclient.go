package itest

import (
	"context"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GoClient adapts a go-sdk client session to Client.
type GoClient struct {
	Session *mcp.ClientSession
	changed chan struct{}
	texts   sync.Map
}

// NewGoSDKClient returns a go-sdk client that reports list_changed
// notifications to the returned GoClient once connected (set Session).
func NewGoSDKClient() (*mcp.Client, *GoClient) {
	gc := &GoClient{changed: make(chan struct{}, 16)}
	c := mcp.NewClient(&mcp.Implementation{Name: "itest-agent", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case gc.changed <- struct{}{}:
			default:
			}
		},
	})
	return c, gc
}

func (g *GoClient) ListTools(ctx context.Context) error {
	_, err := g.Session.ListTools(ctx, nil)
	return err
}

func (g *GoClient) CallTool(ctx context.Context, name string, args map[string]any) {
	res, err := g.Session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err == nil && !res.IsError && len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			g.texts.Store(name, tc.Text)
		}
	}
}

func (g *GoClient) LastText(tool string) string {
	v, _ := g.texts.Load(tool)
	s, _ := v.(string)
	return s
}

func (g *GoClient) ListChanged() <-chan struct{} { return g.changed }

// Connect connects c over t, closing the session when the test ends.
func Connect(t testing.TB, c *mcp.Client, gc *GoClient, tr mcp.Transport, protocolVersion string) {
	t.Helper()
	cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	gc.Session = cs
}
