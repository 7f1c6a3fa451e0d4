package mcpimpactprocessor

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// A mixed fleet's variants are answered in one pass per server: each tool
// some variant changes has its entries walked once for all the variants,
// every entry added to the slot of its digest — the baseline's (at risk on
// convergence) or a variant's (hurt now). Walked once per variant and side,
// three variants cost 4–8 impact queries of the tool
// (BenchmarkVariantImpact1M); in one pass, about one.

// variantChanges is one variant of a mixed fleet: the tools it changes at
// warning or above against the baseline, and its tool digests.
type variantChanges struct {
	changes []toolChange
	current map[string]string
}

// variantResult is who one variant affects: all, per changed tool, the
// agents whose sessions it served (status hurt_now) and then those the
// baseline served (at_risk_on_convergence), each side rated by sideRisk;
// hurt and later are the two sides alone, for their totals. Calls with
// neither digest count on no side.
type variantResult struct{ all, hurt, later driftImpact }

// maxVariantsPerPass bounds the variants one pass answers, and so the
// session sets it holds (two per variant, one per digest of a tool): a
// mixed event from elsewhere may list any number; more take more passes.
// The receiver lists at most 16.
const maxVariantsPerPass = 16

// variantsImpact answers, for each of variants, who it affects within span
// before now, against the baseline's tool digests previous.
func (st *state) variantsImpact(target *server, previous map[string]string, variants []variantChanges, now time.Time, span time.Duration) []variantResult {
	out := make([]variantResult, 0, len(variants))
	for len(variants) > 0 {
		n := min(len(variants), maxVariantsPerPass)
		out = append(out, st.variantPass(target, previous, variants[:n], now, span)...)
		variants = variants[n:]
	}
	return out
}

// digestSlot adds up, for one changed tool, the calls made with one digest,
// counted on one side, for the variants it is that side of.
type digestSlot struct {
	digest uint32
	side   side
	class  int   // the class its calls count in: before for the baseline's digest, new for a variant's
	twin   int   // the baseline's slot: that of a variant that kept its digest, whose calls count on both sides; 0: none
	sets   []int // the session sets (of the pass) it adds its sessions to
	dsts   []bitset
	agents []slotAgent
	// per (tool, agent), during its scan
	tally    tally
	sample   sessionSample
	matched  bool
	marks    []uint32 // the sessions it marked, while few: counted from here rather than by popcount
	sessions int
}

// slotAgent is one agent's calls in a slot: its impact, without risk.
type slotAgent struct {
	agent  uint32
	impact agentImpact
}

// sessionSet is the distinct sessions of one side of one or more variants
// (those whose side takes the same slots), with the words it may have set:
// a canary's sessions are few, and counting or clearing them then reads
// those words only.
type sessionSet struct {
	bits   bitset
	lo, hi int // words [lo, hi) may be set
}

func (s *sessionSet) mark(i uint32) {
	s.bits.mark(i)
	w := int(i >> 6)
	s.lo, s.hi = min(s.lo, w), max(s.hi, w+1)
}

// take counts the set and clears it.
func (s *sessionSet) take() int {
	if s.lo >= s.hi {
		return 0
	}
	words := s.bits[s.lo:s.hi]
	n := words.count()
	clear(words)
	s.lo, s.hi = len(s.bits), 0
	return n
}

// variantSides is where one variant's sides stand in a pass: for each of
// its changes, the slot of each side among the tool's slots, and the
// session set of each side.
type variantSides struct {
	hurt, later       []int
	hurtSet, laterSet int
}

