package itest

import (
	"context"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// MCPGoClient adapts an mcp-go client to Client.
type MCPGoClient struct {
	C       *client.Client
	changed chan struct{}
	texts   sync.Map
}

// ConnectMCPGo starts an mcp-go client over t and initializes it (the
// 2025-11-25 handshake only when legacy is set). On 2026-07-28 it opens a
// subscriptions/listen stream for list_changed, as mcp-go clients must. The
// client is closed when the test ends.
func ConnectMCPGo(t testing.TB, tr transport.Interface, legacy bool) *MCPGoClient {
	t.Helper()
	var opts []client.ClientOption
	if legacy {
		//lint:ignore SA1019 the initialize-era protocol is under test
		opts = append(opts, client.WithLegacyProtocolOnly())
	}
	c := client.NewClient(tr, opts...)
	mc := &MCPGoClient{C: c, changed: make(chan struct{}, 16)}
	c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		if n.Method == string(mcpgo.MethodNotificationToolsListChanged) {
			select {
			case mc.changed <- struct{}{}:
			default:
			}
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); _ = c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcpgo.InitializeRequest{}
	req.Params.ClientInfo = mcpgo.Implementation{Name: "itest-agent", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatal(err)
	}
	if !legacy {
		go func() { _ = c.Listen(ctx, mcpgo.SubscriptionFilter{ToolsListChanged: true}) }()
	}
	return mc
}

func (m *MCPGoClient) ListTools(ctx context.Context) error {
	_, err := m.C.ListTools(ctx, mcpgo.ListToolsRequest{})
	return err
}

func (m *MCPGoClient) CallTool(ctx context.Context, name string, args map[string]any) {
	req := mcpgo.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := m.C.CallTool(ctx, req)
	if err == nil && !res.IsError && len(res.Content) > 0 {
		if tc, ok := res.Content[0].(mcpgo.TextContent); ok {
			m.texts.Store(name, tc.Text)
		}
	}
}

func (m *MCPGoClient) ListChanged() <-chan struct{} { return m.changed }

func (m *MCPGoClient) LastText(tool string) string {
	v, _ := m.texts.Load(tool)
	s, _ := v.(string)
	return s
}
