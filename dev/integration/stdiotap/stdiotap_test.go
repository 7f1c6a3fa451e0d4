package stdiotap_test

import (
	"io"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/interceptor/stdiotap"
	"github.com/mcpdrift/mcpdrift/semconv"
)

var generations = []struct {
	name, ask, want string
	legacy          bool
}{
	{"stateless-2026", "", "2026-07-28", false},
	{"stateful-2025", "2025-11-25", "2025-11-25", true},
}

// startChild runs a demo server child behind a tap and stops it when the
// test ends.
func startChild(t *testing.T, kind string, tel *itest.Telemetry) *stdiotap.Tap {
	t.Helper()
	cmd := itest.ChildCommand(kind)
	// Pipes carry no context: the tap's context names the agent.
	tap, err := stdiotap.Command(itest.AgentContext(), cmd, tel.Options(interceptor.WithServerName("demo"))...)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = tap.Stdin().Close()
		_ = cmd.Wait()
	})
	return tap
}

// TestGoSDKOverTap drives a go-sdk client over the tapped pipes of a go-sdk
// server child (an IOTransport, which the gosdk front-end could also wrap;
// here the tap alone sees the bytes).
func TestGoSDKOverTap(t *testing.T) {
	for _, g := range generations {
		t.Run(g.name, func(t *testing.T) {
			tel := itest.NewTelemetry(t)
			tap := startChild(t, "gosdk", tel)
			client, gc := itest.NewGoSDKClient()
			itest.Connect(t, client, gc, &mcp.IOTransport{Reader: tap.Stdout(), Writer: tap.Stdin()}, g.ask)
			mirror := itest.NewGoServer()
			itest.RunDrift(t, itest.Scenario{
				Tel: tel, Client: gc, Raw: mirror.RawToolsList,
				Change:     itest.MutateVia(gc, mirror.Change),
				ServerName: "demo", ProtocolVersion: g.want, Net: semconv.NetworkTransportPipe,
			})
			itest.WantSession(t, tel, tap.Session(), "demo")
		})
	}
}

// TestMCPGoOverTap drives an mcp-go client over the tapped pipes of an
// mcp-go server child.
func TestMCPGoOverTap(t *testing.T) {
	for _, g := range generations {
		t.Run(g.name, func(t *testing.T) {
			tel := itest.NewTelemetry(t)
			tap := startChild(t, "mcpgo", tel)
			mc := itest.ConnectMCPGo(t, transport.NewIO(tap.Stdout(), tap.Stdin(), io.NopCloser(eofReader{})), g.legacy)
			if !g.legacy {
				tel.WaitNamed(t, "subscriptions/listen", 1)
			}
			mirror, mirrorChange := itest.NewMCPGoServer()
			itest.RunDrift(t, itest.Scenario{
				Tel: tel, Client: mc, Raw: func(t testing.TB) []byte { return itest.MCPGoRawToolsList(t, mirror) },
				Change:     itest.MutateVia(mc, mirrorChange),
				ServerName: "demo", ProtocolVersion: g.want, Net: semconv.NetworkTransportPipe,
			})
			itest.WantSession(t, tel, tap.Session(), "demo")
		})
	}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
