package mcpimpactprocessor

import (
	"cmp"
	"math/bits"
	"slices"
	"time"

	"github.com/mcpdrift/mcpdrift/semconv"
)

// toolChange is a tool a drift changed at warning or above.
type toolChange struct {
	tool     string
	severity string // semconv.DriftSeverityBreaking or DriftSeverityWarning
}

// agentImpact is what one agent's calls of one changed tool add up to.
type agentImpact struct {
	agent          string // "" when the spans named none
	sessions       int
	calls, errors  int64
	last           uint32 // unix seconds
	staleCalls     int64  // calls judged stale (their spans say so)
	aheadCalls     int64  // calls waiting for a prompt probe to settle them
	beforeCalls    int64  // the rest: with the tool's previous digest (before the change) ...
	newCalls       int64  // ... with its current digest (or one a prompt probe saw served)
	unknownCalls   int64  // ... without a digest, or with another one
	recentCalls    int64  // calls within recent_window
	recentOldCalls int64  // of those, stale or with the previous digest
	timed          int64  // calls with a span duration
	latency        uint64 // their durations' sum, microseconds
	sessionSample  []string
	risk           string
	status         string   // a mixed fleet's variant: semconv.ImpactStatusHurtNow or …AtRiskOnConvergence
	recovery       recovery // with a known change: control-plane queries (impactView)
}

// toolImpact is the impact of a drift on one changed tool, agents sorted by
// risk, then calls.
type toolImpact struct {
	toolChange
	agents []agentImpact
}

// driftImpact is the impact of one drift.
type driftImpact struct {
	tools            []toolImpact
	agents, sessions int
	calls            int64
}

// scratch holds the drift-time scan's working memory between drifts: two
// bitsets over session ids, the current (tool, agent)'s sessions and the
// drift's. A bit per session keeps a million sessions in 128 KiB, inside
// the CPU cache, where a counter per session would miss it on nearly every
// entry.
type scratch struct {
	group, drift bitset
	// before: the sessions of one (tool, agent) that called before the
	// tool's change; after: what those that called after it did.
	before bitset
	after  afterChange
	// A mixed fleet's pass (variantPass): per digest slot of a tool, a
	// group set and the sessions it marked while few; the variants' sides'
	// session sets.
	slotGroups, sides []bitset
	slotMarks         [][]uint32
}

type bitset []uint64

func (b bitset) mark(i uint32) { b[i>>6] |= uint64(1) << (i & 63) }

// clear clears bit i and reports whether it was set.
func (b bitset) clear(i uint32) bool {
	w, m := i>>6, uint64(1)<<(i&63)
	was := b[w] & m
	b[w] &^= m
	return was != 0
}

// drainInto moves b's bits into dst, clearing b, and returns how many there
// were: one pass for the count, the union and the reset. It also clears
// the words of sub, a subset of b, unless sub is nil.
func (b bitset) drainInto(dst, sub bitset) int {
	n := 0
	for i, w := range b {
		if w != 0 {
			n += bits.OnesCount64(w)
			dst[i] |= w
			b[i] = 0
			if sub != nil {
				sub[i] = 0
			}
		}
	}
	return n
}

// orInto adds b's bits to dst.
func (b bitset) orInto(dst bitset) {
	for i, w := range b {
		if w != 0 {
			dst[i] |= w
		}
	}
}

func (b bitset) has(i uint32) bool { return b[i>>6]&(uint64(1)<<(i&63)) != 0 }

func (b bitset) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

func (sc *scratch) grow(sessions int) {
	words := (sessions + 63) / 64
	if len(sc.group) < words {
		sc.group = make(bitset, max(words, 2*len(sc.group)))
		sc.drift = make(bitset, len(sc.group))
		sc.before = make(bitset, len(sc.group))
	}
}

// sets returns n bitsets the size of group, kept in *pool from pass to
// pass (made anew when the session ids outgrew them). A scan leaves its
// group sets empty.
func (sc *scratch) sets(pool *[]bitset, n int) []bitset {
	for len(*pool) < n {
		*pool = append(*pool, nil)
	}
	out := (*pool)[:n]
	for i := range out {
		if len(out[i]) != len(sc.group) {
			out[i] = make(bitset, len(sc.group))
		}
	}
	return out
}

// side picks which calls an impact counts. A mixed fleet's variant is
// answered twice, once per side: the calls its digests were made with
// (the variant served those sessions) and those made with the baseline's.
type side uint8

