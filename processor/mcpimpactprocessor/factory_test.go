package mcpimpactprocessor

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/mcpdrift/mcpdrift/dev/storagetest"
)

var storageID = component.MustNewIDWithName("file_storage", "mcpimpact")

// countingStorage wraps the real file storage extension and counts the
// clients the processor opens and closes.
type countingStorage struct {
	storage.Extension
	opened, closed, batches atomic.Int32
	fail                    atomic.Bool // batches fail while set
}

func (c *countingStorage) GetClient(ctx context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	c.opened.Add(1)
	cl, err := c.Extension.GetClient(ctx, kind, id, name)
	if err != nil {
		return nil, err
	}
	return &countingClient{Client: cl, closed: &c.closed, batches: &c.batches, fail: &c.fail}, nil
}

type countingClient struct {
	storage.Client
	closed, batches *atomic.Int32
	fail            *atomic.Bool
}

func (c *countingClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	c.batches.Add(1)
	if c.fail.Load() {
		return errors.New("no space left on device")
	}
	return c.Client.Batch(ctx, ops...)
}

func (c *countingClient) Close(ctx context.Context) error {
	c.closed.Add(1)
	return c.Client.Close(ctx)
}

// newFileStorage starts the contrib file storage extension on dir; tweak
// (may be nil) adjusts its configuration.
func newFileStorage(t *testing.T, dir string, tweak func(*filestorage.Config)) (*countingStorage, *storagetest.Host) {
	t.Helper()
	cs := &countingStorage{Extension: storagetest.FileStorage(t, dir, tweak).(storage.Extension)}
	return cs, storagetest.NewHost(map[component.ID]component.Component{storageID: cs})
}

func storageConfig() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Storage = &storageID
	return cfg
}

func TestOneInstanceForBothPipelines(t *testing.T) {
	store, host := newFileStorage(t, t.TempDir(), nil)
	h := newHarness(t, storageConfig(), withHost(host))
	assert.Equal(t, 1, h.factory.instances.Len())
	// Both pipelines started the one instance once: one storage client.
	assert.Equal(t, int32(1), store.opened.Load())

	// State is shared: a snapshot on the logs path judges spans on the
	// traces path.
	h.sendLogs(snapshotLogs(supersededSnapshot(t0.Add(-2*time.Hour), map[string]string{"search": "old"})))
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	out := h.sendSpans(callsOf(call{agent: "a", server: srv, url: srvURL, tool: "search", session: "s", digest: "old", at: t0}))
	_, stale, judged := spanVerdict(onlySpan(t, out))
	assert.True(t, judged)
	assert.True(t, stale)

	h.stop()
	assert.Equal(t, int32(1), store.opened.Load())
	assert.Equal(t, int32(1), store.closed.Load(), "shut down once, however many pipelines")
	assert.Zero(t, h.factory.instances.Len())
}

func TestFactoryKeepsOneInstancePerID(t *testing.T) {
	shared := newFactory(newClock().Now)
	f := shared.processorFactory()
	cfg := f.CreateDefaultConfig()
	set := processortest.NewNopSettings(f.Type())
	ctx := context.Background()

	tr, err := f.CreateTraces(ctx, set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	lg, err := f.CreateLogs(ctx, set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	other := set
	other.ID = component.MustNewIDWithName("mcpimpact", "second")
	tr2, err := f.CreateTraces(ctx, other, cfg, consumertest.NewNop())
	require.NoError(t, err)

	assert.Equal(t, 2, shared.instances.Len(), "one instance per component ID")

	host := componenttest.NewNopHost()
	for _, c := range []component.Component{tr, lg, tr2} {
		require.NoError(t, c.Start(ctx, host))
	}
	for _, c := range []component.Component{tr, lg, tr2} {
		require.NoError(t, c.Shutdown(ctx))
	}
	assert.Zero(t, shared.instances.Len(), "shut down instances are forgotten, so a reload starts afresh")
}

func TestStartFailsWithoutTheStorageExtension(t *testing.T) {
	f := NewFactory()
	set := processortest.NewNopSettings(f.Type())
	tr, err := f.CreateTraces(context.Background(), set, storageConfig(), consumertest.NewNop())
	require.NoError(t, err)
	err = tr.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorContains(t, err, `storage extension "file_storage/mcpimpact" not found`)
	require.NoError(t, tr.Shutdown(context.Background()))
}
