package mcpdriftreceiver

import (
	"maps"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
)

// tracker is one target's drift state machine. It turns successful
// observations (snapshots) into events: the first observation becomes the
// baseline; what the target serves is decided by the fleet rules (fleet.go):
// a plain upgrade is confirmed after confirm_after observations, a fleet
// serving several contracts is one mixed state and one drift when it
// converges. Fields that change on every probe are volatile: once detected
// they are masked out of the contract's identity. Failed probes never reach
// it: a failed probe is never drift.
//
// A tracker is used by one goroutine at a time (the scheduler never probes a
// target twice at once).
type tracker struct {
	cfg      trackerConfig
	classify func(old, new *contract.Snapshot) *contract.Report

	// baseline is what drift is reported against: the confirmed contract
	// (advance) or the pinned one.
	baseline    *contract.Snapshot
	baselineKey string
	// current is the confirmed contract the target serves (the baseline,
	// unless pinned).
	current *contract.Snapshot

	fleet *fleet
	// seen holds the snapshot behind each key the fleet may still name (in
	// its window or its mixed episode), so a mixed event can classify its
	// variants; classified caches those classifications against the
	// baseline while a mixed state is open.
	seen       map[string]*contract.Snapshot
	classified map[string]*contract.Report

	// pinned mode: the drift open while the target serves current, not the
	// baseline. It is reported once; the repeats are state (drift.open).
	openDrift *contract.Report

	volatile *volatileDetector
}

type trackerConfig struct {
	limits         contract.Limits
	confirmAfter   int
	samples        int // confirm_samples; 0 for targets that are not a fleet (stdio)
	pinned         bool
	volatileAfter  int
	ignoreVolatile bool
}

func newTracker(cfg trackerConfig, classify func(old, new *contract.Snapshot) *contract.Report) *tracker {
	return &tracker{
		cfg:      cfg,
		classify: classify,
		fleet:    newFleet(newFleetParams(cfg.confirmAfter, cfg.samples)),
		volatile: newVolatileDetector(cfg.volatileAfter),
		seen:     map[string]*contract.Snapshot{},
	}
}

// eventKind says which event a tracker step produced.
type eventKind int

const (
	eventSnapshot eventKind = iota
	eventDrift
	eventMixedOpen
	eventMixedUpdated // an open mixed state has a new variant
	eventMixedResolved
	eventVolatile
	eventAccepted // an operator accepted a drift (controlplane.go)
)

// occurred is when what the event reports happened: for a drift, when the
// new contract was first observed (the drift event's timestamp, the time
// mcpimpact judges calls stale from), else at.
func (e event) occurred() time.Time {
	if !e.since.IsZero() && e.since.Before(e.at) {
		return e.since
	}
	return e.at
}

// event is what a tracker step asks the receiver to emit.
type event struct {
	kind     eventKind
	at       time.Time
	since    time.Time          // drift: when the new contract was first observed (zero: at)
	current  *contract.Snapshot // snapshot, drift (after), mixed resolved (winner)
	previous *contract.Snapshot // drift (before), mixed open and updated (the baseline)
	report   *contract.Report   // drift
	variants []mixedVariant     // mixed
	field    fieldKey           // volatile
	accepted *driftRecord       // accepted: the drift, as it is now
	mode     string             // accepted: the baseline mode
}

// step is the result of one observation.
type step struct {
	events []event
	// persist is set when the baseline or the volatile set changed, or a
	// rollout's evidence started, ended or changed the mixed state: stored
	// at once.
	persist bool
	// evidence is set when a rollout's evidence (the window, the shares)
	// grew and nothing else changed: the receiver stores it coarsely
	// (evidenceStoreEvery).
	evidence bool
	// sample asks the receiver for up to sampleN more observations now, to
	// be passed to sampled: a new contract would be confirmed, or a mixed
	// state end, if the fleet shows nothing else. The receiver may stop at
	// the first round of samples that shows another contract (takeSamples).
	sample  bool
	sampleN int
	// reverted is set when a pinned target went back to its baseline: the
	// open drift closed by itself.
	reverted bool
}

