package mcpimpactprocessor

import (
	"cmp"
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
	agent              string // "" when the spans named none
	sessions           int
	calls, errors      int64
	last               uint32 // unix seconds
	oldCalls, newCalls int64  // calls with the tool's previous / current digest
	unknownCalls       int64  // calls without a digest, or with another one
	recentCalls        int64  // calls within recent_window
	recentOldCalls     int64  // of those, with the previous digest
	sessionSample      []string
	risk               string
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

// scratch holds the drift-time scan's working memory between drifts.
type scratch struct {
	agentStamp, driftStamp []uint32 // by session id: last epoch that counted the session
	agentEpoch, driftEpoch uint32
}

func (sc *scratch) grow(n int) {
	if len(sc.agentStamp) < n {
		n = max(n, 2*len(sc.agentStamp))
		sc.agentStamp = append(sc.agentStamp, make([]uint32, n-len(sc.agentStamp))...)
		sc.driftStamp = append(sc.driftStamp, make([]uint32, n-len(sc.driftStamp))...)
	}
}

// next advances an epoch, clearing its stamps when the counter wraps.
func next(epoch *uint32, stamps []uint32) uint32 {
	*epoch++
	if *epoch == 0 {
		clear(stamps)
		*epoch = 1
	}
	return *epoch
}

// impact computes what a drift of target means for the callers of its
// changed tools. previous and current are the tool digests before and after.
func (st *state) impact(target *server, changes []toolChange, previous, current map[string]string, now time.Time) driftImpact {
	ix := st.index
	sc := &st.scratch
	sc.grow(ix.sessions.span())
	driftEpoch := next(&sc.driftEpoch, sc.driftStamp)
	win := window{
		cutoff: unixSec(now.Add(-st.cfg.Window).UnixNano()),
		recent: unixSec(now.Add(-st.cfg.RecentWindow).UnixNano()),
	}
	servers := st.serverIDs(target)
	var out driftImpact
	agentsSeen := map[uint32]struct{}{}
	for _, ch := range changes {
		ti := toolImpact{toolChange: ch}
		win.oldID, win.newID = digestID(ix, previous[ch.tool]), digestID(ix, current[ch.tool])
		for agent, buckets := range st.bucketsByAgent(servers, target, ch.tool) {
			ai := agentImpact{agent: ix.agents.value(agent)}
			agentEpoch := next(&sc.agentEpoch, sc.agentStamp)
			sample := newSessionSample(st.cfg.MaxSessionsPerRecord)
			for _, bid := range buckets {
				entries := ix.buckets[bid].entries
				// Newest entries sit at the end: walking backwards fills
				// the sample early and then rarely touches it.
				for i := len(entries) - 1; i >= 0; i-- {
					e := &entries[i]
					if e.calls == 0 || e.last < win.cutoff {
						continue
					}
					ai.add(e, &win)
					if e.session == 0 {
						continue
					}
					if sc.agentStamp[e.session] != agentEpoch {
						sc.agentStamp[e.session] = agentEpoch
						ai.sessions++
					}
					sample.offer(e.session, e.last)
					if sc.driftStamp[e.session] != driftEpoch {
						sc.driftStamp[e.session] = driftEpoch
						out.sessions++
					}
				}
			}
			if ai.calls == 0 {
				continue
			}
			ai.sessionSample = sample.ids(ix.sessions)
			ai.risk = risk(ch.severity, &ai)
			agentsSeen[agent] = struct{}{}
			out.calls += ai.calls
			ti.agents = append(ti.agents, ai)
		}
		slices.SortFunc(ti.agents, func(a, b agentImpact) int {
			if c := cmp.Compare(riskRank(a.risk), riskRank(b.risk)); c != 0 {
				return c
			}
			if c := cmp.Compare(b.calls, a.calls); c != 0 {
				return c
			}
			return cmp.Compare(a.agent, b.agent)
		})
		out.tools = append(out.tools, ti)
	}
	out.agents = len(agentsSeen)
	return out
}

// window holds the bounds and digest ids one tool's scan compares against.
type window struct {
	cutoff, recent uint32
	oldID, newID   uint32
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

func (ai *agentImpact) add(e *entry, w *window) {
	calls := int64(e.calls)
	ai.calls += calls
	ai.errors += int64(e.errors)
	ai.last = max(ai.last, e.last)
	recent := e.last >= w.recent
	if recent {
		ai.recentCalls += calls
	}
	switch e.digest {
	case w.oldID:
		ai.oldCalls += calls
		if recent {
			ai.recentOldCalls += calls
		}
	case w.newID:
		ai.newCalls += calls
	default:
		ai.unknownCalls += calls
	}
}

// risk levels (docs/mcpimpact.md): high when a breaking change meets calls
// made with the previous definition within recent_window; medium when a
// breaking change had callers within the window, or a warning change had
// callers within recent_window; low otherwise.
func risk(severity string, ai *agentImpact) string {
	breaking := severity == semconv.DriftSeverityBreaking
	switch {
	case breaking && ai.recentOldCalls > 0:
		return semconv.ImpactRiskHigh
	case breaking && ai.calls > 0, ai.recentCalls > 0:
		return semconv.ImpactRiskMedium
	}
	return semconv.ImpactRiskLow
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
		if st.index.servers.refs[id] == 0 {
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
}

type sampled struct {
	session uint32
	last    uint32
}

func newSessionSample(n int) sessionSample { return sessionSample{n: n} }

func (s *sessionSample) offer(session, last uint32) {
	if s.n == 0 || (len(s.items) == s.n && last <= s.items[len(s.items)-1].last) {
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
}

func (s *sessionSample) ids(sessions *interner[string]) []string {
	out := make([]string, len(s.items))
	for i, it := range s.items {
		out[i] = sessions.value(it.session)
	}
	return out
}
