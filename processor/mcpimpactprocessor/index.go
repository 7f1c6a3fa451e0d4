package mcpimpactprocessor

import (
	"math"
)

// The impact index aggregates tool calls by (server, tool, agent, session,
// digest). It is laid out for memory and for the drift-time scan:
//
//   - every string is interned (4-byte ids, stored once, freed with its last
//     reference);
//   - entries live in buckets, one bucket per (server, tool, agent), each a
//     contiguous slice of 24-byte entries, so answering a drift reads only
//     the changed tool's buckets, sequentially;
//   - one map finds an entry from its key for the update of a repeated call.
//
// Nothing orders entries by time: expiry and eviction are sweeps over all
// entries (sequential, a few milliseconds for a million), run when the window
// moves on or when the index is full. A full index sweeps out a sixteenth of
// its capacity at once, oldest first, so the sweep cost is spread over many
// insertions.

// entry aggregates the calls of one key. The server, tool and agent are its
// bucket's; the entry holds the rest.
type entry struct {
	latency uint64 // sum of the timed calls' span durations, microseconds
	session uint32 // sessions id
	digest  uint32 // digests id; 0: the spans carried no digest
	calls   uint32 // 0 marks a free slot
	errors  uint32
	timed   uint32 // calls whose span had a duration
	first   uint32 // unix seconds
	last    uint32 // unix seconds
	stale   uint32 // calls judged stale (their spans say mcpdrift.tool.stale=true)
	ahead   uint32 // calls judged ahead, waiting for a probe to settle them
	// Seconds from the entry's latest stale call, and from its latest
	// failed one, to its last call (up to maxAgo; 0 when it has none): its
	// calls may straddle a change the index learns of only later, and a
	// session's recovery asks whether its latest call after the change was
	// stale, and whether one after it failed. Two uint16 keep the entry at
	// 48 bytes.
	staleAgo, errorAgo uint16
}

// maxAgo caps staleAgo and errorAgo: a stale or failed call more than 18 h
// before its entry's last call is taken as 18 h before it.
const maxAgo = math.MaxUint16

// lastStale is the time of the entry's latest stale call; 0: none.
func (e *entry) lastStale() uint32 { return e.lastOf(e.stale, e.staleAgo) }

// lastError is the time of the entry's latest failed call; 0: none.
func (e *entry) lastError() uint32 { return e.lastOf(e.errors, e.errorAgo) }

func (e *entry) lastOf(n uint32, ago uint16) uint32 {
	if n == 0 {
		return 0
	}
	return e.last - min(uint32(ago), e.last-e.first)
}

// lastFresh is the time of the entry's latest call that was not stale
// when that was its last call; 0 otherwise (its latest stale call came
// last, or in the same second).
func (e *entry) lastFresh() uint32 {
	if e.calls > e.stale && (e.stale == 0 || e.staleAgo > 0) {
		return e.last
	}
	return 0
}

// ago is how long before last the latest of n calls at t was, capped.
func ago(last, t, n uint32) uint16 {
	if n == 0 {
		return 0
	}
	return uint16(min(last-t, maxAgo))
}

type bucketKey struct{ server, tool, agent uint32 }

type toolKey struct{ server, tool uint32 }

type entryKey struct{ bucket, session, digest uint32 }

type bucket struct {
	key     bucketKey
	entries []entry
	free    []uint32 // free slots in entries, reused first
	live    int
}

// callKey is a tool call's key as read from a span.
type callKey struct {
	server  identity // what the span says about its server
	tool    string
	agent   string
	session string
	digest  string
}

// removals counts entries removed since the counts were last taken.
type removals struct{ capacity, window int }

type index struct {
	max int

	servers                          *interner[identity]
	tools, agents, sessions, digests *interner[string]

	buckets     []*bucket // by bucket id; nil: free id
	freeBuckets []uint32
	byKey       map[bucketKey]uint32
	byTool      map[toolKey][]uint32
	slots       map[entryKey]uint32

	size    int
	ahead   int    // entries with ahead calls: a re-judge has work only when > 0
	newest  uint32 // latest call time seen, unix seconds
	oldest  uint32 // no live entry's last call is earlier (a bound, refreshed by sweeps)
	removed removals
}

func newIndex(maxEntries int) *index {
	return &index{
		max:      maxEntries,
		servers:  newInterner(identity.clone),
		tools:    newStrings(),
		agents:   newStrings(),
		sessions: newStrings(),
		digests:  newStrings(),
		byKey:    map[bucketKey]uint32{},
		byTool:   map[toolKey][]uint32{},
		slots:    map[entryKey]uint32{},
	}
}

