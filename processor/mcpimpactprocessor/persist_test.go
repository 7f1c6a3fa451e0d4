package mcpimpactprocessor

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpdrift/mcpdrift/dev/storagetest"
	"github.com/mcpdrift/mcpdrift/processor/mcpimpactprocessor/internal/metadata"
	"github.com/mcpdrift/mcpdrift/processor/mcpimpactprocessor/internal/metadatatest"
	"github.com/mcpdrift/mcpdrift/semconv"
)

func TestIndexSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	clock := newClock()

	_, host := newFileStorage(t, dir, nil)
	before := newHarness(t, storageConfig(), withHost(host), withClock(clock))
	before.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	before.sendSpans(callsOf(
		call{agent: "planner", server: srv, url: srvURL, tool: "search", session: "s1", digest: "d1", at: t0.Add(-10 * time.Minute)},
		call{agent: "planner", server: srv, url: srvURL, tool: "search", session: "s2", digest: "d1", at: t0.Add(-5 * time.Minute), failed: true},
	))
	before.stop()

	clock.Advance(time.Minute)
	_, host = newFileStorage(t, dir, nil)
	after := newHarness(t, storageConfig(), withHost(host), withClock(clock))

	// The contracts came back: spans are judged without a new snapshot.
	out := after.sendSpans(callsOf(call{agent: "writer", server: srv, url: srvURL, tool: "search", session: "s3", digest: "d1", at: clock.Now()}))
	cur, stale, judged := spanVerdict(onlySpan(t, out))
	require.True(t, judged)
	assert.Equal(t, "d1", cur)
	assert.False(t, stale)

	// The index came back: the drift counts calls made before the restart.
	recs := after.sendLogs(driftLogs(searchDrift(clock.Now())))
	planner := readImpact(t, recs[1])
	assert.Equal(t, "planner", planner.agent)
	assert.Equal(t, int64(2), planner.calls)
	assert.Equal(t, int64(1), planner.errors)
	assert.Equal(t, int64(2), planner.sessions)
	assert.Equal(t, semconv.ImpactRiskHigh, planner.risk)
	writer := readImpact(t, recs[2])
	assert.Equal(t, "writer", writer.agent)
}

// persisting is a processor that writes every second, holding one call.
func persisting(t *testing.T) (*countingStorage, *storagetest.Host, *harness) {
	store, host := newFileStorage(t, t.TempDir(), nil)
	cfg := storageConfig()
	cfg.PersistInterval = time.Second
	h := newHarness(t, cfg, withHost(host))
	h.sendSpans(callsOf(call{agent: "a", server: srv, tool: "search", session: "s", at: t0}))
	return store, host, h
}

func TestPeriodicPersistence(t *testing.T) {
	store, _, h := persisting(t)
	require.Eventually(t, func() bool { return store.batches.Load() >= 2 }, 30*time.Second, 50*time.Millisecond,
		"written every persist_interval, not only on shutdown")
	h.stop()
	assert.Equal(t, int32(1), store.closed.Load())
}

func TestRestoreDropsWhatLeftTheWindow(t *testing.T) {
	dir := t.TempDir()
	clock := newClock()
	_, host := newFileStorage(t, dir, nil)
	before := newHarness(t, storageConfig(), withHost(host), withClock(clock))
	before.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	before.sendSpans(callsOf(call{agent: "planner", server: srv, url: srvURL, tool: "search", session: "s1", digest: "d1", at: t0}))
	before.stop()

	clock.Advance(25 * time.Hour)
	_, host = newFileStorage(t, dir, nil)
	after := newHarness(t, storageConfig(), withHost(host), withClock(clock))
	recs := after.sendLogs(driftLogs(searchDrift(clock.Now())))
	assert.True(t, readImpact(t, recs[1]).noCallers)
}

func TestDamagedStoreStartsEmpty(t *testing.T) {
	dir := t.TempDir()
	store, host := newFileStorage(t, dir, nil)
	client, err := store.Extension.GetClient(context.Background(), component.KindProcessor, component.NewID(metadata.Type), "")
	require.NoError(t, err)
	require.NoError(t, client.Set(context.Background(), keyMeta, []byte(`{"version":1,"chunks":1,"bytes":5}`)))
	require.NoError(t, client.Set(context.Background(), chunkKey(0), []byte("MCPI9")))
	require.NoError(t, client.Close(context.Background()))

	h := newHarness(t, storageConfig(), withHost(host))
	recs := h.sendLogs(driftLogs(searchDrift(t0)))
	assert.Len(t, recs, 3, "started empty: every changed tool has no callers")
}

