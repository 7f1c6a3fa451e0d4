package gosdk_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/interceptor/gosdk"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestEverythingStdio runs every pinned version of the real npm
// server-everything over stdio through the wrapped CommandTransport.
func TestEverythingStdio(t *testing.T) {
	for _, v := range testservers.EverythingVersions {
		t.Run(v, func(t *testing.T) {
			tel := itest.NewTelemetry(t)
			inst := gosdk.New(tel.Options()...)
			var log itest.LockedBuffer
			client, gc := itest.NewGoSDKClient()
			inst.Instrument(client)
			// server-everything does not exit when stdin closes: do not wait for it.
			cmd := &mcp.CommandTransport{Command: itest.EverythingCommand(t, v), TerminateDuration: 50 * time.Millisecond}
			inner := &mcp.LoggingTransport{Transport: cmd, Writer: &log}
			itest.Connect(t, client, gc, inst.Transport(inner), "")
			itest.CheckEverything(t, tel, gc, func(member string) []json.RawMessage { return itest.LoggedResults(log.Bytes(), member) })
			if url := itest.Str(tel.Named("tools/call echo")[0], semconv.ServerURL); !strings.HasPrefix(url, "stdio:") || !strings.HasSuffix(url, "index.js stdio") {
				t.Errorf("%s = %q", semconv.ServerURL, url)
			}
		})
	}
}

// TestEverythingHTTP runs the real server-everything over Streamable HTTP
// and legacy SSE, through the go-sdk HTTP transports (httptap underneath).
func TestEverythingHTTP(t *testing.T) {
	cases := []struct{ version, mode, path string }{
		{"2025.11.25", "streamableHttp", "/mcp"},
		{"2026.1.26", "streamableHttp", "/mcp"},
		{"2025.11.25", "sse", "/sse"},
	}
	for _, c := range cases {
		t.Run(c.version+"/"+c.mode, func(t *testing.T) {
			url := testservers.EverythingHTTP(t, c.version, c.mode) + c.path
			tel := itest.NewTelemetry(t)
			inst := gosdk.New(tel.Options()...)
			rec := &itest.Recorder{}
			hc := &http.Client{Transport: rec}
			var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}
			if c.mode == "sse" {
				tr = &mcp.SSEClientTransport{Endpoint: url, HTTPClient: hc}
			}
			client, gc := itest.NewGoSDKClient()
			inst.Instrument(client)
			itest.Connect(t, client, gc, inst.Transport(tr), "")
			itest.CheckEverything(t, tel, gc, rec.Results)
			call := tel.Named("tools/call echo")[0]
			itest.Want(t, call, map[string]any{semconv.ServerURL: url, semconv.NetworkTransport: "tcp", semconv.ServerAddress: "127.0.0.1"})
			if c.mode == "streamableHttp" && itest.Str(call, semconv.MCPSessionID) == "" {
				t.Errorf("no %s on a stateful Streamable HTTP session", semconv.MCPSessionID)
			}
		})
	}
}