// mixedOpen reports an open mixed state (for the contract.mixed metric).
func (t *tracker) mixedOpen() bool { return t.fleet.mixed }

// mixedVariant is one contract of a mixed fleet as events, metrics and the
// control plane show it: its share and, unless it is the baseline, what it
// changes against the baseline, classified as a drift would be.
type mixedVariant struct {
	variant
	baseline bool
	report   *contract.Report   // nil for the baseline, or a contract no longer kept
	snap     *contract.Snapshot // the contract as served; nil when no longer kept
}

// mixedVariants classifies the open mixed state's variants (nil when none
// is open), most seen first.
func (t *tracker) mixedVariants() []mixedVariant {
	if !t.fleet.mixed {
		return nil
	}
	return t.classifyVariants(t.fleet.episodeVariants())
}

func (t *tracker) classifyVariants(vs []variant) []mixedVariant {
	out := make([]mixedVariant, len(vs))
	for i, v := range vs {
		out[i] = mixedVariant{variant: v, baseline: v.key == t.baselineKey, snap: t.seen[v.key]}
		if !out[i].baseline {
			out[i].report = t.classifyKey(v.key)
		}
	}
	return out
}

// variantShares adds up the open mixed state's variants other than the
// baseline by worst severity (none counts as info): what an alert on "a
// breaking variant serves more than X %" reads.
func (t *tracker) variantShares() map[contract.Severity]float64 {
	out := map[contract.Severity]float64{}
	for _, v := range t.mixedVariants() {
		if !v.baseline {
			out[max(v.report.Worst(), contract.Info)] += v.share
		}
	}
	return out
}

// classifyKey is the classification of the contract behind key against the
// baseline, through the same classifier a drift uses, cached for the open
// mixed state.
func (t *tracker) classifyKey(key string) *contract.Report {
	if r, ok := t.classified[key]; ok {
		return r
	}
	s := t.seen[key]
	if s == nil || t.baseline == nil {
		return nil
	}
	r := t.classify(t.compared(t.baseline), t.compared(s))
	if t.classified == nil {
		t.classified = map[string]*contract.Report{}
	}
	t.classified[key] = r
	return r
}

// remember keeps s under key for the mixed events and forgets the
// snapshots the fleet no longer names.
func (t *tracker) remember(key string, s *contract.Snapshot) {
	if _, ok := t.seen[key]; !ok && len(t.seen) >= 2*maxEpisodeVariants {
		for k := range t.seen {
			if !t.fleet.names(k) && k != t.baselineKey {
				delete(t.seen, k)
			}
		}
	}
	t.seen[key] = s
}

// restore installs a stored baseline and volatile set (receiver start).
// current, when set, is the contract a pinned target served, other than its
// baseline: the drift stays open across the restart instead of being
// confirmed, and reported, again.
func (t *tracker) restore(baseline, current *contract.Snapshot, volatile []fieldKey) {
	for _, f := range volatile {
		t.volatile.known[f] = true
	}
	t.setBaseline(baseline)
	t.current = baseline
	if current != nil && t.cfg.pinned && t.key(current) != t.baselineKey {
		t.current = current
		t.openDrift = t.classify(t.compared(baseline), t.compared(current))
	}
	t.fleet.start(t.key(t.current))
}

// accept makes the served contract the baseline (pinned: the open drift
// closes) and reports whether the baseline changed.
func (t *tracker) accept() bool {
	t.openDrift = nil
	if t.current == nil || t.current == t.baseline {
		return false
	}
	t.setBaseline(t.current)
	return true
}

// pinnedCurrent is the served contract to store beside a pinned baseline,
// nil when it is the baseline.
func (t *tracker) pinnedCurrent() *contract.Snapshot {
	if !t.cfg.pinned || t.current == nil || t.current == t.baseline {
		return nil
	}
	return t.current
}

