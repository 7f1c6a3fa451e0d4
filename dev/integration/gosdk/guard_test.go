package gosdk_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/interceptor/gosdk"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestStaleToolHook: the server changes search; the agent calls it with the
// old plan. The hook (run by the sending middleware) refreshes the listing
// through the same session; the span says the call was planned against the
// stale definition. A hook that refuses stops the call.
func TestStaleToolHook(t *testing.T) {
	for _, g := range generations {
		t.Run(g.name, func(t *testing.T) {
			tel := itest.NewTelemetry(t)
			var gc *itest.GoClient
			var hooked []interceptor.StaleToolCall
			refuse := false
			hook := func(ctx context.Context, c interceptor.StaleToolCall) error {
				hooked = append(hooked, c)
				if refuse {
					return errors.New("re-plan first")
				}
				_, err := gc.Session.ListTools(ctx, nil)
				return err
			}
			inst := gosdk.New(tel.Options(interceptor.WithServerName("demo"), interceptor.WithStaleToolHook(hook))...)
			srv := itest.NewGoServer()
			client, c := itest.NewGoSDKClient()
			gc = c
			inst.Instrument(client)
			itest.Connect(t, client, gc, inst.Transport(srv.InMemory(t)), g.ask)
			ctx := context.Background()
			v1, _ := itest.Digests(t, srv.RawToolsList(t))
			if err := gc.ListTools(ctx); err != nil {
				t.Fatal(err)
			}
			gc.CallTool(ctx, "search", map[string]any{"query": "a"})
			if len(hooked) != 0 {
				t.Fatal("hook ran on a fresh listing")
			}
			srv.Change()
			select {
			case <-gc.ListChanged():
			case <-time.After(10 * time.Second):
				t.Fatal("no list_changed")
			}
			v2, _ := itest.Digests(t, srv.RawToolsList(t))

			gc.CallTool(ctx, "search", map[string]any{"query": "b"})
			if len(hooked) != 1 || hooked[0].Tool != "search" || hooked[0].Digest != v1["search"] || hooked[0].ServerName != "demo" {
				t.Fatalf("hook calls: %+v", hooked)
			}
			spans := tel.WaitNamed(t, "tools/call search", 2)
			itest.Want(t, spans[1], map[string]any{
				semconv.ToolDigest:           v2["search"],
				semconv.ToolsListingStale:    false,
				semconv.GuardStaleDefinition: true,
				semconv.GuardPlannedDigest:   v1["search"],
			})

			// Stale again; this time the hook refuses and nothing is sent.
			srv.Server.RemoveTools("fail")
			select {
			case <-gc.ListChanged():
			case <-time.After(10 * time.Second):
				t.Fatal("no list_changed")
			}
			refuse = true
			_, err := gc.Session.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "c"}})
			if !errors.Is(err, interceptor.ErrRefused) {
				t.Fatalf("CallTool error %v, want ErrRefused", err)
			}
			if n := len(tel.Named("tools/call search")); n != 2 {
				t.Fatalf("%d tools/call spans: the refused call was sent", n)
			}
		})
	}
}

// TestStaleRefusal: the server adds a required parameter to search; the
// agent lists again (as Claude Code does within seconds) but calls with its
// old plan. The middleware answers with the STALE_TOOL_SCHEMA tool error,
// the call never reaches the transport, and its span says stale; a call
// written for the new definition goes through.
func TestStaleRefusal(t *testing.T) {
	for _, g := range generations {
		t.Run(g.name, func(t *testing.T) {
			tel := itest.NewTelemetry(t)
			inst := gosdk.New(tel.Options(interceptor.WithServerName("demo"), interceptor.WithStaleRefusal(true))...)
			srv := itest.NewGoServer()
			client, gc := itest.NewGoSDKClient()
			inst.Instrument(client)
			itest.Connect(t, client, gc, inst.Transport(srv.InMemory(t)), g.ask)
			ctx := context.Background()
			if err := gc.ListTools(ctx); err != nil {
				t.Fatal(err)
			}
			srv.Change()
			select {
			case <-gc.ListChanged():
			case <-time.After(10 * time.Second):
				t.Fatal("no list_changed")
			}
			if err := gc.ListTools(ctx); err != nil {
				t.Fatal(err)
			}
			res, err := gc.Session.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "old plan"}})
			if err != nil {
				t.Fatal(err)
			}
			sc, _ := res.StructuredContent.(map[string]any)
			if !res.IsError || sc["error_code"] != semconv.RefusalStaleToolSchema || sc["side_effect_started"] != false || sc["basis"] != "arguments" {
				t.Fatalf("result %+v", res)
			}
			spans := tel.WaitNamed(t, "tools/call search", 1)
			itest.Want(t, spans[0], map[string]any{semconv.ErrorType: semconv.ErrorTypeRefused, semconv.ToolStale: true,
				semconv.GuardWitnessArgument: "limit", semconv.JSONRPCRequestID: nil})

			res, err = gc.Session.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "new plan", "limit": 3}})
			if err != nil || res.IsError {
				t.Fatalf("%v %+v", err, res)
			}
			spans = tel.WaitNamed(t, "tools/call search", 2)
			itest.Want(t, spans[1], map[string]any{semconv.ErrorType: nil, semconv.ToolStale: nil})
			if n := len(tel.Named("tools/call search")); n != 2 {
				t.Fatalf("%d tools/call spans for two calls: the refused one was sent", n)
			}
		})
	}
}
