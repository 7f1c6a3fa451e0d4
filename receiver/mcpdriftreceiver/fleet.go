package mcpdriftreceiver

import (
	"math"
	"slices"
	"strings"
	"time"
)

// fleet decides, from the contracts a target's probes observe, what the
// target serves. Behind a load balancer each probe is one sample of a fleet,
// so the decisions rest on evidence over a window of samples, never on a run
// that a random pick produces by chance (docs/mcpdrift-receiver.md, "Rolling
// deploys"). It sees only keys (contract digests) and is pure, so it can be
// simulated over many seeded balancer runs (fleet_sim_test.go).
//
// The rules, with c = confirm_after and W the window:
//   - mixed opens when two or more contracts were each seen at least minCount
//     times in the window after its first change of contract, and the
//     observations changed contract at least three times (one contract came
//     back after another was seen);
//   - while mixed, a contract is converged when it has held the last
//     hold(x) observations: at least minHold, longer when the contracts it
//     replaces were rare in the window, up to 2W; with samples, from its
//     first observation the receiver samples the fleet at once, and the run
//     with the samples must reach 2W (sampleHold);
//   - otherwise a new contract seen c times in a row is confirmed when the
//     window is clean (it is new there, or the window holds at most two
//     contracts' runs back to back), after the receiver has sampled the
//     fleet `samples` more times and seen only it; with a window that is not
//     clean it must hold hold(x) observations, or reach 2W with samples, as
//     when mixed.
type fleet struct {
	par fleetParams

	current string // the confirmed contract; "" before the first observation

	win      []sample // recent observations, oldest first, at most par.window
	inWin    map[string]*variant
	switches int // adjacent observations in win with different keys

	run struct {
		key     string
		n, need int
		since   time.Time // its first observation
	}
	pending string // the contract the samples asked for would confirm
	want    int    // the samples asked for
	needRun int    // the run, samples included, that confirms pending (0: any, with every sample agreeing)

	mixed   bool
	episode map[string]*variant // variants since the fleet started to disagree
	total   int                 // observations in the episode
	// announced are the episode's variants an event has named; grew is set
	// when another reached minCount since (an update event names it).
	announced map[string]bool
	grew      bool

	// alias, when set, names what each key would be if the fields that
	// may be turning out volatile were masked too; the mixed rule counts
	// contracts under it, so contracts that differ only there (each probe
	// a new timestamp, and samples taken at once repeating one) are not a
	// fleet. Set by the tracker from its volatile detector; nil in the
	// simulation.
	alias func(key string) string
}

type sample struct {
	key string
	at  time.Time
}

// fleetParams are the sizes the rules use, derived from confirm_after.
type fleetParams struct {
	confirmAfter int // c
	samples      int // extra samples before a clean confirmation; 0: none
	window       int // W
	minCount     int // observations in W that make a contract part of a mixed fleet
	minHold      int // observations a contract must hold to end a mixed state
	// sampleHold is the run, samples included, that ends a mixed state
	// when samples complete it: the longest hold, whatever the window's
	// shares said. Samples are one picture of the fleet now, but the
	// window's shares are the past: in a ramp the old contract's share
	// falls, and a hold sized for its past share would be too short.
	sampleHold int
}

// The window and hold sizes, chosen from the simulation in fleet_sim_test.go
// (docs/mcpdrift-receiver.md has the measured table).
const (
	// fleetWindow is the least window: long enough that a 10 % canary is seen
	// twice in it with probability 0.99 (1 - 0.9^64 - 64·0.1·0.9^63).
	fleetWindow = 64
	// fleetMinShare is the share of the window a contract needs (and at
	// least two observations) to count as a variant of a mixed fleet: one
	// glitch never opens a mixed state.
	fleetMinShare = 0.03
	// fleetMinHold is the least run that ends a mixed state: a 50/50 fleet
	// produces one that long by chance once in 2^16 observations.
	fleetMinHold = 16
	// fleetMissRate bounds the chance that contracts seen in a share q of the
	// window are still served but missed by a run of hold observations:
	// (1-q)^hold <= fleetMissRate.
	fleetMissRate = 1e-4
	// fleetMaxHold bounds hold, in windows: a 10 % canary leaves the old
	// contract alone for two windows (128 probes) once in 7 million probes.
	fleetMaxHold = 2
	// maxEpisodeVariants bounds the variants a mixed event lists (a server
	// that serves a new contract on every probe is volatile, not a fleet).
	maxEpisodeVariants = 16
	// DefaultConfirmSamples is the default of confirm_samples.
	DefaultConfirmSamples = 12
)

