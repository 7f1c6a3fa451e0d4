package staleness

import (
	"sync"
	"time"
)

// Window is the opt-in guard for changes a call's arguments cannot reveal
// (a description, an annotation, an output schema, a default): the first
// call to a tool within D after the session was served a changed definition
// of it is refused once, telling the model to read the tool again; the next
// call passes. One per session. Safe for concurrent use; its zero value, and
// a nil one, refuse nothing.
type Window struct {
	d time.Duration

	mu  sync.Mutex
	due map[string]time.Time // tool -> when the session was served its change
}

// maxWindowTools bounds the tools a Window tracks at once.
const maxWindowTools = 4096

// NewWindow returns a window of d (0 or less: nil, which refuses nothing).
func NewWindow(d time.Duration) *Window {
	if d <= 0 {
		return nil
	}
	return &Window{d: d}
}

// Served records that the session was served, at at, a definition of tool
// other than the one it was served before.
func (w *Window) Served(tool string, at time.Time) {
	if w == nil || w.d <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.due == nil {
		w.due = map[string]time.Time{}
	}
	if len(w.due) >= maxWindowTools {
		for t, since := range w.due {
			if at.Sub(since) >= w.d {
				delete(w.due, t)
			}
		}
		if len(w.due) >= maxWindowTools {
			return
		}
	}
	w.due[tool] = at
}

// Take reports whether a call to tool at at is the first since the session
// was served its change, within D: then it is to be refused, and the next
// is not. Callers that refuse a call for another reason call Done instead.
func (w *Window) Take(tool string, at time.Time) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	since, ok := w.due[tool]
	if !ok {
		return false
	}
	delete(w.due, tool)
	return at.Sub(since) < w.d
}

// Done forgets a pending change of tool: the call was refused (or judged)
// on other evidence, so the model has already been told.
func (w *Window) Done(tool string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	delete(w.due, tool)
	w.mu.Unlock()
}
