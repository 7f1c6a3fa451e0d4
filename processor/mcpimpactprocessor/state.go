package mcpimpactprocessor

import (
	"math"
	"slices"
	"time"
)

// maxClockSkew is how far in the future a span may start before its time is
// taken as now: a skewed clock must not keep an entry alive past the window.
const maxClockSkew = 5 * time.Minute

// state is what the traces and the logs path share: the impact index, the
// current-digest table, and the caches between them. It is not safe for
// concurrent use; the processor serializes access.
type state struct {
	cfg        *Config
	index      *index
	contracts  *contracts
	resolver   resolver
	scratch    scratch
	nextExpiry time.Time
}

func newState(cfg *Config) *state {
	return &state{cfg: cfg, index: newIndex(cfg.MaxIndexEntries), contracts: newContracts()}
}

// judgement of one call, for the span and the stale-call metric.
type judgement struct {
	verdict
	server string // the matched target's name, or what the span says
	target *server
}

// observe indexes tool calls and judges the staleness of those that carry a
// digest. out[i] is the judgement of calls[i].
func (st *state) observe(calls []toolCall, now time.Time, out []judgement) []judgement {
	st.expireIfDue(now)
	cutoff := now.Add(-st.cfg.Window).UnixNano()
	latest := now.Add(maxClockSkew).UnixNano()
	cutoffSec := unixSec(cutoff)
	for i := range calls {
		c := &calls[i]
		if c.at > latest {
			c.at = now.UnixNano()
		}
		j := st.judge(c)
		indexed := !c.serverSide || st.cfg.IndexServerSpans
		if indexed && j.target != nil {
			j.target.countUsage(c.key.tool, c.key.digest, c.at, now)
		}
		if c.at >= cutoff && indexed {
			at := unixSec(c.at)
			e := entry{first: at, last: at, calls: 1}
			if c.failed {
				e.errors = 1
			}
			if c.latency >= 0 {
				e.timed, e.latency = 1, uint64(c.latency)
			}
			switch j.state {
			case judgedStale:
				e.stale = 1
			case judgedAhead:
				e.ahead = 1
			}
			st.index.record(&c.key, e, cutoffSec)
		}
		out = append(out, j)
	}
	return out
}

// judge decides one call. A call the proxy or the guard refused as stale is
// stale whatever the table says: the refusal had the stronger evidence
// (its arguments, or the session's own listings).
func (st *state) judge(c *toolCall) judgement {
	target := st.target(c.key.server)
	j := judgement{server: c.key.server.label(), target: target}
	if target != nil {
		j.server = target.name
		if c.key.digest != "" {
			j.verdict = target.judge(c.key.tool, c.at, c.key.digest)
		}
	}
	if c.guardStale {
		j.state = judgedStale
		if target != nil {
			j.known = true
			j.current = target.judge(c.key.tool, c.at, "").current
		}
	}
	return j
}

// learned re-judges the index's calls of target after a snapshot or a
// drift changed the histories of tools: ahead calls settle, and calls with
// a digest the listing shows superseded at their time become stale.
func (st *state) learned(target *server, tools []string, now time.Time) []rejudged {
	st.settle(target)
	return st.supersede(target, tools, now)
}

// settle re-judges the calls of target that were judged ahead, once a probe
// or a snapshot has told more: each becomes current (the server serves its
// digest) or unknown. Settling never makes a call stale (supersede does,
// when a change the processor learns of later supersedes its digest).
func (st *state) settle(target *server) {
	ix := st.index
	if ix.ahead == 0 {
		return
	}
	servers := map[uint32]bool{}
	for _, id := range st.serverIDs(target) {
		servers[id] = true
	}
	left := 0
	for _, b := range ix.buckets {
		if b == nil {
			continue
		}
		mine := servers[b.key.server]
		tool := ""
		for i := range b.entries {
			e := &b.entries[i]
			if e.ahead == 0 {
				continue
			}
			if mine {
				if tool == "" {
					tool = ix.tools.value(b.key.tool)
				}
				at := int64(e.last) * int64(time.Second)
				if v := target.judge(tool, at, ix.digests.value(e.digest)); v.state != judgedAhead {
					e.ahead = 0
					continue
				}
			}
			left++
		}
	}
	ix.ahead = left
}