const (
	allCalls     side = iota // a drift, a query: every call of the tool
	variantSide              // only calls with the variant's digest: hurt now
	baselineSide             // only calls with the baseline's: at risk on convergence
)

// status is what the side means on a mixed fleet's impact (none for a drift).
func (s side) status() string {
	switch s {
	case variantSide:
		return semconv.ImpactStatusHurtNow
	case baselineSide:
		return semconv.ImpactStatusAtRiskOnConvergence
	}
	return ""
}

// impact computes what a drift of target means for the callers of its
// changed tools within span before now. previous and current are the tool
// digests before and after. With changeAt (unix seconds, the tools' last
// change) each agent's sessions are classified by their recovery. With a
// side other than allCalls, current is a mixed fleet's variant, not yet the
// server's contract, and only that side's calls count: calls made with the
// variant's digests were served it, whatever the staleness judgement said
// of them (ahead of the probes) when they came.
func (st *state) impact(target *server, changes []toolChange, previous, current map[string]string, now time.Time, span time.Duration, changeAt uint32, sd side) driftImpact {
	ix := st.index
	sc := &st.scratch
	sc.grow(ix.sessions.span())
	clear(sc.drift)
	win := window{
		cutoff:   unixSec(now.Add(-span).UnixNano()),
		recent:   unixSec(now.Add(-st.cfg.RecentWindow).UnixNano()),
		changeAt: changeAt,
		side:     sd,
	}
	servers := st.serverIDs(target)
	var out driftImpact
	agentsSeen := map[uint32]struct{}{}
	for _, ch := range changes {
		ti := toolImpact{toolChange: ch}
		win.oldID, win.newID = digestID(ix, previous[ch.tool]), digestID(ix, current[ch.tool])
		win.seenID = digestID(ix, target.provisional[ch.tool])
		win.only = win.newID
		if sd == baselineSide {
			win.only = win.oldID
		}
		for agent, buckets := range st.bucketsByAgent(servers, target, ch.tool) {
			ai := st.scanGroup(buckets, &win)
			ai.agent = ix.agents.value(agent)
			if ai.calls == 0 {
				continue
			}
			ai.risk, ai.status = sideRisk(ch.severity, &ai, sd), sd.status()
			agentsSeen[agent] = struct{}{}
			out.calls += ai.calls
			ti.agents = append(ti.agents, ai)
		}
		sortAgents(ti.agents)
		out.tools = append(out.tools, ti)
	}
	out.agents = len(agentsSeen)
	sc.drift.clear(0)
	out.sessions = sc.drift.count()
	return out
}

// sortAgents orders one tool's agents by risk, then calls, then name.
func sortAgents(agents []agentImpact) {
	slices.SortFunc(agents, func(a, b agentImpact) int {
		if c := cmp.Compare(riskRank(a.risk), riskRank(b.risk)); c != 0 {
			return c
		}
		if c := cmp.Compare(b.calls, a.calls); c != 0 {
			return c
		}
		return cmp.Compare(a.agent, b.agent)
	})
}

