package mcpimpactprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
)

// The processor matches a span to a probed server by the URLs the emitters
// write: the receiver's mcpdrift.server.url (serverid.URL of its target, see
// the receiver's TestTargetServerURL) and the interceptor's (and the
// proxy's, which reuses it) Endpoint.ServerURL of the transport the agent
// configured. However the two sides spell one endpoint, a span without a
// server name is judged against that server's contract.
func TestIdentityMeetsEmitters(t *testing.T) {
	for _, c := range []struct {
		name     string
		receiver string   // the receiver target's endpoint
		agent    string   // the agent transport's endpoint
		command  []string // a stdio server, for both
	}{
		{name: "same", receiver: "https://mcp.example.com/mcp", agent: "https://mcp.example.com/mcp"},
		{name: "credentials and query", receiver: "https://bot:s3cret@mcp.example.com/mcp?api_key=k", agent: "https://mcp.example.com/mcp?session=9#x"},
		{name: "default port, case, trailing slash", receiver: "https://MCP.example.com:443/mcp/", agent: "https://mcp.example.com/mcp"},
		{name: "at sign in the path", receiver: "https://mcp.example.com/users/@me/mcp", agent: "https://u:p@mcp.example.com/users/@me/mcp?k=v"},
		{name: "ipv6", receiver: "http://[::1]:3001/mcp", agent: "http://[::1]:3001/mcp/"},
		{name: "stdio", command: []string{"npx", "-y", "@modelcontextprotocol/server-everything"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, nil)
			url := serverid.URL(c.receiver, c.command)
			h.sendLogs(snapshotLogs(snapshot{server: "prod", url: url, at: t0.Add(-2 * time.Hour), tools: map[string]string{"echo": "e0"}}))
			h.sendLogs(snapshotLogs(snapshot{server: "prod", url: url, at: t0.Add(-time.Hour), tools: map[string]string{"echo": "e1"}}))
			agentURL := interceptor.Endpoint{URL: c.agent, Command: c.command}.ServerURL()
			span := onlySpan(t, h.sendSpans(callsOf(call{agent: "a", url: agentURL, tool: "echo", session: "s", digest: "e0", at: t0})))
			current, stale, judged := spanVerdict(span)
			assert.True(t, judged, "span url %q, receiver url %q: not matched", agentURL, serverid.URL(c.receiver, c.command))
			assert.Equal(t, "e1", current)
			assert.True(t, stale)
		})
	}
}