// record merges calls (an entry's counts: calls made between unix seconds
// first and last, errors of them failed, timed of them with a total latency)
// into the entry of k. Entries whose last call is before cutoff are expired
// and go first when room is needed.
func (ix *index) record(k *callKey, calls entry, cutoff uint32) {
	if calls.last > ix.newest {
		ix.newest = calls.last
	}
	if calls.last < ix.oldest || ix.size == 0 {
		ix.oldest = calls.last
	}
	if calls.ahead > 0 {
		ix.ahead++ // an upper bound: settle recounts
	}
	if e := ix.find(k); e != nil {
		e.add(&calls)
		return
	}
	if ix.size >= ix.max {
		ix.makeRoom(cutoff)
	}
	ix.insert(k, calls)
}

// find returns the entry of k, or nil, without changing anything.
func (ix *index) find(k *callKey) *entry {
	srv, ok1 := ix.servers.lookup(k.server)
	tl, ok2 := ix.tools.lookup(k.tool)
	ag, ok3 := ix.agents.lookup(k.agent)
	ses, ok4 := ix.sessions.lookup(k.session)
	dig, ok5 := ix.digests.lookup(k.digest)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return nil
	}
	bid, ok := ix.byKey[bucketKey{srv, tl, ag}]
	if !ok {
		return nil
	}
	slot, ok := ix.slots[entryKey{bid, ses, dig}]
	if !ok {
		return nil
	}
	return &ix.buckets[bid].entries[slot]
}

// insert stores a new entry for k, which must not have one yet.
func (ix *index) insert(k *callKey, e entry) {
	bid := ix.bucketFor(k)
	b := ix.buckets[bid]
	e.session = ix.sessions.acquire(k.session)
	e.digest = ix.digests.acquire(k.digest)
	var slot uint32
	if n := len(b.free); n > 0 {
		slot = b.free[n-1]
		b.free = b.free[:n-1]
		b.entries[slot] = e
	} else {
		slot = uint32(len(b.entries))
		b.entries = append(b.entries, e)
	}
	b.live++
	ix.size++
	ix.slots[entryKey{bid, e.session, e.digest}] = slot
}

// bucketFor returns the bucket id of k's (server, tool, agent), creating the
// bucket if needed. A bucket holds one reference on each of its three ids.
func (ix *index) bucketFor(k *callKey) uint32 {
	key := bucketKey{ix.servers.acquire(k.server), ix.tools.acquire(k.tool), ix.agents.acquire(k.agent)}
	if bid, ok := ix.byKey[key]; ok {
		ix.releaseKey(key)
		return bid
	}
	b := &bucket{key: key}
	var bid uint32
	if n := len(ix.freeBuckets); n > 0 {
		bid = ix.freeBuckets[n-1]
		ix.freeBuckets = ix.freeBuckets[:n-1]
		ix.buckets[bid] = b
	} else {
		bid = uint32(len(ix.buckets))
		ix.buckets = append(ix.buckets, b)
	}
	ix.byKey[key] = bid
	tk := toolKey{key.server, key.tool}
	ix.byTool[tk] = append(ix.byTool[tk], bid)
	return bid
}

// remove frees one slot; it reports whether that emptied (and freed) the bucket.
func (ix *index) remove(bid, slot uint32) (bucketFreed bool) {
	b := ix.buckets[bid]
	e := &b.entries[slot]
	delete(ix.slots, entryKey{bid, e.session, e.digest})
	ix.sessions.release(e.session)
	ix.digests.release(e.digest)
	*e = entry{}
	b.free = append(b.free, slot)
	b.live--
	ix.size--
	if b.live > 0 {
		return false
	}
	ix.freeBucket(bid)
	return true
}

func (ix *index) freeBucket(bid uint32) {
	b := ix.buckets[bid]
	delete(ix.byKey, b.key)
	tk := toolKey{b.key.server, b.key.tool}
	ids := ix.byTool[tk]
	for i, id := range ids {
		if id == bid {
			ids[i] = ids[len(ids)-1]
			ids = ids[:len(ids)-1]
			break
		}
	}
	if len(ids) == 0 {
		delete(ix.byTool, tk)
	} else {
		ix.byTool[tk] = ids
	}
	ix.releaseKey(b.key)
	ix.buckets[bid] = nil
	ix.freeBuckets = append(ix.freeBuckets, bid)
}

func (ix *index) releaseKey(key bucketKey) {
	ix.servers.release(key.server)
	ix.tools.release(key.tool)
	ix.agents.release(key.agent)
}

// expire removes every entry whose last call is before cutoff.
func (ix *index) expire(cutoff uint32) {
	ix.sweep(func(e *entry) (bool, bool) { return e.last < cutoff, false })
}

// histogramBins is the resolution at which makeRoom picks the oldest entries.
const histogramBins = 256