func newFleetParams(confirmAfter, samples int) fleetParams {
	c := max(confirmAfter, 1)
	w := max(fleetWindow, 8*c)
	return fleetParams{
		confirmAfter: c,
		samples:      max(samples, 0),
		window:       w,
		minCount:     max(2, int(math.Ceil(fleetMinShare*float64(w)))),
		minHold:      max(fleetMinHold, 2*c),
		sampleHold:   fleetMaxHold * w,
	}
}

func newFleet(par fleetParams) *fleet {
	return &fleet{par: par, inWin: map[string]*variant{}}
}

// fleetVerdict is what one observation (or one set of samples) decided.
type fleetVerdict struct {
	opened    bool      // a mixed state opened
	grown     bool      // a mixed state that stays open has a new variant
	resolved  bool      // the mixed state ended
	variants  []variant // on opened, grown and resolved
	confirmed bool      // the last observation's contract is now current
	since     time.Time // when confirmed: the first observation of the run that confirmed it
	sample    bool      // take up to want more observations, then call sampled
	want      int
}

// start sets the current contract without history (first observation or a
// restored baseline).
func (f *fleet) start(key string) {
	f.current = key
	f.win = f.win[:0]
	clear(f.inWin)
	f.switches = 0
	f.run.key, f.run.n, f.run.need = "", 0, 0
	f.pending = ""
	f.mixed = false
	f.episode, f.total, f.announced = nil, 0, nil
}

// remap renames every remembered observation's key and keeps the evidence:
// keys changed meaning (the volatile mask grew), and contracts that differed
// only in the newly volatile field are one now. An open mixed state whose
// window, renamed, no longer shows a fleet was that field's doing: it ends
// (the verdict is resolved, nothing is confirmed), and the observations
// decide what the target serves as if it had never opened.
func (f *fleet) remap(current string, key func(string) string) fleetVerdict {
	f.current, f.pending = current, ""
	clear(f.inWin)
	f.switches = 0
	for i := range f.win {
		k := key(f.win[i].key)
		f.win[i].key = k
		if i > 0 && f.win[i-1].key != k {
			f.switches++
		}
		f.tally(k, f.win[i].at)
	}
	if f.run.key != "" {
		f.remapRun(key(f.run.key))
	}
	var v fleetVerdict
	if !f.mixed {
		return v
	}
	episode := f.episode
	f.episode = map[string]*variant{}
	for k, e := range episode {
		k = key(k)
		if m := f.episode[k]; m != nil {
			m.count += e.count
			m.first, m.last = minTime(m.first, e.first), maxTime(m.last, e.last)
			continue
		}
		c := *e
		c.key = k
		f.episode[k] = &c
	}
	announced := f.announced
	f.announced = map[string]bool{}
	for k := range announced {
		f.announced[key(k)] = true
	}
	if !f.mixedRule() {
		v.resolved, v.variants = true, f.episodeVariants()
		f.mixed = false
		f.episode, f.total, f.announced, f.grew = nil, 0, nil, false
	}
	return v
}