// scanGroup adds up the calls in the buckets of one (tool, agent), counts
// its distinct sessions and adds them to the drift's set. This is the loop
// that runs over every entry of a changed tool, so it does the least per
// entry: it only marks the session's bit, and the bits are counted after
// the loop, by popcount for a large group, or by a second walk over a small
// group's entries (still in cache) when that is cheaper than the whole set.
// With a known change (w.changeAt) the same loop gathers the sessions'
// recovery: it marks the sessions that called before the change, and hands
// the few entries with calls after it to sc.after.
func (st *state) scanGroup(buckets []uint32, w *window) agentImpact {
	ix, sc := st.index, &st.scratch
	group, before, after := sc.group, sc.before, &sc.after
	cutoff, recentCut, oldID, newID, seenID := max(w.cutoff, 1), w.recent, w.oldID, w.newID, w.seenID
	changeAt := w.changeAt
	if changeAt > 0 {
		after.reset(w, ix.sessions.span())
	}
	var t tally
	sample := newSessionSample(st.cfg.MaxSessionsPerRecord)
	scanned := 0
	for _, bid := range buckets {
		entries := ix.buckets[bid].entries
		scanned += len(entries)
		// Newest entries sit at the end: walking backwards fills the sample
		// early and then rarely touches it.
		for i := len(entries) - 1; i >= 0; i-- {
			e := &entries[i]
			if e.last < cutoff { // free slots are zero: skipped here too
				continue
			}
			if w.side != allCalls && e.digest != w.only {
				continue // the other side's calls, or neither's
			}
			ahead := int64(e.ahead)
			if w.side == variantSide {
				ahead = 0 // served the variant: new, not ahead
			}
			class := classOther
			if e.digest == oldID {
				class = classBefore
			} else if e.digest == newID || e.digest == seenID {
				class = classNew
			}
			t.add(e, class, ahead)
			if e.last >= recentCut {
				t.recentByClass.add(e, class, ahead)
			}
			group.mark(e.session)
			if e.last > sample.floor && e.session != 0 {
				sample.offer(e.session, e.last)
			}
			if changeAt > 0 && e.session != 0 {
				if e.first < changeAt {
					before.mark(e.session)
				}
				if e.last >= changeAt {
					after.note(e)
				}
			}
		}
	}
	var rec recovery
	if changeAt > 0 {
		rec = after.classify(before)
	}
	sessions := 0
	if scanned < len(group)/8 {
		for _, bid := range buckets {
			for i := range ix.buckets[bid].entries {
				e := &ix.buckets[bid].entries[i]
				if e.last >= cutoff && e.session != 0 && group.clear(e.session) {
					sessions++
					sc.drift.mark(e.session)
					before.clear(e.session)
				}
			}
		}
		group.clear(0)
	} else {
		group.clear(0) // "no session" is not a session
		sessions = group.drainInto(sc.drift, before)
	}
	if changeAt > 0 {
		rec.idle = sessions - len(after.calls)
	}
	ai := t.impact()
	ai.recovery, ai.sessions, ai.sessionSample = rec, sessions, sample.ids(ix.sessions)
	return ai
}

// Classes of calls (tally): with a digest neither side's, with the previous
// one (before the change), with the current one (or one a prompt probe saw
// served); judged stale; judged ahead.
const (
	classOther = iota
	classBefore
	classNew
	classStale
	classAhead
)

// tally adds up the calls of one (tool, agent) by class, all and recent
// ones: array slots rather than ten variables, which would not fit in
// registers.
type tally struct {
	byClass, recentByClass classes
	errors, timed          int64
	latency                uint64
	last                   uint32
}

// add counts the calls of e: ahead of them judged ahead (0 when the side
// says they were served), the stale ones as stale, the rest in class. It
// runs for every entry scanned: small enough to inline. (The scan adds the
// recent calls to recentByClass itself.)
func (t *tally) add(e *entry, class int, ahead int64) {
	t.errors += int64(e.errors)
	t.timed += int64(e.timed)
	t.latency += e.latency
	t.last = max(t.last, e.last)
	t.byClass.add(e, class, ahead)
}

// classes counts calls by class.
type classes [5]int64

func (c *classes) add(e *entry, class int, ahead int64) {
	stale := int64(e.stale)
	c[class] += max(int64(e.calls)-stale-ahead, 0)
	c[classStale] += stale
	c[classAhead] += ahead
}

func (c *classes) sum() int64 { return c[0] + c[1] + c[2] + c[3] + c[4] }

// impact is the tally as an agent's impact, without sessions.
func (t *tally) impact() agentImpact {
	return agentImpact{
		calls:          t.byClass.sum(),
		errors:         t.errors,
		last:           t.last,
		unknownCalls:   t.byClass[classOther],
		beforeCalls:    t.byClass[classBefore],
		newCalls:       t.byClass[classNew],
		staleCalls:     t.byClass[classStale],
		aheadCalls:     t.byClass[classAhead],
		recentCalls:    t.recentByClass.sum(),
		recentOldCalls: t.recentByClass[classBefore] + t.recentByClass[classStale],
		timed:          t.timed,
		latency:        t.latency,
	}
}

// window holds the bounds and digest ids one tool's scan compares against.
type window struct {
	cutoff, recent uint32
	oldID, newID   uint32
	seenID         uint32 // a digest a prompt probe saw served, not confirmed yet
	changeAt       uint32 // the tool's last change, unix seconds; 0: no recovery asked
	side           side   // with variantSide or baselineSide, newID is a mixed fleet's variant (see impact)
	only           uint32 // the digest the side counts (newID or oldID)
}

// noDigest is an id no entry has: the digest was never seen on a span.
const noDigest = ^uint32(0)