// variantPass answers up to maxVariantsPerPass variants in one walk of each
// changed tool's entries.
func (st *state) variantPass(target *server, previous map[string]string, variants []variantChanges, now time.Time, span time.Duration) []variantResult {
	ix, sc := st.index, &st.scratch
	sc.grow(ix.sessions.span())
	// Each changed tool's slots: the baseline's digest first, then each
	// distinct digest variants give it (variants that agree on a tool share
	// its slot).
	slots := map[string][]digestSlot{}
	var tools []string
	picks := make([]variantSides, len(variants))
	for v, vc := range variants {
		for _, ch := range vc.changes {
			ts, seen := slots[ch.tool]
			if !seen {
				tools = append(tools, ch.tool)
				ts = []digestSlot{{digest: digestID(ix, previous[ch.tool]), side: baselineSide, class: classBefore}}
			}
			d := digestID(ix, vc.current[ch.tool])
			i := slotOf(ts, d)
			if i < 0 {
				class := classNew
				if d == ts[0].digest {
					class = classBefore // the variant left the digest alone: counted as the baseline's
				}
				ts = append(ts, digestSlot{digest: d, side: variantSide, class: class})
				i = len(ts) - 1
			}
			slots[ch.tool] = ts
			picks[v].hurt = append(picks[v].hurt, i)
			picks[v].later = append(picks[v].later, 0)
		}
	}
	for _, ts := range slots {
		if ts[0].digest != noDigest {
			ts[0].twin = max(slotOf(ts, ts[0].digest), 0)
		}
	}
	// A session set per distinct list of slots a side takes: the variants
	// that change the same tools share their at-risk side's.
	setOf := map[string]int{}
	var sets []sessionSet
	side := func(vc variantChanges, pick []int) int {
		key := make([]string, len(pick))
		for i, ch := range vc.changes {
			key[i] = fmt.Sprintf("%q/%d", ch.tool, pick[i])
		}
		slices.Sort(key)
		k := strings.Join(slices.Compact(key), " ")
		n, ok := setOf[k]
		if !ok {
			n = len(sets)
			setOf[k] = n
			sets = append(sets, sessionSet{})
		}
		for i, ch := range vc.changes {
			sl := &slots[ch.tool][pick[i]]
			if !slices.Contains(sl.sets, n) {
				sl.sets = append(sl.sets, n)
			}
		}
		return n
	}
	for v, vc := range variants {
		picks[v].hurtSet, picks[v].laterSet = side(vc, picks[v].hurt), side(vc, picks[v].later)
	}
	for i, bits := range sc.sets(&sc.sides, len(sets)) {
		sets[i] = sessionSet{bits: bits, lo: len(bits)}
	}
	for _, ts := range slots {
		for i := range ts {
			for _, n := range ts[i].sets {
				ts[i].dsts = append(ts[i].dsts, sets[n].bits)
			}
		}
	}

	win := window{cutoff: unixSec(now.Add(-span).UnixNano()), recent: unixSec(now.Add(-st.cfg.RecentWindow).UnixNano())}
	servers := st.serverIDs(target)
	for _, tool := range tools {
		ts := slots[tool]
		groups := sc.sets(&sc.slotGroups, len(ts))
		for len(sc.slotMarks) < len(ts) {
			sc.slotMarks = append(sc.slotMarks, nil)
		}
		byAgent := st.bucketsByAgent(servers, target, tool)
		for i := range ts {
			ts[i].agents = make([]slotAgent, 0, len(byAgent))
		}
		for agent, buckets := range byAgent {
			st.scanSlots(buckets, &win, agent, ts, groups, sc.slotMarks, sets)
		}
	}
	counts := make([]int, len(sets))
	for i := range sets {
		counts[i] = sets[i].take() // leaves the scratch bitsets clear
	}

	out := make([]variantResult, len(variants))
	for v, vc := range variants {
		r, pk := &out[v], &picks[v]
		r.hurt = sideImpact(slots, vc, variantSide, pk.hurt, counts[pk.hurtSet])
		r.later = sideImpact(slots, vc, baselineSide, pk.later, counts[pk.laterSet])
		r.all.tools = make([]toolImpact, len(vc.changes))
		for i := range vc.changes {
			r.all.tools[i] = toolImpact{toolChange: vc.changes[i], agents: slices.Concat(r.hurt.tools[i].agents, r.later.tools[i].agents)}
		}
	}
	return out
}

// slotOf is the index of the variant side's slot of digest among a tool's
// slots; -1: none yet.
func slotOf(ts []digestSlot, digest uint32) int {
	for i := 1; i < len(ts); i++ {
		if ts[i].digest == digest {
			return i
		}
	}
	return -1
}

