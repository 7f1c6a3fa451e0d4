package mcpimpactprocessor

import (
	"slices"
)

// recovery says where the sessions a tool's change affected stand: those
// that called the tool before the change, or made a stale call after it.
// Sessions that first called after the change, with the current
// definition, needed no recovery and are not counted.
type recovery struct {
	recovered  int // called with the current definition after the change, and not stale since
	stillStale int // their latest call after the change was stale
	failed     int // called after the change, neither current nor stale, and some of that failed
	idle       int // have not called the tool since the change
	// seconds from the change to each recovered session's first call with
	// the current definition, ascending
	took []uint32
}

// add merges another agent's recovery into r.
func (r *recovery) add(o *recovery) {
	r.recovered += o.recovered
	r.stillStale += o.stillStale
	r.failed += o.failed
	r.idle += o.idle
	r.took = append(r.took, o.took...)
	slices.Sort(r.took)
}

// sessionCalls is what a session's entries say about its calls after the
// change.
type sessionCalls struct {
	session   uint32
	lastStale uint32 // latest stale call after the change
	firstNew  uint32 // first call with the current definition, at the change at the earliest
	lastNew   uint32 // latest call after the change with it, not stale
	failed    bool   // a call after the change failed
}

// afterChange gathers, during the drift-time scan of one (tool, agent),
// the sessions that called after the tool's change: scanGroup hands it
// every entry with a call at or after the change, so recovery costs no
// second pass over the entries. The scan marks the sessions that called
// before the change in scratch.before. Its memory is reused from query to
// query: slot, by session id, is 4 bytes per session, which a map costs
// several times over, in time as much as in space.
type afterChange struct {
	at            uint32 // the change, unix seconds
	newID, seenID uint32
	slot          []int32 // session id → 1 + its index in calls; 0: none yet
	calls         []sessionCalls
}

// reset readies a for a scan against w of an index whose session ids are
// below sessions.
func (a *afterChange) reset(w *window, sessions int) {
	a.at, a.newID, a.seenID = w.changeAt, w.newID, w.seenID
	for i := range a.calls {
		a.slot[a.calls[i].session] = 0
	}
	a.calls = a.calls[:0]
	if len(a.slot) < sessions {
		a.slot = make([]int32, max(sessions, 2*len(a.slot)))
	}
}

// note takes an entry of a session (not 0) whose last call is at or after
// the change. When its latest stale and failed calls were says which of
// its calls came after the change, whenever the index learned of it: an
// entry whose calls straddle the change counts on its side of the change
// only what came after.
func (a *afterChange) note(e *entry) {
	i := a.slot[e.session] - 1
	if i < 0 {
		i = int32(len(a.calls))
		a.slot[e.session] = i + 1
		a.calls = append(a.calls, sessionCalls{session: e.session})
	}
	s := &a.calls[i]
	at := a.at
	if t := e.lastStale(); t >= at {
		s.lastStale = max(s.lastStale, t)
	}
	if t := e.lastFresh(); t >= at && (e.digest == a.newID || e.digest == a.seenID) {
		// A session that used the current definition before the change was
		// seen (its client listed first) was on it at the change.
		first := max(e.first, at)
		if s.firstNew == 0 || first < s.firstNew {
			s.firstNew = first
		}
		s.lastNew = max(s.lastNew, t)
	}
	s.failed = s.failed || e.lastError() >= at
}

// classify turns the sessions noted into a recovery, but for the idle
// sessions (the scan's sessions that did not call after the change):
// before holds the sessions that called before the change.
func (a *afterChange) classify(before bitset) recovery {
	var r recovery
	for i := range a.calls {
		s := &a.calls[i]
		switch {
		case !before.has(s.session) && s.lastStale == 0:
			// started after the change on the current definition
		case s.lastNew > 0 && s.lastNew >= s.lastStale:
			r.recovered++
			r.took = append(r.took, s.firstNew-a.at)
		case s.lastStale > 0:
			r.stillStale++
		case s.failed:
			r.failed++
		}
	}
	slices.Sort(r.took)
	return r
}
