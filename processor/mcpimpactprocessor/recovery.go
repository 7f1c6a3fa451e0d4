package mcpimpactprocessor

import (
	"math/bits"
	"slices"
)

// recovery says where the sessions a tool's change affected stand: those
// that called the tool before the change, or made a stale call after it.
// Sessions that first called after the change, with the current
// definition, needed no recovery and are not counted.
type recovery struct {
	recovered  int // called with the current definition after the change, and not stale since
	stillStale int // their latest call after the change was stale
	failed     int // called after the change, neither current nor stale, and some of it failed
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

// sessionCalls is what the entries after the change of a session that
// called after it say.
type sessionCalls struct {
	lastStale uint32 // latest entry with stale calls, after the change
	firstNew  uint32 // first call with the current definition after the change
	lastNew   uint32
	failed    bool // a failed call after the change
}

// recoveryOf classifies the sessions of one (tool, agent) against the
// tool's last change at w.changeAt. Entries hold aggregates, so an entry
// whose calls straddle the change counts as before and after it, and its
// time of recovery is taken at the change when its first call was before.
// Which sessions called before and after is kept in two bitsets (a query
// over 100,000 sessions costs no map of them); only sessions that called
// after the change get a record.
func (st *state) recoveryOf(buckets []uint32, w *window) recovery {
	ix, sc := st.index, &st.scratch
	at := w.changeAt
	lo, hi := len(sc.before), -1 // the words touched
	var after map[uint32]*sessionCalls
	for _, bid := range buckets {
		for i := range ix.buckets[bid].entries {
			e := &ix.buckets[bid].entries[i]
			if e.calls == 0 || e.session == 0 || e.last < max(w.cutoff, 1) {
				continue
			}
			word := int(e.session >> 6)
			lo, hi = min(lo, word), max(hi, word)
			if e.first < at {
				sc.before.mark(e.session)
			}
			if e.last < at {
				continue
			}
			sc.after.mark(e.session)
			if after == nil {
				after = map[uint32]*sessionCalls{}
			}
			s := after[e.session]
			if s == nil {
				s = &sessionCalls{}
				after[e.session] = s
			}
			if e.stale > 0 {
				s.lastStale = max(s.lastStale, e.last)
			}
			if e.digest == w.newID || e.digest == w.seenID {
				first := max(e.first, at)
				if s.firstNew == 0 || first < s.firstNew {
					s.firstNew = first
				}
				s.lastNew = max(s.lastNew, e.last)
			}
			s.failed = s.failed || e.errors > 0
		}
	}
	var r recovery
	for session, s := range after {
		switch {
		case !sc.before.has(session) && s.lastStale == 0:
			// started after the change on the current definition
		case s.lastNew > 0 && s.lastNew >= s.lastStale:
			r.recovered++
			r.took = append(r.took, s.firstNew-at)
		case s.lastStale > 0:
			r.stillStale++
		case s.failed:
			r.failed++
		}
	}
	for i := lo; i <= hi; i++ {
		r.idle += bits.OnesCount64(sc.before[i] &^ sc.after[i])
		sc.before[i], sc.after[i] = 0, 0
	}
	slices.Sort(r.took)
	return r
}
