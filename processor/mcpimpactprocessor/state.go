package mcpimpactprocessor

import (
	"math"
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

// settle re-judges the calls of target that were judged ahead, once a probe
// or a snapshot has told more: each becomes current (the server serves its
// digest) or unknown. A settled call never becomes stale: its span has
// left already, and the stale count must stay the count of stale spans.
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