func (t *tracker) setBaseline(s *contract.Snapshot) {
	t.baseline = s
	t.baselineKey = t.key(s)
	t.classified = nil
}

// key is the identity of an observed contract: its contract digest, or,
// once volatile fields are known, the digest with them masked (whether or
// not they are ignored in reports: a field that changes on every probe
// would otherwise keep any change from ever being confirmed).
func (t *tracker) key(s *contract.Snapshot) string {
	if len(t.volatile.known) == 0 {
		return s.Digests.Contract
	}
	return maskFields(s, t.volatile.known, t.cfg.limits).Digests.Contract
}

// equivalent tells the probe's settling that two listings differing only in
// known volatile fields agree (nil when none are known).
func (t *tracker) equivalent() func(kind contract.Kind, a, b contract.Listing) bool {
	if len(t.volatile.known) == 0 {
		return nil
	}
	byDef := fieldsByDefinition(t.volatile.known)
	limits := t.cfg.limits
	return func(kind contract.Kind, a, b contract.Listing) bool {
		ma, _ := maskListing(kind, a, byDef, limits)
		mb, _ := maskListing(kind, b, byDef, limits)
		return ma.SetDigest() == mb.SetDigest()
	}
}

// compared is the snapshot drift reports compare: masked when volatile
// fields are ignored, as served otherwise.
func (t *tracker) compared(s *contract.Snapshot) *contract.Snapshot {
	if !t.cfg.ignoreVolatile || len(t.volatile.known) == 0 {
		return s
	}
	return maskFields(s, t.volatile.known, t.cfg.limits)
}

// observe feeds one successful scheduled probe result to the tracker.
func (t *tracker) observe(s *contract.Snapshot, now time.Time) step {
	var st step
	t.noteVolatile(s, now, &st)
	if t.baseline == nil {
		t.setBaseline(s)
		t.current = s
		t.fleet.start(t.baselineKey)
		st.events = append(st.events, event{kind: eventSnapshot, at: now, current: s})
		st.persist = true
		return st
	}
	key := t.key(s)
	t.remember(key, s)
	if key != t.fleet.current && t.onlyAdvancing(s) {
		key = t.fleet.current
	}
	inFlight := t.fleet.inFlight()
	v := t.fleet.observe(key, now)
	st.sample, st.sampleN = v.sample, v.want
	t.apply(v, s, now, &st)
	t.noteEvidence(inFlight, &st)
	return st
}

// noteEvidence says how the fleet's stored evidence is to be written after
// a step that began with inFlight: at once when a rollout's evidence
// starts or ends (so the store does not keep it) or the step emitted an
// event (a mixed state opened, grew or resolved: a restart must not report
// it again); coarsely while it only grows.
func (t *tracker) noteEvidence(inFlight bool, st *step) {
	switch now := t.fleet.inFlight(); {
	case inFlight != now || now && len(st.events) > 0:
		st.persist = true
	case now:
		st.evidence = true
	}
}

// agrees reports whether s is the contract the samples asked for would
// confirm: a round of samples with one that does not has shown a fleet, and
// more are not needed.
func (t *tracker) agrees(s *contract.Snapshot) bool {
	return t.fleet.pending != "" && t.key(s) == t.fleet.pending
}

// Samples are taken in rounds, at once within a round; after a round that
// shows another contract no more are taken. The first rounds are small:
// while a fleet is evenly mixed the first usually ends the sampling alone,
// and during a canary the rare contract shows up in about ten picks. From
// the third on each round doubles, up to maxSampleRound at once, so the
// 126 samples that end a mixed state take 7 rounds, not 22: a round costs
// a connection's round trips (and, where the server changes after a
// client connects, the settle wait) however many it holds.
const (
	firstSampleRound = 2
	sampleRound      = 6
	maxSampleRound   = 32
)

// nextSampleRound is the size of the round after one of size.
func nextSampleRound(size int) int {
	if size < sampleRound {
		return sampleRound
	}
	return min(2*size, maxSampleRound)
}

