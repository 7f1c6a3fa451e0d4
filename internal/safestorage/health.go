// Package safestorage opens a component's client of a storage extension so
// that a store that cannot be opened or written never stops the Collector:
// the component runs on in-memory state instead and says so in its log (with
// the file and the remedy), in its component status and in a gauge.
package safestorage

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

type state int

const (
	notConfigured state = iota
	inUse               // opened, and the last write (if any) succeeded
	failing             // opened, but the last write failed
	unavailable         // could not be opened: memory only until restart
)

// Health tracks a component's store. Use one per component instance.
type Health struct {
	logger *zap.Logger
	// memoryOnly says what running without the store means for the
	// component, for the log ("baselines are kept in memory ...").
	memoryOnly string

	mu    sync.Mutex
	host  component.Host
	state state
}

// NewHealth returns the health of a component's store; memoryOnly says
// what running without it means.
func NewHealth(logger *zap.Logger, memoryOnly string) *Health {
	return &Health{logger: logger, memoryOnly: memoryOnly}
}

// Open returns the component's client of the storage extension ext, or nil
// when the store cannot be used: then the component keeps its state in
// memory, and Open has logged why (with the file and the remedy), reported
// a permanent error status and set the gauge to 0. The error is for
// configuration mistakes only (no such extension, not a storage extension).
func (h *Health) Open(ctx context.Context, host component.Host, ext component.ID, kind component.Kind, self component.ID) (storage.Client, error) {
	h.mu.Lock()
	h.host = host
	h.mu.Unlock()
	e, ok := host.GetExtensions()[ext]
	if !ok {
		return nil, fmt.Errorf("storage extension %q not found", ext)
	}
	se, ok := e.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("extension %q is not a storage extension", ext)
	}
	file := locateFile(e, kind, self)
	if err := file.prepare(h.logger); err != nil {
		h.unavailable(&UnavailableError{Extension: ext, File: file.path, Err: err})
		return nil, nil
	}
	client, err := getClient(ctx, se, kind, self)
	if err != nil {
		h.unavailable(&UnavailableError{Extension: ext, File: file.path, Err: err})
		return nil, nil
	}
	h.set(inUse, nil)
	return client, nil
}

// getClient gets the client, turning a panic of the storage library (bbolt
// panics on some damaged files) into an error.
func getClient(ctx context.Context, se storage.Extension, kind component.Kind, self component.ID) (c storage.Client, err error) {
	defer recoverAs(&err)
	c, err = se.GetClient(ctx, kind, self, "")
	if err != nil {
		return nil, err
	}
	return &safeClient{c}, nil
}

// UnavailableError says which store could not be opened, and why.
type UnavailableError struct {
	Extension component.ID
	File      string // the file_storage file; "" for other extensions
	Err       error
}

func (e *UnavailableError) Error() string {
	if e.File != "" {
		return fmt.Sprintf("storage %q cannot open %s: %v", e.Extension, e.File, e.Err)
	}
	return fmt.Sprintf("storage %q cannot be opened: %v", e.Extension, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Remedy says what the user can do about it.
func (e *UnavailableError) Remedy() string {
	if e.File != "" {
		return "stop the Collector and move or delete " + e.File +
			" (an empty one is created at the next start), or set `recreate: true` on the file_storage extension to have the damaged file moved aside at start"
	}
	return fmt.Sprintf("check the storage extension %q; the component writes to it again after a restart", e.Extension)
}

func (h *Health) unavailable(err *UnavailableError) {
	h.logger.Error("Storage cannot be used; running on in-memory state: "+h.memoryOnly,
		zap.String("storage", err.Extension.String()), zap.String("file", err.File),
		zap.Error(err.Err), zap.String("remedy", err.Remedy()))
	h.set(unavailable, componentstatus.NewPermanentErrorEvent(err))
}

// Wrote records the outcome of a write: the first failure is logged and
// reported as a recoverable error, the first success after failures as OK.
// State stays in memory either way; the next write stores it.
func (h *Health) Wrote(err error) {
	switch {
	case err != nil && h.from(inUse, failing):
		h.logger.Warn("Writing to storage failed; state is kept in memory and written again on the next change or persist", zap.Error(err))
		h.report(componentstatus.NewRecoverableErrorEvent(fmt.Errorf("writing to storage: %w", err)))
	case err == nil && h.from(failing, inUse):
		h.logger.Info("Writing to storage works again")
		h.report(componentstatus.NewEvent(componentstatus.StatusOK))
	}
}

// from moves the store from state old to s; false when it was not in old.
func (h *Health) from(old, s state) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state != old {
		return false
	}
	h.state = s
	return true
}

func (h *Health) set(s state, ev *componentstatus.Event) {
	h.mu.Lock()
	h.state = s
	h.mu.Unlock()
	if ev != nil {
		h.report(ev)
	}
}

func (h *Health) report(ev *componentstatus.Event) {
	h.mu.Lock()
	host := h.host
	h.mu.Unlock()
	if host != nil {
		componentstatus.ReportStatus(host, ev)
	}
}

// Available is the gauge: 1 while the store keeps the component's state, 0
// while it runs on in-memory state (the store could not be opened, or the
// last write failed); ok is false when no store is configured.
func (h *Health) Available() (v int64, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch h.state {
	case inUse:
		return 1, true
	case failing, unavailable:
		return 0, true
	}
	return 0, false
}

// recoverAs turns a panic into *err.
func recoverAs(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("panic: %v", r)
	}
}
