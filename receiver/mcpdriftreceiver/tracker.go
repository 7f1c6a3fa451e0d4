package mcpdriftreceiver

import (
	"slices"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
)

// tracker is one target's drift state machine. It turns successful
// observations (snapshots) into events: the first observation becomes the
// baseline; a different contract becomes drift only after confirmAfter
// consecutive observations; contracts that alternate are a mixed fleet, not
// a drift per flip; fields that change on every probe are volatile and,
// once detected, masked out of the comparison. Failed probes never reach it:
// a failed probe is never drift.
//
// A tracker is used by one goroutine at a time (the scheduler never probes a
// target twice at once).
type tracker struct {
	cfg      trackerConfig
	classify func(old, new *contract.Snapshot) *contract.Report

	baseline    *contract.Snapshot
	baselineKey string

	candidate      *contract.Snapshot
	candidateKey   string
	candidateCount int
	heldCount      int // consecutive observations of the baseline

	window    []string // recent observation keys, oldest first
	variants  map[string]*variant
	mixedOpen bool

	// pinned mode: the drift repeated while the contract differs from the baseline
	openDrift *contract.Report

	volatile *volatileDetector
}

type trackerConfig struct {
	limits         contract.Limits
	confirmAfter   int
	pinned         bool
	volatileAfter  int
	ignoreVolatile bool
}

// variant is one contract seen while a fleet is mixed.
type variant struct {
	key         string
	count       int
	first, last time.Time
}

// windowSize is how many recent observations mixed-fleet detection looks at.
func (t *tracker) windowSize() int { return max(8, 4*t.cfg.confirmAfter) }

func newTracker(cfg trackerConfig, classify func(old, new *contract.Snapshot) *contract.Report) *tracker {
	return &tracker{
		cfg:      cfg,
		classify: classify,
		variants: map[string]*variant{},
		volatile: newVolatileDetector(cfg.volatileAfter),
	}
}

// eventKind says which event a tracker step produced.
type eventKind int

const (
	eventSnapshot eventKind = iota
	eventDrift
	eventMixedOpen
	eventMixedResolved
	eventVolatile
)

// event is what a tracker step asks the receiver to emit.
type event struct {
	kind     eventKind
	at       time.Time
	current  *contract.Snapshot // snapshot, drift (after), mixed resolved (winner)
	previous *contract.Snapshot // drift (before)
	report   *contract.Report   // drift
	variants []variant          // mixed
	field    fieldKey           // volatile
}

// step is the result of one observation.
type step struct {
	events []event
	// persist is set when the baseline or the volatile set changed.
	persist bool
}

// restore installs a stored baseline and volatile set (receiver start).
func (t *tracker) restore(baseline *contract.Snapshot, volatile []fieldKey) {
	for _, f := range volatile {
		t.volatile.known[f] = true
	}
	t.setBaseline(baseline)
}

func (t *tracker) setBaseline(s *contract.Snapshot) {
	t.baseline = s
	t.baselineKey = t.key(s)
}

// key is the identity of an observed contract: its contract digest, or, once
// volatile fields are known and ignored, the digest with them masked.
func (t *tracker) key(s *contract.Snapshot) string {
	if !t.cfg.ignoreVolatile || len(t.volatile.known) == 0 {
		return s.Digests.Contract
	}
	return t.masked(s).Digests.Contract
}

func (t *tracker) masked(s *contract.Snapshot) *contract.Snapshot {
	if !t.cfg.ignoreVolatile || len(t.volatile.known) == 0 {
		return s
	}
	return maskFields(s, t.volatile.known, t.cfg.limits)
}

