package mcpimpactprocessor

import (
	"time"

	cstaleness "github.com/mcpdrift/mcpdrift/contract/staleness"
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

// judgeDigest is the digest-level judgement of a call at time at that was
// planned with digest d: contract/staleness's, the one the gate and the
// guard share (docs/mcpimpact.md, "What stale means"), over the tool's
// confirmed history, plus what only this processor knows:
//
//   - a digest a prompt probe has seen served is current, though no drift
//     has confirmed it yet (it supersedes nothing until one does: a probe
//     is one pick of what may be a fleet in a rolling deploy);
//   - a digest no probe has shown is ahead only while no observation of the
//     server is as recent as the call; after one, unknown.
//
// It also returns the digest in effect at the call ("" when the tool was
// not offered). A call without a digest is not judged.
func judgeDigest(ev *digestEvidence, at int64, d string) (staleness, string) {
	h := make(cstaleness.History, len(ev.history))
	for i, v := range ev.history {
		h[i] = cstaleness.Version{Digest: v.digest, First: time.Unix(0, v.since)}
	}
	v := cstaleness.JudgeDigest(d, h, time.Unix(0, at))
	current := v.Current
	if len(ev.history) > 0 && (v.State == cstaleness.Unknown || v.State == cstaleness.Ahead) {
		current = inEffect(ev.history, at)
	}
	switch {
	case d == "":
		return unjudged, current
	case d == ev.provisional:
		return judgedCurrent, current
	}
	switch v.State {
	case cstaleness.Current:
		return judgedCurrent, current
	case cstaleness.Stale:
		return judgedStale, current
	case cstaleness.Ahead:
		if ev.observed < at {
			return judgedAhead, current
		}
	}
	return judgedUnknown, current
}

// inEffect is the digest of the version in effect at time at (the first
// one before any is known).
func inEffect(h []version, at int64) string {
	return h[max(runAt(h, at), 0)].digest
}
