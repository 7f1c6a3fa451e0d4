package mcpgo_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	mcpgoapi "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/interceptor/mcpgo"
	"github.com/mcpdrift/mcpdrift/semconv"
)

var generations = []struct {
	name   string
	legacy bool
	want   string
}{
	{"stateless-2026", false, "2026-07-28"},
	{"stateful-2025", true, "2025-11-25"},
}

// scenario runs the drift scenario with an mcp-go client whose transport is
// wrapped by the decorator.
func scenario(t *testing.T, inner transport.Interface, ep interceptor.Endpoint, legacy bool, sc itest.Scenario, change func(*itest.MCPGoClient)) {
	tel := itest.NewTelemetry(t)
	wrapped := mcpgo.NewTransport(inner, ep, tel.Options(interceptor.WithServerName("demo"))...)
	mc := itest.ConnectMCPGo(t, wrapped, legacy)
	if !legacy {
		tel.WaitNamed(t, "subscriptions/listen", 1) // acknowledged: notifications will arrive
	}
	sc.Tel, sc.Client, sc.ServerName = tel, mc, "demo"
	if sc.Change == nil {
		sc.Change = func() { change(mc) }
	}
	itest.RunDrift(t, sc)
	itest.WantSession(t, tel, mcpgo.Session(wrapped), "demo")
	if mcpgo.Session(inner) != nil {
		t.Error("Session of a transport NewTransport did not return: want nil")
	}
}

func TestInProcessDrift(t *testing.T) {
	for _, g := range generations {
		t.Run(g.name, func(t *testing.T) {
			srv, change := itest.NewMCPGoServer()
			scenario(t, transport.NewInProcessTransport(srv), interceptor.Endpoint{}, g.legacy, itest.Scenario{
				Change: change, Raw: func(t testing.TB) []byte { return itest.MCPGoRawToolsList(t, srv) },
				ProtocolVersion: g.want, Net: semconv.NetworkTransportPipe,
			}, nil)
		})
	}
}

func TestStdioDrift(t *testing.T) {
	for _, g := range generations {
		t.Run(g.name, func(t *testing.T) {
			mirror, mirrorChange := itest.NewMCPGoServer()
			cmd := itest.ChildCommand("mcpgo")
			inner := transport.NewStdio(cmd.Path, cmd.Env[len(os.Environ()):], cmd.Args[1:]...)
			scenario(t, inner, interceptor.Endpoint{Command: cmd.Args}, g.legacy, itest.Scenario{
				Raw:             func(t testing.TB) []byte { return itest.MCPGoRawToolsList(t, mirror) },
				ProtocolVersion: g.want, Net: semconv.NetworkTransportPipe,
			}, func(mc *itest.MCPGoClient) { itest.MutateVia(mc, mirrorChange)() })
		})
	}
}

func TestStreamableHTTPDrift(t *testing.T) {
	for _, g := range generations {
		t.Run(g.name, func(t *testing.T) {
			srv, change := itest.NewMCPGoServer()
			hs := httptest.NewServer(mcpgoserver.NewStreamableHTTPServer(srv, mcpgoserver.WithStateful(g.legacy)))
			t.Cleanup(hs.Close)
			var opts []transport.StreamableHTTPCOption
			if g.legacy {
				//lint:ignore SA1019 before 2026-07-28 server notifications need the standalone stream
				opts = append(opts, transport.WithContinuousListening())
			}
			inner, err := transport.NewStreamableHTTP(hs.URL, opts...)
			if err != nil {
				t.Fatal(err)
			}
			scenario(t, inner, interceptor.Endpoint{URL: hs.URL}, g.legacy, itest.Scenario{
				Change: change, Raw: func(t testing.TB) []byte { return itest.MCPGoRawToolsList(t, srv) },
				ProtocolVersion: g.want, Net: semconv.NetworkTransportTCP, MCPSessionID: g.legacy,
			}, nil)
		})
	}
}

func TestLegacySSEDrift(t *testing.T) {
	srv, change := itest.NewMCPGoServer()
	sse := mcpgoserver.NewSSEServer(srv)
	hs := httptest.NewServer(sse)
	t.Cleanup(hs.Close)
	inner, err := transport.NewSSE(hs.URL + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	scenario(t, inner, interceptor.Endpoint{URL: hs.URL + "/sse"}, true, itest.Scenario{
		Change: change, Raw: func(t testing.TB) []byte { return itest.MCPGoRawToolsList(t, srv) },
		ProtocolVersion: "2025-11-25", Net: semconv.NetworkTransportTCP,
	}, nil)
}

// TestStaleToolHook: the decorator runs the hook before sending; a refusal
// is returned to the caller and nothing is sent.
func TestStaleToolHook(t *testing.T) {
	srv, change := itest.NewMCPGoServer()
	tel := itest.NewTelemetry(t)
	refusals := 0
	wrapped := mcpgo.NewTransport(transport.NewInProcessTransport(srv), interceptor.Endpoint{}, tel.Options(
		interceptor.WithStaleToolHook(func(context.Context, interceptor.StaleToolCall) error {
			refusals++
			return errors.New("re-plan first")
		}))...)
	mc := itest.ConnectMCPGo(t, wrapped, true)
	ctx := context.Background()
	listThenChange(t, mc, change)
	req := mcpgoapi.CallToolRequest{}
	req.Params.Name = "search"
	if _, err := mc.C.CallTool(ctx, req); !errors.Is(err, interceptor.ErrRefused) {
		t.Fatalf("error %v, want ErrRefused", err)
	}
	if refusals != 1 || len(tel.Named("tools/call search")) != 0 {
		t.Errorf("%d refusals, %d spans", refusals, len(tel.Named("tools/call search")))
	}
}

// listThenChange lists the tools, has the server change search, and waits
// for the client to hear of it.
func listThenChange(t *testing.T, mc *itest.MCPGoClient, change func()) {
	t.Helper()
	if err := mc.ListTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	change()
	select {
	case <-mc.ListChanged():
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed")
	}
}

// TestStaleRefusal: after a re-list, a call planned on the old search is
// answered by the decorator with the STALE_TOOL_SCHEMA tool error and never
// sent; one written for the new definition is.
func TestStaleRefusal(t *testing.T) {
	srv, change := itest.NewMCPGoServer()
	tel := itest.NewTelemetry(t)
	wrapped := mcpgo.NewTransport(transport.NewInProcessTransport(srv), interceptor.Endpoint{}, tel.Options(interceptor.WithStaleRefusal(true))...)
	mc := itest.ConnectMCPGo(t, wrapped, true)
	ctx := context.Background()
	listThenChange(t, mc, change)
	if err := mc.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcpgoapi.CallToolRequest{}
	req.Params.Name = "search"
	req.Params.Arguments = map[string]any{"query": "old plan"}
	res, err := mc.C.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	if !res.IsError || sc["error_code"] != semconv.RefusalStaleToolSchema || sc["side_effect_started"] != false {
		t.Fatalf("result %+v", res)
	}
	itest.Want(t, tel.WaitNamed(t, "tools/call search", 1)[0], map[string]any{
		semconv.ErrorType: semconv.ErrorTypeRefused, semconv.ToolStale: true, semconv.GuardWitnessArgument: "limit"})
	req.Params.Arguments = map[string]any{"query": "new plan", "limit": 3}
	if res, err := mc.C.CallTool(ctx, req); err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	tel.WaitNamed(t, "tools/call search", 2)
	if n := len(tel.Named("tools/call search")); n != 2 {
		t.Fatalf("%d spans for two calls: the refused one was sent", n)
	}
}