// remapRun renames the trailing run to k after the window was renamed: it
// may now reach further back, over observations that differed from it only
// in the newly volatile field, and its hold is sized again on the window
// before it.
func (f *fleet) remapRun(k string) {
	tail := 0
	for tail < len(f.win) && f.win[len(f.win)-1-tail].key == k {
		tail++
	}
	if tail > f.run.n {
		f.run.n, f.run.since = tail, f.win[len(f.win)-tail].at
	}
	f.run.key = k
	before := len(f.win) - tail
	others := before
	if v := f.inWin[k]; v != nil {
		others -= v.count - tail
	}
	f.run.need = f.holdFor(others, before)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// observe takes one scheduled observation.
func (f *fleet) observe(key string, at time.Time) fleetVerdict {
	f.pending = ""
	f.push(key, at)
	var v fleetVerdict
	if f.current == "" {
		f.current = key
		v.confirmed = true
		return v
	}
	f.openIfMixed(&v)
	x := f.run.key
	if f.mixed {
		switch {
		case f.run.n >= f.run.need:
			f.resolve(&v)
		case f.par.samples > 0:
			// The run may be the fleet converging: samples taken now
			// either show another contract (a fleet still mixed, most
			// often in the first round) or complete the hold at once.
			// From the run's first observation, not its c-th: the
			// longest hold guards the end of a mixed state, and c-1
			// more probes would only add intervals to it.
			f.ask(&v, x, f.par.sampleHold-f.run.n, f.par.sampleHold)
			f.noteGrowth(&v)
		default:
			f.noteGrowth(&v)
		}
		return v
	}
	if x == f.current || f.run.n < f.par.confirmAfter {
		return v
	}
	switch {
	case f.clean(x) && f.par.samples > 0:
		f.ask(&v, x, f.par.samples, 0)
	case f.clean(x) || f.run.n >= f.run.need:
		f.current = x
		v.confirmed = true
		v.since = f.runSince(x)
	case f.par.samples > 0:
		// Contracts interleaved without opening a mixed state (a ramp
		// that went fast): complete the longest hold at once, as a mixed
		// state would.
		f.ask(&v, x, f.par.sampleHold-f.run.n, f.par.sampleHold)
	}
	return v
}

// ask asks for n samples that would confirm x if they all show it and the
// run, with them, is at least needRun.
func (f *fleet) ask(v *fleetVerdict, x string, n, needRun int) {
	f.pending, f.want, f.needRun = x, n, needRun
	v.sample, v.want = true, n
}

// resolve ends the mixed state on the trailing run's contract.
func (f *fleet) resolve(v *fleetVerdict) {
	x := f.run.key
	v.resolved, v.variants = true, f.episodeVariants()
	f.settle(x)
	v.confirmed = x != f.current
	f.current = x
	v.since = f.runSince(x)
}

// sampled takes the samples observe asked for (possibly fewer: failed
// probes are left out, and the taker may stop at the first round that shows
// another contract). Outside a mixed state the pending contract is confirmed
// when at least half the samples were taken and every one shows it; in one,
// they count toward the pending run's hold and end the state when it is
// complete. Anything else is evidence of a fleet and goes to the window.
func (f *fleet) sampled(keys []string, at time.Time) fleetVerdict {
	x, want, needRun := f.pending, f.want, f.needRun
	f.pending, f.want, f.needRun = "", 0, 0
	agree := len(keys) > 0 && 2*len(keys) >= want
	for _, k := range keys {
		f.push(k, at)
		agree = agree && k == x
	}
	var v fleetVerdict
	if x == "" {
		return v
	}
	if f.mixed {
		if f.run.key == x && f.run.n >= needRun {
			f.resolve(&v)
		} else {
			f.noteGrowth(&v)
		}
		return v
	}
	if agree && f.run.n >= needRun {
		f.current = x
		v.confirmed = true
		v.since = f.runSince(x)
		return v
	}
	f.openIfMixed(&v)
	if f.mixed {
		f.noteGrowth(&v)
	}
	return v
}

// noteGrowth reports, once, that an open mixed state has a variant no event
// named yet.
func (f *fleet) noteGrowth(v *fleetVerdict) {
	if f.grew && !v.opened {
		v.grown, v.variants = true, f.episodeVariants()
	}
	f.grew = false
}

// runSince is when the trailing run of key began: the first observation
// after which the fleet served only key. A drift is dated there (its log
// record's Timestamp), not at its confirmation some probes later, so calls
// made in between are judged against the new contract.
func (f *fleet) runSince(key string) time.Time {
	if f.run.key != key {
		return time.Time{}
	}
	return f.run.since
}

// openIfMixed opens a mixed state when the window shows one.
func (f *fleet) openIfMixed(v *fleetVerdict) {
	if !f.mixed && f.mixedRule() {
		f.open()
		v.opened, v.variants = true, f.episodeVariants()
	}
}

// push appends an observation to the window, the run and the episode.
func (f *fleet) push(key string, at time.Time) {
	if v := f.inWin[key]; v != nil {
		key = v.key // one string per contract, however many observations
	}
	if n := len(f.win); n > 0 && f.win[n-1].key != key {
		f.switches++
	}
	if key == f.run.key {
		f.run.n++
	} else {
		f.run.key, f.run.n, f.run.need, f.run.since = key, 1, f.hold(key), at
	}
	if len(f.win) == f.par.window {
		f.evict()
	}
	f.win = append(f.win, sample{key: key, at: at})
	f.tally(key, at)
	if f.mixed {
		f.count(key, at)
	}
}

// tally counts one observation of key in the window's contracts.
func (f *fleet) tally(key string, at time.Time) {
	v := f.inWin[key]
	if v == nil {
		v = &variant{key: key, first: at}
		f.inWin[key] = v
	}
	v.count++
	v.last = at
}

func (f *fleet) evict() {
	old := f.win[0].key
	if f.win[1].key != old {
		f.switches--
	}
	v := f.inWin[old]
	v.count--
	if v.count == 0 {
		delete(f.inWin, old)
	}
	f.win = append(f.win[:0], f.win[1:]...)
}

// hold is how many observations in a row key must hold to converge: enough
// that the other contracts, at the share q they had in the window before
// this run, would have shown up but for a chance of fleetMissRate.
func (f *fleet) hold(key string) int {
	others := len(f.win)
	if v := f.inWin[key]; v != nil {
		others -= v.count
	}
	return f.holdFor(others, len(f.win))
}

// holdFor is hold for a contract whose window of n observations held others
// of other contracts.
func (f *fleet) holdFor(others, n int) int {
	if n == 0 {
		return f.par.minHold
	}
	q := lowerBound(others, n)
	if q <= 0 || q >= 1 {
		return f.par.minHold
	}
	need := int(math.Ceil(math.Log(fleetMissRate) / math.Log1p(-q)))
	return min(max(need, f.par.minHold), fleetMaxHold*f.par.window)
}

// lowerBound is the Wilson score lower bound (z = 2) of a share k/n: the
// share of a contract seen k times in n observations is at least this with
// about 97.7 % confidence, so a short window's estimate errs toward a longer
// hold, not a premature one.
func lowerBound(k, n int) float64 {
	const z = 2.0
	p, fn := float64(k)/float64(n), float64(n)
	center := p + z*z/(2*fn)
	margin := z * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn))
	return (center - margin) / (1 + z*z/fn)
}

