package gosdk_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/interceptor/gosdk"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestHTTPDrift runs the drift scenario over Streamable HTTP (JSON and SSE
// responses) and the legacy SSE transport, both protocol generations, with
// the go-sdk client transport wrapped by Instrumentation.Transport (which
// puts httptap under its HTTP client).
func TestHTTPDrift(t *testing.T) {
	servers := []struct {
		name      string
		handler   func(s *mcp.Server, stateless bool) http.Handler
		transport func(url string) mcp.Transport
		legacy    bool
	}{
		{"streamable-json", func(s *mcp.Server, stateless bool) http.Handler {
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true, Stateless: stateless})
		}, func(url string) mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: url} }, false},
		{"streamable-sse", func(s *mcp.Server, stateless bool) http.Handler {
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
		}, func(url string) mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: url} }, false},
		{"legacy-sse", func(s *mcp.Server, _ bool) http.Handler {
			return mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
		}, func(url string) mcp.Transport { return &mcp.SSEClientTransport{Endpoint: url} }, true},
	}
	for _, sv := range servers {
		for _, g := range generations {
			t.Run(sv.name+"/"+g.name, func(t *testing.T) {
				tel := itest.NewTelemetry(t)
				inst := gosdk.New(tel.Options(interceptor.WithServerName("demo"))...)
				srv := itest.NewGoServer()
				// A 2026-07-28 server is stateless; a 2025 one keeps sessions.
				hs := httptest.NewServer(sv.handler(srv.Server, g.ask == ""))
				t.Cleanup(hs.Close)
				client, gc := itest.NewGoSDKClient()
				inst.Instrument(client)
				itest.Connect(t, client, gc, inst.Transport(sv.transport(hs.URL)), g.ask)
				want := g.want
				if sv.legacy {
					want = "2025-11-25" // the legacy SSE transport predates 2026-07-28
				}
				itest.RunDrift(t, itest.Scenario{
					Tel: tel, Client: gc, Change: srv.Change, Raw: srv.RawToolsList,
					ServerName: "demo", ProtocolVersion: want, Net: semconv.NetworkTransportTCP,
					MCPSessionID: !sv.legacy && want != "2026-07-28",
				})
			})
		}
	}
}