// observe feeds one successful probe result to the tracker.
func (t *tracker) observe(s *contract.Snapshot, now time.Time) step {
	var st step
	if found := t.volatile.observe(s, t.classify); len(found) > 0 {
		for _, f := range found {
			st.events = append(st.events, event{kind: eventVolatile, at: now, current: s, field: f})
		}
		st.persist = true
		if t.baseline != nil {
			t.baselineKey = t.key(t.baseline)
		}
		t.rekeyCandidate()
	}
	key := t.key(s)
	t.remember(key, now)

	if t.baseline == nil {
		t.setBaseline(s)
		st.events = append(st.events, event{kind: eventSnapshot, at: now, current: s})
		st.persist = true
		return st
	}
	if !t.mixedOpen && t.isMixed() {
		t.mixedOpen = true
		st.events = append(st.events, event{kind: eventMixedOpen, at: now, variants: t.windowVariants()})
	}

	if key == t.baselineKey {
		t.candidate, t.candidateKey, t.candidateCount = nil, "", 0
		t.heldCount++
		t.openDrift = nil
		if t.mixedOpen && t.heldCount >= t.cfg.confirmAfter {
			st.events = append(st.events, t.resolveMixed(now, t.baseline))
		}
		return st
	}
	t.heldCount = 0
	if key == t.candidateKey {
		t.candidateCount++
		t.candidate = s
	} else {
		t.candidate, t.candidateKey, t.candidateCount = s, key, 1
		t.openDrift = nil
	}
	if t.candidateCount < t.cfg.confirmAfter {
		return st
	}

	// Confirmed: a new contract has held for confirmAfter observations.
	if t.mixedOpen {
		st.events = append(st.events, t.resolveMixed(now, s))
	}
	if t.cfg.pinned {
		if t.openDrift == nil {
			t.openDrift = t.classify(t.masked(t.baseline), t.masked(s))
		}
		if len(t.openDrift.Changes) > 0 {
			st.events = append(st.events, event{kind: eventDrift, at: now, current: s, previous: t.baseline, report: t.openDrift})
		}
		return st
	}
	report := t.classify(t.masked(t.baseline), t.masked(s))
	if len(report.Changes) > 0 {
		st.events = append(st.events, event{kind: eventDrift, at: now, current: s, previous: t.baseline, report: report})
	}
	st.events = append(st.events, event{kind: eventSnapshot, at: now, current: s})
	t.setBaseline(s)
	t.candidate, t.candidateKey, t.candidateCount = nil, "", 0
	t.heldCount = 1
	t.restartWindow(key, now)
	st.persist = true
	return st
}

// rekeyCandidate recomputes the candidate's key after the volatile set grew.
func (t *tracker) rekeyCandidate() {
	if t.candidate != nil {
		t.candidateKey = t.key(t.candidate)
	}
	// Keys in the window were computed with the old mask; forget them rather
	// than compare apples with oranges.
	t.window = t.window[:0]
	clear(t.variants)
}

func (t *tracker) remember(key string, now time.Time) {
	t.window = append(t.window, key)
	if n := len(t.window) - t.windowSize(); n > 0 {
		t.window = append(t.window[:0], t.window[n:]...)
	}
	v := t.variants[key]
	if v == nil {
		v = &variant{key: key, first: now}
		t.variants[key] = v
	}
	v.count++
	v.last = now
}

// isMixed reports a fleet alternating between contracts: within the window,
// at least two contracts each seen at least twice, and at least three
// switches between consecutive observations.
func (t *tracker) isMixed() bool {
	counts := map[string]int{}
	switches := 0
	for i, k := range t.window {
		counts[k]++
		if i > 0 && t.window[i-1] != k {
			switches++
		}
	}
	repeated := 0
	for _, c := range counts {
		if c >= 2 {
			repeated++
		}
	}
	return repeated >= 2 && switches >= 3
}

// windowVariants lists the contracts seen in the window, most seen first.
func (t *tracker) windowVariants() []variant {
	inWindow := map[string]bool{}
	for _, k := range t.window {
		inWindow[k] = true
	}
	var out []variant
	for k := range inWindow {
		out = append(out, *t.variants[k])
	}
	sortVariants(out)
	return out
}

func (t *tracker) resolveMixed(now time.Time, winner *contract.Snapshot) event {
	ev := event{kind: eventMixedResolved, at: now, current: winner, variants: t.windowVariants()}
	t.mixedOpen = false
	t.restartWindow(t.key(winner), now)
	return ev
}

// restartWindow forgets history before a confirmed contract: what mixed-fleet
// detection looks at from now on starts with the winner's observation.
func (t *tracker) restartWindow(key string, now time.Time) {
	clear(t.variants)
	t.window = append(t.window[:0], key)
	t.variants[key] = &variant{key: key, count: 1, first: now, last: now}
}

func sortVariants(vs []variant) {
	slices.SortFunc(vs, func(a, b variant) int {
		if a.count != b.count {
			return b.count - a.count
		}
		return strings.Compare(a.key, b.key)
	})
}