// rejudged counts the calls of one (tool, agent) that supersede found stale.
type rejudged struct {
	tool, agent string
	calls       int64
}

// supersede re-judges the index's calls of target's tools whose history a
// listing just changed: a call made with a digest the server had already
// replaced, judged current when it was made because the processor learned
// of the change later (a drift's time is the first observation of the new
// definition; the event lands seconds after it), is stale by digest
// evidence, and now counts as stale in the index, the impact and the
// control plane. Its span, exported already, still says current.
//
// An entry aggregates a session's calls of one digest, so how many of its
// calls came after the change is known only when all of them did (its
// first call was already in the superseded run): then all count. An entry
// that straddles the change (or a run boundary) counts its latest call
// only, when that is not counted stale already: a lower bound, so the red
// number never counts a call made while the server still served its
// definition. Judging at whole seconds keeps a call within the change's
// second out as well. Calls without a server identity of their own, never
// judged, are left alone. It returns what it re-judged, for the stale-call
// metric.
func (st *state) supersede(target *server, tools []string, now time.Time) []rejudged {
	if target == nil || len(tools) == 0 {
		return nil
	}
	ix := st.index
	cutoff := unixSec(now.Add(-st.cfg.Window).UnixNano())
	servers := st.serverIDs(target)
	var out []rejudged
	for _, tool := range tools {
		toolID, ok := ix.tools.lookup(tool)
		if !ok || toolID == 0 {
			continue
		}
		for _, sid := range servers {
			for _, bid := range ix.byTool[toolKey{sid, toolID}] {
				b := ix.buckets[bid]
				if n := st.supersedeBucket(target, tool, b.entries, cutoff); n > 0 {
					out = append(out, rejudged{tool: tool, agent: ix.agents.value(b.key.agent), calls: n})
				}
			}
		}
	}
	return out
}

// supersedeBucket is supersede over one bucket's entries; it returns how
// many calls became stale.
func (st *state) supersedeBucket(target *server, tool string, entries []entry, cutoff uint32) int64 {
	var n int64
	for i := range entries {
		e := &entries[i]
		rest := int64(e.calls) - int64(e.stale) - int64(e.ahead)
		if e.calls == 0 || e.digest == 0 || e.last < cutoff || rest <= 0 {
			continue
		}
		digest := st.index.digests.value(e.digest)
		last := int64(e.last) * int64(time.Second)
		if target.judge(tool, last, digest).state != judgedStale {
			continue
		}
		first := int64(e.first) * int64(time.Second)
		h := target.tools[tool]
		if target.judge(tool, first, digest).state == judgedStale && runAt(h, first) == runAt(h, last) {
			e.stale += uint32(rest) // every call came after the change
			n += rest
		} else if e.stale == 0 || e.staleAgo > 0 {
			e.stale++ // the latest call, at least, came after it
			n++
		} else {
			continue
		}
		e.staleAgo = 0
	}
	return n
}

// runAt is the index in h of the version in effect at time at; -1 before
// the first.
func runAt(h []version, at int64) int {
	i, _ := slices.BinarySearchFunc(h, at, func(v version, t int64) int {
		if v.since <= t {
			return -1
		}
		return 1
	})
	return i - 1
}

// target resolves a span identity, through the cache when the index holds it.
func (st *state) target(id identity) *server {
	if sid, ok := st.index.servers.lookup(id); ok {
		return st.resolver.target(st.contracts, st.index.servers, sid)
	}
	return st.contracts.resolve(id)
}

// expireIfDue drops entries that left the window, at most once per
// hundredth of the window: entries outlive it by at most that much, and the
// drift-time scan ignores them anyway.
func (st *state) expireIfDue(now time.Time) {
	if now.Before(st.nextExpiry) {
		return
	}
	st.index.expire(unixSec(now.Add(-st.cfg.Window).UnixNano()))
	st.nextExpiry = now.Add(max(st.cfg.Window/100, time.Second))
}

// unixSec converts unix nanoseconds to the index's unix seconds.
func unixSec(ns int64) uint32 {
	s := ns / int64(time.Second)
	switch {
	case s < 0:
		return 0
	case s > math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(s)
}