// makeRoom removes the expired entries and then the oldest ones until the
// index holds at most 15/16 of its capacity. "Oldest" is exact to 1/256 of
// the span of call times the index holds; within that, entries go in scan
// order.
func (ix *index) makeRoom(cutoff uint32) {
	target := ix.max - max(ix.max/16, 1)
	excess := ix.size - target
	if excess <= 0 {
		return
	}
	// Pass 1: how many entries are expired, and how the rest spread over
	// [cutoff, newest].
	lo := uint64(max(cutoff, ix.oldest))
	hi := max(uint64(ix.newest), lo)
	width := hi - lo + 1
	binOf := func(last uint32) int { return int((uint64(last) - lo) * histogramBins / width) }
	var hist [histogramBins]int
	expired := 0
	for _, b := range ix.buckets {
		if b == nil {
			continue
		}
		for i := range b.entries {
			e := &b.entries[i]
			switch {
			case e.calls == 0:
			case e.last < cutoff:
				expired++
			case uint64(e.last) < lo: // cannot happen while oldest is a true bound
				hist[0]++
			case uint64(e.last) > hi:
				hist[histogramBins-1]++
			default:
				hist[binOf(e.last)]++
			}
		}
	}
	// The oldest bins fill the quota; the boundary bin gives up part of its
	// entries, in scan order.
	quota := excess - expired
	boundary, partial := histogramBins, 0
	for i, n := range hist {
		if quota <= 0 {
			boundary = i
			break
		}
		if n >= quota {
			boundary, partial = i, quota
			quota = 0
			break
		}
		quota -= n
	}
	// Pass 2.
	ix.sweep(func(e *entry) (remove, capacity bool) {
		if e.last < cutoff {
			return true, false
		}
		bin := 0
		switch {
		case uint64(e.last) > hi:
			bin = histogramBins - 1
		case uint64(e.last) >= lo:
			bin = binOf(e.last)
		}
		if bin < boundary {
			return true, true
		}
		if bin == boundary && partial > 0 {
			partial--
			return true, true
		}
		return false, false
	})
}

// sweep visits every live entry and removes those drop selects, counting
// each removal as a capacity or a window removal. Buckets left sparse are
// compacted so their memory goes back. It refreshes the oldest bound.
func (ix *index) sweep(drop func(e *entry) (remove, capacity bool)) {
	oldest := ix.newest
	for bid, b := range ix.buckets {
		if b == nil {
			continue
		}
		freed := false
		for i := range b.entries {
			e := &b.entries[i]
			if e.calls == 0 {
				continue
			}
			remove, capacity := drop(e)
			if !remove {
				oldest = min(oldest, e.last)
				continue
			}
			if capacity {
				ix.removed.capacity++
			} else {
				ix.removed.window++
			}
			if ix.remove(uint32(bid), uint32(i)) {
				freed = true
				break
			}
		}
		if !freed {
			ix.compact(uint32(bid))
		}
	}
	ix.oldest = oldest
}

// compact rewrites a bucket whose slice is mostly free slots.
func (ix *index) compact(bid uint32) {
	b := ix.buckets[bid]
	if len(b.entries) < 64 || b.live*4 > len(b.entries) {
		return
	}
	entries := make([]entry, 0, b.live+b.live/4)
	for i := range b.entries {
		e := b.entries[i]
		if e.calls == 0 {
			continue
		}
		ix.slots[entryKey{bid, e.session, e.digest}] = uint32(len(entries))
		entries = append(entries, e)
	}
	b.entries = entries
	b.free = nil
}

// takeRemovals returns and resets the removal counts.
func (ix *index) takeRemovals() removals {
	r := ix.removed
	ix.removed = removals{}
	return r
}

// add merges another entry's counts into e.
func (e *entry) add(o *entry) {
	lastStale, lastError := max(e.lastStale(), o.lastStale()), max(e.lastError(), o.lastError())
	e.calls = satAdd(e.calls, o.calls)
	e.errors = satAdd(e.errors, o.errors)
	e.timed = satAdd(e.timed, o.timed)
	e.stale = satAdd(e.stale, o.stale)
	e.ahead = satAdd(e.ahead, o.ahead)
	if e.latency > math.MaxUint64-o.latency {
		e.latency = math.MaxUint64
	} else {
		e.latency += o.latency
	}
	e.first = min(e.first, o.first)
	e.last = max(e.last, o.last)
	e.staleAgo, e.errorAgo = ago(e.last, lastStale, e.stale), ago(e.last, lastError, e.errors)
}

func satAdd(a, b uint32) uint32 {
	if a > math.MaxUint32-b {
		return math.MaxUint32
	}
	return a + b
}
