package safestorage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpdrift/mcpdrift/dev/storagetest"
)

var (
	storageID = component.MustNewID("file_storage")
	self      = component.MustNewIDWithName("mcpdrift", "test")
)

func fileStorage(t *testing.T, dir string, recreate bool) *storagetest.Host {
	t.Helper()
	return storagetest.FileStorageHost(t, storageID, dir, recreate)
}

// storedFile fills the component's store with 50 values of 20 KB (so the
// file has many pages) and returns the file's path.
func storedFile(t *testing.T, dir string) string {
	t.Helper()
	h := fileStorage(t, dir, false)
	c, err := h.Extensions[storageID].(storage.Extension).GetClient(context.Background(), component.KindReceiver, self, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := c.Set(context.Background(), strings.Repeat("k", i+1), make([]byte, 20000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "receiver_mcpdrift_test")
}

// TestDamagedFile: Open on a damaged file returns no client and reports
// it (file, remedy, status, gauge) without recreate, and moves the file
// aside and opens a fresh store with recreate.
func TestDamagedFile(t *testing.T) {
	for name, how := range storagetest.Damages {
		for _, recreate := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/recreate=%v", name, recreate), func(t *testing.T) {
				dir := t.TempDir()
				path := storedFile(t, dir)
				storagetest.Damage(t, path, how)
				before, _ := os.ReadFile(path)

				core, logs := observer.New(zapcore.InfoLevel)
				h := fileStorage(t, dir, recreate)
				health := NewHealth(zap.New(core), "baselines are kept in memory")
				client, err := health.Open(context.Background(), h, storageID, component.KindReceiver, self)
				if err != nil {
					t.Fatal(err)
				}
				if recreate {
					assertRecreated(t, client, path, logs)
				} else {
					assertReported(t, client, path, logs, h)
					if after, _ := os.ReadFile(path); string(after) != string(before) {
						t.Error("the damaged file was changed without recreate")
					}
				}
				if v, ok := health.Available(); v != map[bool]int64{false: 0, true: 1}[recreate] || !ok {
					t.Errorf("available = %d, %v with recreate %v", v, ok, recreate)
				}
			})
		}
	}
}

func assertReported(t *testing.T, client storage.Client, path string, logs *observer.ObservedLogs, h *storagetest.Host) {
	t.Helper()
	if client != nil {
		t.Fatal("a client for a damaged file")
	}
	errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	if len(errs) != 1 || errs[0].ContextMap()["file"] != path || !strings.Contains(errs[0].ContextMap()["remedy"].(string), "delete "+path) {
		t.Errorf("want one error naming %s and the remedy, got %v", path, logs.All())
	}
	if ev := h.Last(); ev == nil || ev.Status() != componentstatus.StatusPermanentError || !strings.Contains(ev.Err().Error(), path) {
		t.Errorf("status %v, want a permanent error naming the file", ev)
	}
}

func assertRecreated(t *testing.T, client storage.Client, path string, logs *observer.ObservedLogs) {
	t.Helper()
	if client == nil {
		t.Fatal("no fresh store")
	}
	defer client.Close(context.Background())
	if err := client.Set(context.Background(), "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, _ := client.Get(context.Background(), "k"); string(v) != "v" {
		t.Errorf("read back %q", v)
	}
	backups, _ := filepath.Glob(path + ".*.backup")
	moved := logs.FilterMessageSnippet("moved aside").All()
	if len(backups) != 1 || len(moved) != 1 || moved[0].ContextMap()["backup"] != backups[0] {
		t.Errorf("backups %v, logs %v", backups, logs.All())
	}
}

func TestIntactFileOpens(t *testing.T) {
	dir := t.TempDir()
	storedFile(t, dir)
	h := fileStorage(t, dir, false)
	health := NewHealth(zap.NewNop(), "")
	client, err := health.Open(context.Background(), h, storageID, component.KindReceiver, self)
	if err != nil || client == nil {
		t.Fatalf("Open = %v, %v", client, err)
	}
	defer client.Close(context.Background())
	if v, err := client.Get(context.Background(), "kk"); len(v) != 20000 || err != nil {
		t.Errorf("stored value: %d bytes, %v", len(v), err)
	}
}

// TestLocateFile: the path is the one file_storage uses, escapes included.
func TestLocateFile(t *testing.T) {
	dir := t.TempDir()
	h := fileStorage(t, dir, true)
	id := component.MustNewIDWithName("mcpimpact", "a b")
	c, err := h.Extensions[storageID].(storage.Extension).GetClient(context.Background(), component.KindProcessor, id, "")
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close(context.Background())
	f := locateFile(h.Extensions[storageID], component.KindProcessor, id)
	if want := filepath.Join(dir, "processor_mcpimpact_a~0020b"); f.path != want || !f.recreate {
		t.Fatalf("located %+v, want %s with recreate", f, want)
	}
	if _, err := os.Stat(f.path); err != nil {
		t.Fatal(err)
	}
	if f := locateFile(nil, component.KindProcessor, id); f.path != "" {
		t.Errorf("no extension, but located %q", f.path)
	}
}

func TestMisconfigurationIsAnError(t *testing.T) {
	notStorage := struct {
		component.StartFunc
		component.ShutdownFunc
	}{}
	h := storagetest.NewHost(map[component.ID]component.Component{storageID: notStorage})
	health := NewHealth(zap.NewNop(), "")
	if _, err := health.Open(context.Background(), h, component.MustNewID("missing"), component.KindReceiver, self); err == nil {
		t.Error("a missing extension must fail start")
	}
	if _, err := health.Open(context.Background(), h, storageID, component.KindReceiver, self); err == nil {
		t.Error("an extension that is not a storage extension must fail start")
	}
}

// failingClient fails or panics on every call.
type failingClient struct {
	storage.Client
	panics bool
}

func (c *failingClient) Set(context.Context, string, []byte) error {
	if c.panics {
		panic("page 7 is not a leaf")
	}
	return errors.New("disk full")
}

func TestWriteFailuresAreReportedOnChange(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	h := storagetest.NewHost(nil)
	health := NewHealth(zap.New(core), "")
	health.host, health.state = h, inUse

	for _, panics := range []bool{false, true} {
		c := &safeClient{&failingClient{panics: panics}}
		health.Wrote(c.Set(context.Background(), "k", nil))
	}
	if v, _ := health.Available(); v != 0 || len(logs.FilterLevelExact(zapcore.WarnLevel).All()) != 1 || h.Last().Status() != componentstatus.StatusRecoverableError {
		t.Errorf("after two failures: available %d, logs %v, status %v; want 0, one warning, a recoverable error", v, logs.All(), h.Last().Status())
	}
	health.Wrote(nil)
	health.Wrote(nil)
	if v, _ := health.Available(); v != 1 || len(h.Statuses()) != 2 || h.Last().Status() != componentstatus.StatusOK {
		t.Errorf("after recovery: available %d, statuses %d, last %v; want 1, 2, OK", v, len(h.Statuses()), h.Last().Status())
	}
}

func TestPanicsBecomeErrors(t *testing.T) {
	c := &safeClient{&failingClient{panics: true}}
	if err := c.Set(context.Background(), "k", nil); err == nil || !strings.Contains(err.Error(), "page 7") {
		t.Errorf("got %v", err)
	}
}