// takeSamples takes up to n samples in rounds, stopping after a round in
// which one does not agree. Whole rounds are kept, so the samples stay an
// unbiased picture of the fleet.
func takeSamples(n int, agrees func(*contract.Snapshot) bool, take func(k int) []*contract.Snapshot) []*contract.Snapshot {
	var out []*contract.Snapshot
	for size := firstSampleRound; len(out) < n; size = nextSampleRound(size) {
		round := take(min(size, n-len(out)))
		if len(round) == 0 {
			break
		}
		out = append(out, round...)
		if !all(round, agrees) {
			break
		}
	}
	return out
}

func all[T any](xs []T, f func(T) bool) bool {
	for _, x := range xs {
		if !f(x) {
			return false
		}
	}
	return true
}

// sampled feeds the extra observations a step asked for.
func (t *tracker) sampled(samples []*contract.Snapshot, now time.Time) step {
	var st step
	keys := make([]string, len(samples))
	for i, s := range samples {
		keys[i] = t.key(s)
		t.remember(keys[i], s)
	}
	var last *contract.Snapshot
	if len(samples) > 0 {
		last = samples[len(samples)-1]
	}
	inFlight := t.fleet.inFlight()
	t.apply(t.fleet.sampled(keys, now), last, now, &st)
	t.noteEvidence(inFlight, &st)
	return st
}

// noteVolatile feeds the volatile detector with a scheduled probe's
// snapshot. Samples are not fed: they are taken at once, so a field that
// changes with time (a timestamp, a counter per second) repeats among them,
// and they come back in no particular order; either would read as the field
// holding still or going back, and a streak of changes would never reach
// volatile.after (issue 25: a real change went unreported for 40 s behind a
// timestamp in a description).
//
// A grown volatile set changes every key: the fleet's observations are
// renamed under the new mask rather than forgotten, so the evidence for a
// change that landed before the field was known still counts, and a mixed
// state that only the volatile field made (each probe a new contract) ends.
func (t *tracker) noteVolatile(s *contract.Snapshot, now time.Time, st *step) {
	found := t.volatile.observe(s, t.classify)
	if len(found) == 0 {
		t.watchAdvancing()
		return
	}
	for _, f := range found {
		st.events = append(st.events, event{kind: eventVolatile, at: now, current: s, field: f})
	}
	st.persist = true
	if t.baseline == nil {
		return
	}
	// Every key the fleet may name has its snapshot in seen, or is the
	// baseline's or the current contract's.
	renamed := map[string]string{t.baselineKey: t.key(t.baseline), t.fleet.current: t.key(t.current)}
	seen := t.seen
	t.seen = make(map[string]*contract.Snapshot, len(seen))
	for k, snap := range seen {
		renamed[k] = t.key(snap)
		t.seen[renamed[k]] = snap
	}
	t.baselineKey = renamed[t.baselineKey]
	t.classified = nil
	t.watchAdvancing()
	v := t.fleet.remap(t.key(t.current), func(old string) string {
		if k, ok := renamed[old]; ok {
			return k
		}
		return old // a contract no longer kept stays apart
	})
	if v.resolved {
		st.events = append(st.events, event{kind: eventMixedResolved, at: now, current: t.current, variants: t.classifyVariants(v.variants)})
	}
}

// onlyAdvancing reports whether s differs from the current contract only
// in fields that took a new value on each of the last two scheduled probes
// or more, and are not yet known volatile: a timestamp before
// volatile.after probes confirm it. Such a probe counts as the current
// contract. Without it, samples taken within one second repeat the
// timestamp's new value, agree, and with confirm_after 1 confirm it as a
// drift on every tick until the field is found (issue 25). One change is
// not held back: it may be a real one, and confirm_after 1 asked for it at
// once; the field's second new value in a row is what tells a clock from an
// edit. When the field stops changing, its streak ends and the value it
// kept is confirmed as any change is.
func (t *tracker) onlyAdvancing(s *contract.Snapshot) bool {
	adv := t.advancingMask(2)
	if adv == nil || t.current == nil {
		return false
	}
	limits := t.cfg.limits
	return maskFields(s, adv, limits).Digests.Contract == maskFields(t.current, adv, limits).Digests.Contract
}

