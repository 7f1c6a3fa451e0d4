package mcpimpactprocessor

import (
	"strings"
	"unicode/utf8"
)

// maxStringLen bounds every string the index keeps: session ids, agent, tool
// and server names come from untrusted spans.
const maxStringLen = 256

// interner maps values to small dense ids with reference counts, so index
// entries hold 4-byte ids instead of 16-byte string headers and each
// distinct value is stored once. Id 0 is the zero value; it is never counted
// or freed. Freed ids are reused, so ids stay dense and scratch arrays
// indexed by id stay small.
type interner[K comparable] struct {
	ids   map[K]uint32
	vals  []K
	refs  []uint32
	free  []uint32
	clone func(K) K // detaches a value from the batch it was read from
}

func newInterner[K comparable](clone func(K) K) *interner[K] {
	var zero K
	return &interner[K]{ids: map[K]uint32{}, vals: []K{zero}, refs: []uint32{0}, clone: clone}
}

func newStrings() *interner[string] { return newInterner(strings.Clone) }

// lookup returns the id of v without adding a reference.
func (in *interner[K]) lookup(v K) (uint32, bool) {
	var zero K
	if v == zero {
		return 0, true
	}
	id, ok := in.ids[v]
	return id, ok
}

// acquire returns the id of v and adds one reference to it.
func (in *interner[K]) acquire(v K) uint32 {
	var zero K
	if v == zero {
		return 0
	}
	if id, ok := in.ids[v]; ok {
		in.refs[id]++
		return id
	}
	v = in.clone(v)
	var id uint32
	if n := len(in.free); n > 0 {
		id = in.free[n-1]
		in.free = in.free[:n-1]
		in.vals[id] = v
		in.refs[id] = 1
	} else {
		id = uint32(len(in.vals))
		in.vals = append(in.vals, v)
		in.refs = append(in.refs, 1)
	}
	in.ids[v] = id
	return id
}

// release drops one reference; the value is forgotten with its last one.
func (in *interner[K]) release(id uint32) {
	if id == 0 {
		return
	}
	in.refs[id]--
	if in.refs[id] > 0 {
		return
	}
	var zero K
	delete(in.ids, in.vals[id])
	in.vals[id] = zero
	in.free = append(in.free, id)
}

func (in *interner[K]) value(id uint32) K { return in.vals[id] }

// held reports whether id currently stands for a value.
func (in *interner[K]) held(id uint32) bool { return in.refs[id] > 0 }

// span is one more than the highest id ever handed out: the size of a
// scratch array indexed by id.
func (in *interner[K]) span() int { return len(in.vals) }

// live is the number of distinct values held.
func (in *interner[K]) live() int { return len(in.ids) }

// clip cuts s to at most maxStringLen bytes on a rune boundary.
func clip(s string) string {
	if len(s) <= maxStringLen {
		return s
	}
	cut := maxStringLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