// mixedRule: two or more contracts each hold a meaningful share of the
// window since its first change of contract, and they interleave (a
// contract came back after another was seen). The window's first run is
// left out: the old contract's history before an upgrade says nothing about
// whether it came back, so one stale answer after an upgrade is no fleet.
//
// With an alias the rule is applied to the aliased keys: merging keys never
// adds a change of contract, so the unaliased count of switches is a bound.
func (f *fleet) mixedRule() bool {
	if f.switches < 3 {
		return false
	}
	if f.alias != nil {
		return f.aliasedMixedRule()
	}
	first, n := f.firstRun()
	held := 0
	for k, v := range f.inWin {
		if f.meaningful(k, v.count, first, n) {
			held++
		}
	}
	return held >= 2
}

// aliasedMixedRule is mixedRule over the window's keys renamed by alias.
func (f *fleet) aliasedMixedRule() bool {
	counts := map[string]int{}
	switches, first, n, prev := 0, "", 0, ""
	for i, s := range f.win {
		k := f.alias(s.key)
		counts[k]++
		if i > 0 && k != prev {
			switches++
		}
		if switches == 0 {
			first, n = k, i+1
		}
		prev = k
	}
	if switches < 3 {
		return false
	}
	held := 0
	for k, c := range counts {
		if f.meaningful(k, c, first, n) {
			held++
		}
	}
	return held >= 2
}

