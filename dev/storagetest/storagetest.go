// Package storagetest gives tests the real contrib file_storage extension,
// ways to damage its files as disks and crashes do, and a host that records
// the component status reported to it.
package storagetest

import (
	"context"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
)

// FileStorage starts a file_storage extension on dir; tweak (may be nil)
// adjusts its configuration (recreate, ...). It is shut down with the test.
func FileStorage(tb testing.TB, dir string, tweak func(*filestorage.Config)) extension.Extension {
	tb.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory, cfg.Compaction.Directory = dir, dir
	if tweak != nil {
		tweak(cfg)
	}
	return Extension(tb, f, cfg)
}

// Extension creates and starts an extension of factory f with cfg; it is
// shut down with the test.
func Extension(tb testing.TB, f extension.Factory, cfg component.Config) extension.Extension {
	tb.Helper()
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = ext.Shutdown(context.Background()) })
	return ext
}

// FileStorageHost is a host holding one file_storage extension on dir under
// id, with recreate set as asked: what the receiver's and the processor's
// storage tests start from.
func FileStorageHost(tb testing.TB, id component.ID, dir string, recreate bool) *Host {
	tb.Helper()
	var tweak func(*filestorage.Config)
	if recreate {
		tweak = Recreate
	}
	return NewHost(map[component.ID]component.Component{id: FileStorage(tb, dir, tweak)})
}

// Recreate sets file_storage's recreate.
func Recreate(cfg *filestorage.Config) { cfg.Recreate = true }

// Damages are ways a file_storage file gets damaged that stopped the
// Collector: bbolt refuses random bytes ("invalid database"; file_storage's
// recreate does not act on that), and panics in a goroutine of its own on
// damaged pages behind intact meta pages.
var Damages = map[string]func(b []byte){
	"random bytes":  func(b []byte) { fill(b) },
	"damaged pages": func(b []byte) { fill(b[min(len(b), 2*os.Getpagesize()):]) },
}

// fill writes the same pseudo-random bytes on every run.
func fill(b []byte) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}

// Damage damages the file at path in place.
func Damage(tb testing.TB, path string, how func([]byte)) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	how(b)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// Host is a component host with the given extensions that records the
// component status reported to it.
type Host struct {
	component.Host
	Extensions map[component.ID]component.Component

	mu       sync.Mutex
	statuses []*componentstatus.Event
}

// NewHost returns a host with exts (nil: none).
func NewHost(exts map[component.ID]component.Component) *Host {
	return &Host{Host: componenttest.NewNopHost(), Extensions: exts}
}

func (h *Host) GetExtensions() map[component.ID]component.Component { return h.Extensions }

// Report implements componentstatus.Reporter.
func (h *Host) Report(ev *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.statuses = append(h.statuses, ev)
}

// Statuses returns the statuses reported so far.
func (h *Host) Statuses() []*componentstatus.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*componentstatus.Event(nil), h.statuses...)
}

// Last returns the last status reported, nil when none was.
func (h *Host) Last() *componentstatus.Event {
	s := h.Statuses()
	if len(s) == 0 {
		return nil
	}
	return s[len(s)-1]
}
