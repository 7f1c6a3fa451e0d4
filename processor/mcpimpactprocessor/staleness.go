package mcpimpactprocessor

import (
	"slices"

	"github.com/mcpdrift/mcpdrift/semconv"
)

// staleness is the verdict on one call (DESIGN.md "Staleness"): current,
// stale, ahead (a digest no probe has shown yet, and no probe has run since
// the call) or unknown (nothing decides). Spans without a digest, and spans
// of unknown servers, are not judged.
type staleness uint8

const (
	unjudged staleness = iota
	judgedCurrent
	judgedStale
	judgedAhead
	judgedUnknown
)

func (s staleness) String() string {
	switch s {
	case judgedCurrent:
		return semconv.StalenessCurrent
	case judgedStale:
		return semconv.StalenessStale
	case judgedAhead:
		return semconv.StalenessAhead
	case judgedUnknown:
		return semconv.StalenessUnknown
	}
	return ""
}

// digestEvidence is what the processor knows about one tool of one server:
// the confirmed definitions over time (from snapshot and drift events), a
// digest a prompt probe has seen served but no drift has confirmed yet, and
// when the server was last observed at all.
type digestEvidence struct {
	history     []version
	provisional string // seen by a prompt probe, not confirmed; "" when none
	observed    int64  // unix nanoseconds of the latest observation of the server
}

// judgeDigest is the digest-level judgement: is digest d, used by a call at
// time at, the definition the server served then?
//
//   - d was in effect at the call: current;
//   - d was adopted later (the host re-listed before the probe noticed), or a
//     prompt probe has seen it served: current;
//   - d was superseded before the call and not served again: stale;
//   - d was superseded and later served again (the server changed back):
//     the digest cannot tell which one the call was planned on: unknown;
//   - d was never seen: ahead while no observation of the server is as
//     recent as the call (a prompt probe will tell), else unknown. A digest
//     nobody has seen is never stale.
//
// It also returns the digest in effect at the call ("" when the tool was not
// offered). This is the one place the processor decides; the shared
// judgement of the gate and the guard decides the same cases.
func judgeDigest(ev *digestEvidence, at int64, d string) (staleness, string) {
	h := ev.history
	i := -1
	if len(h) > 0 {
		i, _ = slices.BinarySearchFunc(h, at, func(v version, t int64) int {
			if v.since <= t {
				return -1
			}
			return 1
		})
		i = max(i-1, 0) // before the first known version, assume it held
	}
	current := ""
	if i >= 0 {
		current = h[i].digest
	}
	if d == "" {
		return unjudged, current
	}
	if current != "" && d == current {
		return judgedCurrent, current
	}
	later := d == ev.provisional
	earlier := false
	if i >= 0 {
		for _, v := range h[i+1:] {
			later = later || v.digest == d
		}
		for _, v := range h[:i] {
			earlier = earlier || v.digest == d
		}
	}
	switch {
	case later && earlier:
		return judgedUnknown, current
	case later:
		return judgedCurrent, current
	case earlier:
		return judgedStale, current
	case ev.observed >= at:
		return judgedUnknown, current
	}
	return judgedAhead, current
}