func TestEncodingRoundTrip(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	st := newState(cfg)
	fillIndex(st, 5000, 3, 7, 4, t0)
	raw := encodeIndex(st.index)

	back := newState(cfg)
	n, err := decodeIndex(raw, back.index, unixSec(t0.Add(-cfg.Window).UnixNano()))
	require.NoError(t, err)
	assert.Equal(t, 5000, n)
	assert.Equal(t, st.index.size, back.index.size)
	assert.Equal(t, encodeIndex(st.index), encodeIndex(back.index), "the same entries, in the same order")

	for cut := 0; cut < len(raw); cut += 997 {
		_, err := decodeIndex(raw[:cut], newState(cfg).index, 0)
		assert.ErrorIs(t, err, errCorrupt, "truncated at %d", cut)
	}
}

func FuzzDecodeIndex(f *testing.F) {
	st := newState(createDefaultConfig().(*Config))
	fillIndex(st, 20, 2, 2, 2, t0)
	f.Add(encodeIndex(st.index))
	f.Add([]byte(indexMagic))
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg := createDefaultConfig().(*Config)
		cfg.MaxIndexEntries = 50
		ix := newIndex(cfg.MaxIndexEntries)
		_, _ = decodeIndex(raw, ix, 0)
		if ix.size > cfg.MaxIndexEntries {
			t.Fatalf("index holds %d entries, bound is %d", ix.size, cfg.MaxIndexEntries)
		}
	})
}

// TestDamagedStorageFileRunsInMemory: a file_storage file that bbolt cannot
// open (random bytes) or that makes it panic (damaged pages) used to fail
// the processor's start, and with it the Collector, recreate or not. Now
// the processor starts with an empty index that works in memory, logs the
// file and the remedy, and says so in its status and the storage gauge;
// with recreate the file is moved aside and the index persists again.
func TestDamagedStorageFileRunsInMemory(t *testing.T) {
	for damage, how := range storagetest.Damages {
		for _, recreate := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/recreate=%v", damage, recreate), func(t *testing.T) {
				dir := t.TempDir()
				_, host := newFileStorage(t, dir, nil)
				before := newHarness(t, storageConfig(), withHost(host))
				before.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
				before.sendSpans(callsOf(call{agent: "planner", server: srv, url: srvURL, tool: "search", session: "s1", digest: "d1", at: t0}))
				before.stop()
				path := filepath.Join(dir, "processor_mcpimpact_")
				storagetest.Damage(t, path, how)

				// The extension itself, as the Collector hands it over (not counted).
				host = storagetest.FileStorageHost(t, storageID, dir, recreate)
				core, logs := observer.New(zapcore.InfoLevel)
				h := newHarness(t, storageConfig(), withHost(host), withLogger(zap.New(core)))

				// Empty, and working in memory.
				recs := h.sendLogs(driftLogs(searchDrift(t0)))
				require.Len(t, recs, 3)
				assert.True(t, readImpact(t, recs[1]).noCallers, "the damaged index is not read")
				h.sendSpans(callsOf(call{agent: "writer", server: srv, url: srvURL, tool: "search", session: "s2", digest: "d1", at: t0}))
				recs = h.sendLogs(driftLogs(searchDrift(t0.Add(time.Minute))))
				assert.Equal(t, "writer", readImpact(t, recs[1]).agent, "calls are indexed in memory")

				available := int64(1)
				if !recreate {
					available = 0
					errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
					if assert.Len(t, errs, 1) {
						assert.Equal(t, path, errs[0].ContextMap()["file"])
						assert.Contains(t, errs[0].ContextMap()["remedy"], "delete "+path)
					}
					if ev := host.Last(); assert.NotNil(t, ev) {
						assert.Equal(t, componentstatus.StatusPermanentError, ev.Status())
					}
				} else {
					backups, _ := filepath.Glob(path + ".*.backup")
					assert.Len(t, backups, 1)
				}
				metadatatest.AssertEqualProcessorMcpimpactStorageAvailable(t, h.tel, []metricdata.DataPoint[int64]{{Value: available}}, metricdatatest.IgnoreTimestamp())
			})
		}
	}
}

// TestFailingWritesAreReported: a write that fails keeps the index in
// memory, is reported as a recoverable error, and the next write that
// succeeds reports recovery.
func TestFailingWritesAreReported(t *testing.T) {
	store, host, h := persisting(t)
	store.fail.Store(true)
	require.Eventually(t, func() bool {
		ev := host.Last()
		return ev != nil && ev.Status() == componentstatus.StatusRecoverableError
	}, 30*time.Second, 20*time.Millisecond, "a failing write is reported")
	metadatatest.AssertEqualProcessorMcpimpactStorageAvailable(t, h.tel, []metricdata.DataPoint[int64]{{Value: 0}}, metricdatatest.IgnoreTimestamp())
	store.fail.Store(false)
	require.Eventually(t, func() bool {
		ev := host.Last()
		return ev != nil && ev.Status() == componentstatus.StatusOK
	}, 30*time.Second, 20*time.Millisecond, "recovery is reported")
	assert.Equal(t, 1, entriesGauge(t, h), "the index survived the failed writes")
}
