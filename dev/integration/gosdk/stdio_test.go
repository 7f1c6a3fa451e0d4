package gosdk_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/interceptor/gosdk"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestStdioDrift runs the drift scenario against a go-sdk server in a child
// process, through the wrapped CommandTransport.
func TestStdioDrift(t *testing.T) {
	for _, g := range generations {
		t.Run(g.name, func(t *testing.T) {
			tel := itest.NewTelemetry(t)
			inst := gosdk.New(tel.Options()...) // no configured name: serverInfo.name is used
			cmd := itest.ChildCommand("gosdk")
			client, gc := itest.NewGoSDKClient()
			inst.Instrument(client)
			itest.Connect(t, client, gc, inst.Transport(&mcp.CommandTransport{Command: cmd}), g.ask)
			mirror := itest.NewGoServer()
			itest.RunDrift(t, itest.Scenario{
				Tel: tel, Client: gc, Raw: mirror.RawToolsList,
				Change:     itest.MutateVia(gc, mirror.Change),
				ServerName: "demo-gosdk", ProtocolVersion: g.want, Net: semconv.NetworkTransportPipe,
			})
			url := itest.Str(tel.Named("tools/call search")[0], semconv.ServerURL)
			if !strings.HasPrefix(url, "stdio:") || !strings.Contains(url, "-test.run=^$") {
				t.Errorf("%s = %q, want stdio:<command line>", semconv.ServerURL, url)
			}
		})
	}
}