func digestID(ix *index, d string) uint32 {
	if d == "" {
		return noDigest
	}
	if id, ok := ix.digests.lookup(d); ok {
		return id
	}
	return noDigest
}

// risk levels (docs/mcpimpact.md): high when a breaking change meets calls
// made with the previous definition, or stale ones, within recent_window; medium when a
// breaking change had callers within the window, or a warning change had
// callers within recent_window; low otherwise (and for any other severity,
// or none: the control plane asks about tools that did not change).
func risk(severity string, ai *agentImpact) string {
	breaking := severity == semconv.DriftSeverityBreaking
	warning := severity == semconv.DriftSeverityWarning
	switch {
	case breaking && ai.recentOldCalls > 0:
		return semconv.ImpactRiskHigh
	case breaking && ai.calls > 0, warning && ai.recentCalls > 0:
		return semconv.ImpactRiskMedium
	}
	return semconv.ImpactRiskLow
}

// sideRisk rates one side of a mixed fleet's variant (risk for a drift).
// The sessions the variant served meet its change now, as calls with the
// previous definition meet a drift's: high when breaking and recent. Those
// the baseline served meet it only if the fleet converges on the variant:
// one level lower (medium when breaking, low when a warning), so the
// on-call reader sees who is hurt now apart from who will be.
func sideRisk(severity string, ai *agentImpact, sd side) string {
	switch sd {
	case variantSide:
		hurt := *ai
		hurt.recentOldCalls = ai.recentCalls
		return risk(severity, &hurt)
	case baselineSide:
		if severity == semconv.DriftSeverityBreaking && ai.calls > 0 {
			return semconv.ImpactRiskMedium
		}
		return semconv.ImpactRiskLow
	}
	return risk(severity, ai)
}

func riskRank(r string) int {
	switch r {
	case semconv.ImpactRiskHigh:
		return 0
	case semconv.ImpactRiskMedium:
		return 1
	}
	return 2
}

// serverIDs returns the index server ids whose identity resolves to target.
func (st *state) serverIDs(target *server) []uint32 {
	var ids []uint32
	for id := uint32(1); int(id) < st.index.servers.span(); id++ {
		if !st.index.servers.held(id) {
			continue
		}
		if st.resolver.target(st.contracts, st.index.servers, id) == target {
			ids = append(ids, id)
		}
	}
	return ids
}

// bucketsByAgent gathers the buckets holding calls of tool on target, by
// agent. Calls whose span named no server at all count when target is the
// only known server that ever offered a tool of that name.
func (st *state) bucketsByAgent(servers []uint32, target *server, tool string) map[uint32][]uint32 {
	ix := st.index
	toolID, ok := ix.tools.lookup(tool)
	if !ok || toolID == 0 {
		return nil
	}
	if st.contracts.soleOwner(tool) == target {
		servers = append(servers, 0)
	}
	byAgent := map[uint32][]uint32{}
	for _, sid := range servers {
		for _, bid := range ix.byTool[toolKey{sid, toolID}] {
			agent := ix.buckets[bid].key.agent
			byAgent[agent] = append(byAgent[agent], bid)
		}
	}
	return byAgent
}

// sessionSample keeps the n most recently active distinct sessions.
type sessionSample struct {
	n     int
	items []sampled // newest first
	floor uint32    // a call must be later than this to enter: the oldest kept once full
}

type sampled struct {
	session uint32
	last    uint32
}

func newSessionSample(n int) sessionSample {
	if n == 0 {
		return sessionSample{floor: ^uint32(0)} // takes nothing
	}
	return sessionSample{n: n}
}

func (s *sessionSample) offer(session, last uint32) {
	if last <= s.floor {
		return
	}
	for i := range s.items {
		if s.items[i].session == session {
			if last <= s.items[i].last {
				return
			}
			s.items = slices.Delete(s.items, i, i+1)
			break
		}
	}
	i, _ := slices.BinarySearchFunc(s.items, last, func(it sampled, t uint32) int { return cmp.Compare(t, it.last) })
	s.items = slices.Insert(s.items, i, sampled{session, last})
	if len(s.items) > s.n {
		s.items = s.items[:s.n]
	}
	if len(s.items) == s.n {
		s.floor = s.items[s.n-1].last
	}
}

func (s *sessionSample) ids(sessions *interner[string]) []string {
	out := make([]string, len(s.items))
	for i, it := range s.items {
		out[i] = sessions.value(it.session)
	}
	return out
}