// meaningful: a contract seen c times in the window, whose first run (key
// first, n long) does not count, holds a share of it that makes it part of
// a mixed fleet.
func (f *fleet) meaningful(key string, c int, first string, n int) bool {
	if key == first {
		c -= n
	}
	return c >= f.par.minCount
}

// firstRun is the key and length of the window's first run.
func (f *fleet) firstRun() (string, int) {
	if len(f.win) == 0 {
		return "", 0
	}
	n := 1
	for n < len(f.win) && f.win[n].key == f.win[0].key {
		n++
	}
	return f.win[0].key, n
}

// clean reports that x may confirm after confirm_after observations: it is
// new in the window, or the window is at most runs of two contracts back to
// back (an upgrade, a rollback) rather than contracts interleaving.
func (f *fleet) clean(x string) bool {
	return f.switches <= 2 || f.inWin[x].count == f.run.n
}

// open starts a mixed episode, counting the window from its first change of
// contract.
func (f *fleet) open() {
	f.mixed = true
	f.episode, f.total = map[string]*variant{}, 0
	_, n := f.firstRun()
	for _, s := range f.win[n:] {
		f.count(s.key, s.at)
	}
	f.announced = map[string]bool{}
	for k := range f.episode {
		f.announced[k] = true
	}
	f.grew = false
}

func (f *fleet) count(key string, at time.Time) {
	f.total++
	v := f.episode[key]
	if v == nil {
		if len(f.episode) >= maxEpisodeVariants {
			return
		}
		v = &variant{key: key, first: at}
		f.episode[key] = v
	}
	v.count++
	v.last = at
	if f.announced != nil && !f.announced[key] && v.count >= f.par.minCount {
		f.announced[key] = true
		f.grew = true
	}
}

// settle ends a mixed episode on x: the window keeps only x's run, so the
// interleaving that opened the episode cannot reopen it.
func (f *fleet) settle(x string) {
	f.mixed = false
	f.episode, f.total, f.announced, f.grew = nil, 0, nil, false
	keep := f.win[len(f.win)-min(f.run.n, len(f.win)):]
	f.win = append(f.win[:0], keep...)
	clear(f.inWin)
	f.switches = 0
	v := &variant{key: x, count: len(f.win), first: f.win[0].at, last: f.win[len(f.win)-1].at}
	f.inWin[x] = v
}

// names reports whether key is in the window or the mixed episode.
func (f *fleet) names(key string) bool {
	return f.inWin[key] != nil || f.episode[key] != nil
}

// episodeVariants lists the episode's contracts, most seen first, with
// their share of its observations.
func (f *fleet) episodeVariants() []variant {
	out := make([]variant, 0, len(f.episode))
	for _, v := range f.episode {
		c := *v
		c.share = float64(c.count) / float64(max(f.total, 1))
		out = append(out, c)
	}
	sortVariants(out)
	return out
}

// variant is one contract seen while a fleet is mixed.
type variant struct {
	key         string
	count       int
	share       float64
	first, last time.Time
}

func sortVariants(vs []variant) {
	slices.SortFunc(vs, func(a, b variant) int {
		if a.count != b.count {
			return b.count - a.count
		}
		return strings.Compare(a.key, b.key)
	})
}