// sideImpact assembles one side of variant vc from the slots it takes
// (pick, per change): per changed tool, the agents with calls, rated by
// the variant's severity of the tool and sorted, and the side's totals.
func sideImpact(slots map[string][]digestSlot, vc variantChanges, sd side, pick []int, sessions int) driftImpact {
	out := driftImpact{sessions: sessions}
	agentsSeen := map[uint32]struct{}{}
	for i, ch := range vc.changes {
		ti := toolImpact{toolChange: ch}
		for _, sa := range slots[ch.tool][pick[i]].agents {
			if ti.agents == nil {
				ti.agents = make([]agentImpact, 0, len(slots[ch.tool][pick[i]].agents))
			}
			ai := sa.impact
			ai.risk, ai.status = sideRisk(ch.severity, &ai, sd), sd.status()
			agentsSeen[sa.agent] = struct{}{}
			out.calls += ai.calls
			ti.agents = append(ti.agents, ai)
		}
		sortAgents(ti.agents)
		out.tools = append(out.tools, ti)
	}
	out.agents = len(agentsSeen)
	return out
}

// scanSlots adds up the calls in the buckets of one (tool, agent) into the
// tool's slots, in one walk: each entry goes to the slot(s) of its digest.
// A slot's distinct sessions are counted with a bitset (groups[i] for slot
// i), as in scanGroup: from the sessions it marked when they are few (a
// canary's), by popcount otherwise; they are added to the slot's session
// sets.
func (st *state) scanSlots(buckets []uint32, w *window, agent uint32, ts []digestSlot, groups []bitset, marks [][]uint32, sets []sessionSet) {
	ix := st.index
	cutoff, recentCut := max(w.cutoff, 1), w.recent
	few := len(groups[0]) / 8 // marks past this many: popcount
	for i := range ts {
		sl := &ts[i]
		sl.tally, sl.sample, sl.matched, sl.marks = tally{}, newSessionSample(st.cfg.MaxSessionsPerRecord), false, marks[i][:0]
	}
	for _, bid := range buckets {
		entries := ix.buckets[bid].entries
		for i := len(entries) - 1; i >= 0; i-- {
			e := &entries[i]
			if e.last < cutoff { // free slots are zero: skipped here too
				continue
			}
			// An entry counts in the slot of its digest (and its twin's).
			for s := 0; s < len(ts); s++ {
				sl := &ts[s]
				if e.digest != sl.digest {
					continue
				}
				ahead := int64(e.ahead)
				if sl.side == variantSide {
					ahead = 0 // served the variant: new, not ahead
				}
				sl.tally.add(e, sl.class, ahead)
				if e.last >= recentCut {
					sl.tally.recentByClass.add(e, sl.class, ahead)
				}
				sl.matched = true
				groups[s].mark(e.session)
				if len(sl.marks) <= few {
					sl.marks = append(sl.marks, e.session)
				}
				if e.last > sl.sample.floor && e.session != 0 {
					sl.sample.offer(e.session, e.last)
				}
				if sl.twin == 0 {
					break
				}
				s = sl.twin - 1
			}
		}
	}
	for s := range ts {
		sl, group := &ts[s], groups[s]
		if !sl.matched {
			continue
		}
		group.clear(0) // "no session" is not a session
		sl.sessions = 0
		if len(sl.marks) <= few {
			for _, id := range sl.marks {
				if group.clear(id) {
					sl.sessions++
					for _, n := range sl.sets {
						sets[n].mark(id)
					}
				}
			}
		} else {
			for _, d := range sl.dsts[1:] {
				group.orInto(d)
			}
			sl.sessions = group.drainInto(sl.dsts[0], nil)
			for _, n := range sl.sets {
				sets[n].lo, sets[n].hi = 0, len(sets[n].bits)
			}
		}
		ai := sl.tally.impact()
		if ai.calls == 0 {
			continue
		}
		ai.agent, ai.sessions, ai.sessionSample = ix.agents.value(agent), sl.sessions, sl.sample.ids(ix.sessions)
		sl.agents = append(sl.agents, slotAgent{agent: agent, impact: ai})
	}
	for i := range ts {
		marks[i] = ts[i].marks // its capacity, for the next
	}
}
