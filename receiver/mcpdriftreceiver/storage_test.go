package mcpdriftreceiver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpdrift/mcpdrift/dev/storagetest"
	"github.com/mcpdrift/mcpdrift/receiver/mcpdriftreceiver/internal/metadatatest"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestReceiverRunsOnDamagedStorage: a file_storage file that bbolt cannot
// open (random bytes: "invalid database") or that makes it panic (damaged
// pages) used to fail the receiver's start, and with it the Collector, on
// every restart, recreate or not. Now the receiver starts, keeps baselines
// in memory (drift is still detected), logs the file and the remedy, and
// says so in its status and the storage gauge; with recreate the damaged
// file is moved aside and baselines persist again.
func TestReceiverRunsOnDamagedStorage(t *testing.T) {
	for damage, how := range storagetest.Damages {
		for _, recreate := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/recreate=%v", damage, recreate), func(t *testing.T) {
				testDamagedStorage(t, how, recreate)
			})
		}
	}
}

func testDamagedStorage(t *testing.T, how func([]byte), recreate bool) {
	dir := t.TempDir()
	cfg, p, _, b := storedServer(t)

	// A first run stores a baseline; then the file is damaged.
	host := newStorageHost(t, dir, nil)
	r, logs, _ := runReceiver(t, cfg, p, host)
	waitFor(t, "the first baseline", func() bool { return len(eventsNamed(logs, semconv.EventSnapshot)) == 1 })
	stop(t, r, host)
	path := filepath.Join(dir, "receiver_mcpdrift_test")
	storagetest.Damage(t, path, how)

	var tweak func(*filestorage.Config)
	if recreate {
		tweak = storagetest.Recreate
	}
	host = newStorageHost(t, dir, tweak)
	core, observed := observer.New(zapcore.InfoLevel)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	set := receiverSettings()
	set.Logger = zap.New(core)
	set.TelemetrySettings.MeterProvider = tel.NewTelemetrySettings().MeterProvider
	r, logs, _ = runReceiverWith(t, set, cfg, p, host)

	// Baselines work: a fresh one, then a drift when the server changes.
	waitFor(t, "a fresh baseline", func() bool { return len(eventsNamed(logs, semconv.EventSnapshot)) == 1 })
	p.set("srv", b, nil)
	waitFor(t, "the drift", func() bool { return len(eventsNamed(logs, semconv.EventDrift)) == 1 })

	available := int64(1)
	if !recreate {
		available = 0
		errs := observed.FilterLevelExact(zapcore.ErrorLevel).All()
		if len(errs) != 1 || errs[0].ContextMap()["file"] != path || !strings.Contains(fmt.Sprint(errs[0].ContextMap()["remedy"]), "delete "+path) {
			t.Errorf("want one error naming %s and the remedy, got %v", path, observed.All())
		}
		if ev := host.Last(); ev == nil || ev.Status() != componentstatus.StatusPermanentError {
			t.Errorf("status %v, want a permanent error", ev)
		}
	}
	metadatatest.AssertEqualReceiverMcpdriftStorageAvailable(t, tel, []metricdata.DataPoint[int64]{{Value: available}}, metricdatatest.IgnoreTimestamp())
	stop(t, r, host)

	// With recreate the new baseline was stored; without, the damaged file
	// is left for the user, untouched.
	backups, _ := filepath.Glob(path + ".*.backup")
	if recreate != (len(backups) == 1) {
		t.Errorf("backups %v with recreate %v", backups, recreate)
	}
	if recreate {
		client, err := newStorageHost(t, dir, nil).Extensions[storageID].(storage.Extension).GetClient(context.Background(), component.KindReceiver, set.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close(context.Background())
		st, err := (&baselineStore{client: client}).load(context.Background(), "srv")
		if err != nil || st == nil || st.baseline.Digests.Contract != b.Digests.Contract {
			t.Errorf("stored after recreate: %+v, %v; want the drifted contract", st, err)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
}

// stop shuts the receiver and the storage extension down, as the Collector does.
func stop(t *testing.T, r *driftReceiver, host *storageHost) {
	t.Helper()
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := host.Extensions[storageID].Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// flakyStorage is a storage extension whose writes fail while fail is set.
type flakyStorage struct {
	storage.Extension
	fail *atomic.Bool
}

func (f flakyStorage) GetClient(ctx context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	c, err := f.Extension.GetClient(ctx, kind, id, name)
	return flakyClient{c, f.fail}, err
}

type flakyClient struct {
	storage.Client
	fail *atomic.Bool
}

func (c flakyClient) Set(ctx context.Context, key string, value []byte) error {
	if c.fail.Load() {
		return errors.New("no space left on device")
	}
	return c.Client.Set(ctx, key, value)
}

// TestReceiverKeepsBaselinesWhenWritesFail: writes that fail mid-run lose
// nothing (drift is still detected against the in-memory baseline), are
// logged once and reported; once writes work again the unsaved baseline is
// stored after the target's next probe, unchanged or not, and recovery is
// reported.
func TestReceiverKeepsBaselinesWhenWritesFail(t *testing.T) {
	cfg, p, _, b := storedServer(t)
	c := snap(t, map[string]string{"search": "v3"})
	var fail atomic.Bool
	host := newStorageHost(t, t.TempDir(), nil)
	host.Extensions[storageID] = flakyStorage{host.Extensions[storageID].(storage.Extension), &fail}
	core, observed := observer.New(zapcore.InfoLevel)
	set := receiverSettings()
	set.Logger = zap.New(core)
	r, logs, _ := runReceiverWith(t, set, cfg, p, host)
	defer func() { _ = r.Shutdown(context.Background()) }()
	waitFor(t, "the baseline", func() bool { return len(eventsNamed(logs, semconv.EventSnapshot)) == 1 })

	fail.Store(true)
	p.set("srv", b, nil)
	waitFor(t, "a drift with the store failing", func() bool { return len(eventsNamed(logs, semconv.EventDrift)) == 1 })
	if ev := host.Last(); ev == nil || ev.Status() != componentstatus.StatusRecoverableError {
		t.Errorf("status %v, want a recoverable error", ev)
	}
	if v, _ := r.storage.Available(); v != 0 {
		t.Error("the storage gauge should be 0 while writes fail")
	}

	fail.Store(false)
	waitFor(t, "recovery", func() bool { ev := host.Last(); return ev != nil && ev.Status() == componentstatus.StatusOK })
	if st, err := r.store.load(context.Background(), "srv"); err != nil || st == nil || st.baseline.Digests.Contract != b.Digests.Contract {
		t.Errorf("stored %+v, %v; want the baseline whose save failed", st, err)
	}
	if n := observed.FilterMessageSnippet("Writing to storage failed").Len(); n != 1 {
		t.Errorf("%d warnings about failing writes, want 1", n)
	}
	p.set("srv", c, nil)
	waitFor(t, "a second drift", func() bool { return len(eventsNamed(logs, semconv.EventDrift)) == 2 })
	if d := eventsNamed(logs, semconv.EventDrift)[1]; attr(d, semconv.PreviousContract) != b.Digests.Contract {
		t.Errorf("second drift from %s, want from %s", attr(d, semconv.PreviousContract), b.Digests.Contract)
	}
}

func attr(rec plog.LogRecord, key string) string {
	v, _ := rec.Attributes().Get(key)
	return v.Str()
}
