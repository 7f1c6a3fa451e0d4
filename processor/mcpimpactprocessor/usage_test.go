package mcpimpactprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
	"github.com/mcpdrift/mcpdrift/processor/mcpimpactprocessor/internal/metadatatest"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestDigestUsage: calls of a known server's tool by the digest they were
// planned against, by day, beyond the impact window; the metric counts
// the same calls by series; the table survives a restart.
func TestDigestUsage(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Window = time.Hour
	cfg.RecentWindow = time.Hour
	_, host := newFileStorage(t, t.TempDir(), nil)
	cfg.Storage = &storageID
	h := newHarness(t, cfg, withHost(host))
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-72 * time.Hour))))
	day := func(d int) time.Time { return t0.Add(time.Duration(d) * 24 * time.Hour) }
	c := func(digest string, at time.Time) call {
		return call{agent: "a", server: srv, url: srvURL, tool: "search", session: "s", digest: digest, at: at}
	}
	h.sendSpans(callsOf(c("d1", day(-2)), c("d1", day(-2)), c("d1", day(-1)), c("d2", t0), c("", t0),
		call{agent: "a", server: "elsewhere", url: "https://other.example.com/mcp", tool: "search", session: "s", digest: "z", at: t0})) // an unknown server: not counted

	out, err := impactView{instance(t, h)}.DigestUsage(context.Background(), controlplane.DigestUsageQuery{Server: srv, Tool: "search", Days: 7})
	require.NoError(t, err)
	d1, d2 := "d1", "d2"
	assert.Equal(t, apiwire.DigestUsage{Server: srv, Tool: "search", Days: 7,
		From: dayString(uint32(day(-6).Unix() / daySeconds)), To: t0.UTC().Format(time.DateOnly), CurrentDigest: &d1,
		Digests: []apiwire.DigestCalls{
			{Digest: &d1, Current: true, Calls: 3, LastDay: day(-1).UTC().Format(time.DateOnly), ByDay: []apiwire.DayCalls{
				{Day: day(-2).UTC().Format(time.DateOnly), Calls: 2}, {Day: day(-1).UTC().Format(time.DateOnly), Calls: 1}}},
			{Digest: nil, Calls: 1, LastDay: t0.UTC().Format(time.DateOnly), ByDay: []apiwire.DayCalls{{Day: t0.UTC().Format(time.DateOnly), Calls: 1}}},
			{Digest: &d2, Calls: 1, LastDay: t0.UTC().Format(time.DateOnly), ByDay: []apiwire.DayCalls{{Day: t0.UTC().Format(time.DateOnly), Calls: 1}}},
		}}, out, "kept beyond the one-hour window")

	point := func(digest string, n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Value: n, Attributes: attribute.NewSet(
			attribute.String(semconv.ServerName, srv), attribute.String(semconv.GenAIToolName, "search"), attribute.String(semconv.ToolDigest, digest))}
	}
	metadatatest.AssertEqualProcessorMcpimpactCallsByDigest(t, h.tel, []metricdata.DataPoint[int64]{
		point("d1", 3), point("d2", 1), point(noDigestLabel, 1),
	}, metricdatatest.IgnoreTimestamp())

	_, err = impactView{instance(t, h)}.DigestUsage(context.Background(), controlplane.DigestUsageQuery{Server: srv, Tool: "nope", Days: 7})
	assert.ErrorIs(t, err, controlplane.ErrUnknownTool)

	// One day back: only today's calls.
	out, err = impactView{instance(t, h)}.DigestUsage(context.Background(), controlplane.DigestUsageQuery{Server: srv, Tool: "search", Days: 1})
	require.NoError(t, err)
	assert.Len(t, out.Digests, 2)

	// Restarted on the same storage: the usage is back.
	h.stop()
	h2 := newHarness(t, cfg, withHost(host), withClock(h.clock))
	out, err = impactView{instance(t, h2)}.DigestUsage(context.Background(), controlplane.DigestUsageQuery{Server: srv, Tool: "search", Days: 7})
	require.NoError(t, err)
	assert.Equal(t, int64(3), out.Digests[0].Calls)
}

// TestUsageBounds: rows older than usageDays go, and a full table counts
// what it drops.
func TestUsageBounds(t *testing.T) {
	s := &server{}
	now := t0
	s.countUsage("t", "d", now.Add(-(usageDays)*24*time.Hour).UnixNano(), now)
	assert.Empty(t, s.usage, "older than usageDays")
	s.countUsage("t", "d", now.Add(-48*time.Hour).UnixNano(), now)
	s.countUsage("t", "d", now.UnixNano(), now.Add(usageDays*24*time.Hour-time.Hour))
	assert.Len(t, s.usage, 1, "the old row went when a later day came")
	for i := range maxUsageRows + 3 {
		s.countUsage("t", string(rune('a'+i%26))+string(rune(i)), now.UnixNano(), now)
	}
	assert.Len(t, s.usage, maxUsageRows)
	assert.Equal(t, int64(4), s.usageDropped)
}
