package stdiotap_test

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
	"github.com/mcpdrift/mcpdrift/interceptor/stdiotap"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestEverythingOverTap taps the pipes of the real npm server-everything.
func TestEverythingOverTap(t *testing.T) {
	tel := itest.NewTelemetry(t)
	cmd := itest.EverythingCommand(t, "2026.1.26")
	tap, err := stdiotap.Command(itest.AgentContext(), cmd, tel.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	var log itest.LockedBuffer
	client, gc := itest.NewGoSDKClient()
	itest.Connect(t, client, gc, &mcp.LoggingTransport{Transport: &mcp.IOTransport{Reader: tap.Stdout(), Writer: tap.Stdin()}, Writer: &log}, "")
	itest.CheckEverything(t, tel, gc, func(member string) []json.RawMessage { return itest.LoggedResults(log.Bytes(), member) })
	itest.Want(t, tel.Named("tools/call echo")[0], map[string]any{semconv.NetworkTransport: "pipe"})
}
