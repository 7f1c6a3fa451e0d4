// Package idlemap is a map of per-session state bounded two ways, for the
// parts of mcpdrift that keep state for clients which may vanish without a
// goodbye (a killed agent never sends DELETE): an entry untouched for the
// idle time is dropped, and at the cap the least recently used one goes.
//
// Use is counted in sweeps — taken only when an entry is added, at most one
// every Idle/2 — so a lookup reads no clock. A Map is not safe for
// concurrent use: its owner guards it with its own mutex, which usually
// guards more than the map.
package idlemap

import (
	"iter"
	"time"
)

// Map maps keys to values. The zero Map is empty and unbounded.
type Map[V any] struct {
	// Idle is how long an untouched entry is kept (0: for ever). It is
	// dropped after between Idle and 1.5×Idle.
	Idle time.Duration
	// Max bounds the entries (0: no bound).
	Max int
	// Busy reports an entry in use although no lookup touched it (an open
	// stream, say): idle expiry spares it. nil: none is.
	Busy func(V) bool
	// Evicted is told of every entry expiry or the cap drops (not of
	// Delete), while the owner's mutex is held.
	Evicted func(key string, v V)

	m      map[string]*entry[V]
	sweeps uint64
	swept  time.Time
	ticks  uint64 // touches so far: the order of use
}

type entry[V any] struct {
	v    V
	used uint64 // the sweep it was last touched in
	tick uint64 // the touch it was last touched in
}

func (m *Map[V]) touch(e *entry[V]) {
	m.ticks++
	e.used, e.tick = m.sweeps, m.ticks
}

// Get returns the value at key and marks it used.
func (m *Map[V]) Get(key string) (V, bool) {
	e := m.m[key]
	if e == nil {
		var zero V
		return zero, false
	}
	m.touch(e)
	return e.v, true
}

// Put sets the value at key; a new key may first drop idle entries and,
// at Max, the least recently used one.
func (m *Map[V]) Put(key string, v V) {
	if e := m.m[key]; e != nil {
		e.v = v
		m.touch(e)
		return
	}
	if m.m == nil {
		m.m, m.swept = map[string]*entry[V]{}, time.Now()
	}
	m.makeRoom()
	e := &entry[V]{v: v}
	m.touch(e)
	m.m[key] = e
}

// Delete removes key, returning what it held.
func (m *Map[V]) Delete(key string) (V, bool) {
	e := m.m[key]
	if e == nil {
		var zero V
		return zero, false
	}
	delete(m.m, key)
	return e.v, true
}

// DeleteFunc removes every entry del reports true for.
func (m *Map[V]) DeleteFunc(del func(key string, v V) bool) {
	for k, e := range m.m {
		if del(k, e.v) {
			delete(m.m, k)
		}
	}
}

// All is every entry, in no order.
func (m *Map[V]) All() iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		for k, e := range m.m {
			if !yield(k, e.v) {
				return
			}
		}
	}
}

// Len is the number of entries.
func (m *Map[V]) Len() int { return len(m.m) }

// makeRoom takes a sweep when one is due, dropping the entries untouched
// for two whole sweeps (at least Idle) that are not busy, then at Max
// drops the least recently used entry.
func (m *Map[V]) makeRoom() {
	if now := time.Now(); m.Idle > 0 && now.Sub(m.swept) >= m.Idle/2 {
		m.swept = now
		m.sweeps++
		for k, e := range m.m {
			if e.used+3 <= m.sweeps && (m.Busy == nil || !m.Busy(e.v)) {
				m.drop(k, e)
			}
		}
	}
	if m.Max <= 0 || len(m.m) < m.Max {
		return
	}
	var oldest string
	var old *entry[V]
	for k, e := range m.m {
		if old == nil || e.tick < old.tick {
			oldest, old = k, e
		}
	}
	m.drop(oldest, old)
}

func (m *Map[V]) drop(k string, e *entry[V]) {
	delete(m.m, k)
	if m.Evicted != nil {
		m.Evicted(k, e.v)
	}
}
