package httptap_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/interceptor/httptap"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestMCPGoClientGoSDKServer puts the tap under an mcp-go client talking to
// a go-sdk server: Streamable HTTP with JSON and SSE responses, both
// protocol generations, and the legacy SSE transport.
func TestMCPGoClientGoSDKServer(t *testing.T) {
	cases := []struct {
		name                 string
		json, legacy, oldSSE bool
		wantVersion          string
		wantMCPSession       bool
	}{
		{"streamable-json/stateless-2026", true, false, false, "2026-07-28", false},
		{"streamable-sse/stateless-2026", false, false, false, "2026-07-28", false},
		{"streamable-json/stateful-2025", true, true, false, "2025-11-25", true},
		{"streamable-sse/stateful-2025", false, true, false, "2025-11-25", true},
		{"legacy-sse", false, true, true, "2025-11-25", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := itest.NewGoServer()
			var h http.Handler
			if c.oldSSE {
				h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv.Server }, nil)
			} else {
				h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.Server },
					&mcp.StreamableHTTPOptions{JSONResponse: c.json, Stateless: !c.legacy})
			}
			hs := httptest.NewServer(h)
			t.Cleanup(hs.Close)
			tel := itest.NewTelemetry(t)
			tap := httptap.NewTransport(nil, tel.Options(interceptor.WithServerName("demo"))...)
			t.Cleanup(tap.Close)
			hc := &http.Client{Transport: tap}
			var inner transport.Interface
			var err error
			if c.oldSSE {
				inner, err = transport.NewSSE(hs.URL, transport.WithHTTPClient(hc))
			} else {
				opts := []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(hc)}
				if c.legacy {
					//lint:ignore SA1019 the initialize-era protocol is under test: its notifications need the standalone stream
					opts = append(opts, transport.WithContinuousListening())
				}
				inner, err = transport.NewStreamableHTTP(hs.URL, opts...)
			}
			if err != nil {
				t.Fatal(err)
			}
			mc := itest.ConnectMCPGo(t, inner, c.legacy)
			if !c.legacy {
				tel.WaitNamed(t, "subscriptions/listen", 1)
			}
			itest.RunDrift(t, itest.Scenario{
				Tel: tel, Client: mc, Change: srv.Change, Raw: srv.RawToolsList,
				ServerName: "demo", ProtocolVersion: c.wantVersion, Net: semconv.NetworkTransportTCP,
				MCPSessionID: c.wantMCPSession,
			})
		})
	}
}
