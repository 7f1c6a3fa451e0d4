package staleness

import (
	"slices"
	"time"
)

// Version is one run of a tool's definition on the server, as a judge that
// watches the server (the processor, from probes) saw it: the digest served
// ("" when the server did not offer the tool), from the first observation
// of the run to the last one before another run began. A server that
// changed back (v1 → v2 → v1) has a run for each.
type Version struct {
	Digest string
	First  time.Time
	// Last is the run's last observation; zero when the judge keeps only
	// when runs began (a run then lasts until the next begins).
	Last time.Time
}

// History is one tool's versions on one server, oldest first (by First).
type History []Version

// JudgeDigest is the digest-level judgement: a call made at time at by a
// session that was served the definition with digest planned, against the
// server's history of the tool.
//
//   - The run in effect at the call is the latest to begin at or before it.
//     The newest run is taken to last until an observation says otherwise.
//   - In effect (at is within the run's observations, or the run has no
//     Last, or it is the newest): planned equal to it is current; planned
//     equal to an older run is stale (also when the server served it again
//     later, if the run was observed at or after the call); planned equal
//     only to a later run is current when the run has no observation after
//     the call (the session was served it, so the server had changed); a
//     digest the judge never saw is ahead when the run is the newest (the
//     server changed since its last observation), otherwise unknown.
//   - Between the last observation of one run and the first of the next (the
//     change's window): planned equal to the next run is current (the
//     session was served it, so the server had changed by then) unless the
//     server also served that digest before; equal to the run before the
//     window is unknown (the change may have come after the call); equal to
//     an older run is stale.
//   - Before the first observation: the first run is assumed to have held,
//     so planned equal to it is current; anything else is unknown.
//
// An empty planned digest (the client had none) is unknown; an empty
// history (the judge never saw the tool) is ahead.
func JudgeDigest(planned string, h History, at time.Time) Verdict {
	if planned == "" {
		return unknown("", "")
	}
	if len(h) == 0 {
		return Verdict{State: Ahead, Basis: BasisDigest, Planned: planned}
	}
	if !slices.IsSortedFunc(h, byFirst) {
		h = slices.Clone(h)
		slices.SortStableFunc(h, byFirst)
	}
	i := lastBeginning(h, at)
	if i < 0 {
		if planned == h[0].Digest {
			return digestVerdict(Current, planned, h[0].Digest)
		}
		return unknown(planned, "")
	}
	r := h[i]
	older, later := seen(h[:i], planned), seen(h[i+1:], planned)
	newest := i == len(h)-1
	if newest || r.Last.IsZero() || !at.After(r.Last) {
		// certain: the judge saw r served at or after the call.
		certain := !r.Last.IsZero() && !at.After(r.Last)
		switch {
		case planned == r.Digest:
			return digestVerdict(Current, planned, r.Digest)
		case older && (certain || !later):
			return digestVerdict(Stale, planned, r.Digest)
		case later && !older && !certain:
			// Served to the session, so the server had changed by the
			// call: the judge saw the change late.
			return digestVerdict(Current, planned, planned)
		case !older && !later && newest:
			return Verdict{State: Ahead, Basis: BasisDigest, Planned: planned, Current: r.Digest}
		}
		return unknown(planned, r.Digest)
	}
	// The change's window: after r's last observation, before the next run's first.
	next := h[i+1]
	switch {
	case planned == next.Digest && !older && planned != r.Digest:
		return digestVerdict(Current, planned, next.Digest)
	case planned == r.Digest:
		return unknown(planned, "")
	case older && planned != next.Digest:
		return digestVerdict(Stale, planned, "")
	}
	return unknown(planned, "")
}

func digestVerdict(s State, planned, current string) Verdict {
	return Verdict{State: s, Basis: BasisDigest, Planned: planned, Current: current}
}

func byFirst(a, b Version) int { return a.First.Compare(b.First) }

// lastBeginning is the index of the latest run that began at or before at,
// or -1.
func lastBeginning(h History, at time.Time) int {
	i, _ := slices.BinarySearchFunc(h, at, func(v Version, t time.Time) int {
		if v.First.After(t) {
			return 1
		}
		return -1
	})
	return i - 1
}

func seen(h History, digest string) bool {
	for _, v := range h {
		if v.Digest == digest {
			return true
		}
	}
	return false
}
