package gosdk_test

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/interceptor/gosdk"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// generations are the protocol versions the client asks for: "" is the
// SDK's default (2026-07-28, stateless), the other the 2025 handshake.
var generations = []struct{ name, ask, want string }{
	{"stateless-2026", "", "2026-07-28"},
	{"stateful-2025", "2025-11-25", "2025-11-25"},
}

func TestInMemoryDrift(t *testing.T) {
	for _, g := range generations {
		t.Run(g.name, func(t *testing.T) {
			tel := itest.NewTelemetry(t)
			inst := gosdk.New(tel.Options(interceptor.WithServerName("demo"))...)
			srv := itest.NewGoServer()
			client, gc := itest.NewGoSDKClient()
			inst.Instrument(client)
			itest.Connect(t, client, gc, inst.Transport(srv.InMemory(t)), g.ask)
			itest.RunDrift(t, itest.Scenario{
				Tel: tel, Client: gc, Change: srv.Change, Raw: srv.RawToolsList,
				ServerName: "demo", ProtocolVersion: g.want, Net: semconv.NetworkTransportPipe,
			})
		})
	}
}