// advancingMask is the fields to mask to see past those advancing for n
// scheduled probes or more (volatile.advancing): those and the known
// volatile ones; nil when none advance.
func (t *tracker) advancingMask(n int) map[fieldKey]bool {
	adv := t.volatile.advancing(n)
	if len(adv) == 0 {
		return nil
	}
	maps.Copy(adv, t.volatile.known)
	return adv
}

// watchAdvancing gives the fleet's mixed rule the keys contracts would
// have if the fields on a streak of new values (advancing) were volatile
// too, until the next scheduled probe: before volatile.after probes confirm
// a timestamp, samples taken at once repeat its value, and one server would
// look like contracts coming back (a mixed fleet). A fleet whose variants
// differ only in such a field opens a probe later, when the field repeats
// or goes back; one whose variants differ elsewhere too opens as before.
func (t *tracker) watchAdvancing() {
	adv := t.advancingMask(1)
	if adv == nil || t.baseline == nil {
		t.fleet.alias = nil
		return
	}
	limits := t.cfg.limits
	aliases := map[string]string{}
	t.fleet.alias = func(key string) string {
		if a, ok := aliases[key]; ok {
			return a
		}
		a := key // a contract no longer kept stays apart
		if s := t.snapshotOf(key); s != nil {
			a = maskFields(s, adv, limits).Digests.Contract
		}
		aliases[key] = a
		return a
	}
}

// snapshotOf is the contract behind a key the fleet names, nil when it is
// no longer kept.
func (t *tracker) snapshotOf(key string) *contract.Snapshot {
	switch {
	case t.seen[key] != nil:
		return t.seen[key]
	case key == t.baselineKey:
		return t.baseline
	case t.current != nil && key == t.fleet.current:
		return t.current
	}
	return nil
}

// apply turns a fleet verdict into events; s is the observation it was
// reached on.
func (t *tracker) apply(v fleetVerdict, s *contract.Snapshot, now time.Time, st *step) {
	if v.opened || v.grown {
		kind := eventMixedOpen
		if v.grown {
			kind = eventMixedUpdated
		}
		st.events = append(st.events, event{kind: kind, at: now, previous: t.baseline, variants: t.classifyVariants(v.variants)})
	}
	if v.resolved {
		st.events = append(st.events, event{kind: eventMixedResolved, at: now, current: s, variants: t.classifyVariants(v.variants)})
		t.classified = nil
	}
	if v.confirmed {
		t.confirm(s, now, v.since, st)
	}
}

// confirm makes s the contract the target serves.
// since is when the fleet was first seen serving s (zero when unknown).
func (t *tracker) confirm(s *contract.Snapshot, now, since time.Time, st *step) {
	t.current = s
	if t.cfg.pinned {
		if t.key(s) == t.baselineKey {
			t.openDrift = nil // back on the baseline: the open drift closes
			st.reverted = true
			st.persist = true // the stored served contract is the baseline again
			return
		}
		report := t.classify(t.compared(t.baseline), t.compared(s))
		t.openDrift = report
		if len(report.Changes) > 0 {
			st.events = append(st.events, event{kind: eventDrift, at: now, since: since, current: s, previous: t.baseline, report: report})
		}
		st.persist = true // the served contract is stored beside the baseline
		return
	}
	report := t.classify(t.compared(t.baseline), t.compared(s))
	if len(report.Changes) > 0 {
		st.events = append(st.events, event{kind: eventDrift, at: now, since: since, current: s, previous: t.baseline, report: report})
	}
	st.events = append(st.events, event{kind: eventSnapshot, at: now, current: s})
	t.setBaseline(s)
	st.persist = true
}
