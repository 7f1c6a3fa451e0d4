package mcpimpactprocessor

import (
	"encoding/binary"
	"fmt"
)

// The stored index: a header, the digest table (by interner id), then every
// bucket with its live entries. Integers are unsigned varints, strings are a
// length and the bytes.

// indexMagic starts the stored index. MCPI1 (before entries kept
// latencies), MCPI2 (before they kept stale and ahead counts) and MCPI3
// (before they kept when their latest stale and failed calls were) are
// still read; what their entries lack is zero (a stale or failed call
// is taken to be the last).
const (
	indexMagic   = "MCPI4"
	indexMagicV3 = "MCPI3"
	indexMagicV2 = "MCPI2"
	indexMagicV1 = "MCPI1"
)

func encodeIndex(ix *index) []byte {
	buf := make([]byte, 0, 64+ix.size*48)
	buf = append(buf, indexMagic...)
	buf = binary.AppendUvarint(buf, uint64(ix.digests.span()))
	for id := range ix.digests.span() {
		buf = appendString(buf, ix.digests.value(uint32(id)))
	}
	live := 0
	for _, b := range ix.buckets {
		if b != nil {
			live++
		}
	}
	buf = binary.AppendUvarint(buf, uint64(live))
	for _, b := range ix.buckets {
		if b == nil {
			continue
		}
		id := ix.servers.value(b.key.server)
		for _, s := range [...]string{id.name, id.url, id.info, id.host, id.port, ix.tools.value(b.key.tool), ix.agents.value(b.key.agent)} {
			buf = appendString(buf, s)
		}
		buf = binary.AppendUvarint(buf, uint64(b.live))
		for i := range b.entries {
			e := &b.entries[i]
			if e.calls == 0 {
				continue
			}
			buf = appendString(buf, ix.sessions.value(e.session))
			for _, n := range [...]uint64{uint64(e.digest), uint64(e.calls), uint64(e.errors), uint64(e.first), uint64(e.last), uint64(e.timed), e.latency, uint64(e.stale), uint64(e.ahead), uint64(e.staleAgo), uint64(e.errorAgo)} {
				buf = binary.AppendUvarint(buf, n)
			}
		}
	}
	return buf
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// decodeIndex adds the stored entries whose last call is at or after cutoff
// to ix, through the normal path (so the capacity bound holds). It returns
// how many entries it read; on error, those before the damage are kept.
func decodeIndex(raw []byte, ix *index, cutoff uint32) (int, error) {
	r := reader{buf: raw}
	magic := string(r.take(len(indexMagic)))
	if magic != indexMagic && magic != indexMagicV3 && magic != indexMagicV2 && magic != indexMagicV1 {
		return 0, fmt.Errorf("%w: bad header", errCorrupt)
	}
	digests := make([]string, r.count(1<<24))
	for i := range digests {
		digests[i] = r.str()
	}
	read := 0
	for range r.count(1 << 32) {
		var k callKey
		k.server = identity{name: r.str(), url: r.str(), info: r.str(), host: r.str(), port: r.str()}
		k.tool, k.agent = r.str(), r.str()
		for range r.count(1 << 32) {
			k.session = r.str()
			d := r.u32()
			e := entry{calls: r.u32(), errors: r.u32(), first: r.u32(), last: r.u32()}
			if magic != indexMagicV1 {
				e.timed, e.latency = r.u32(), r.uvarint()
			}
			if magic == indexMagic || magic == indexMagicV3 {
				e.stale, e.ahead = r.u32(), r.u32()
			}
			var staleAgo, errorAgo uint32
			if magic == indexMagic {
				staleAgo, errorAgo = r.u32(), r.u32()
			}
			if r.err != nil {
				return read, r.err
			}
			if int(d) >= len(digests) || e.calls == 0 || e.first > e.last {
				return read, fmt.Errorf("%w: bad entry", errCorrupt)
			}
			read++
			if e.last < cutoff {
				continue
			}
			k.digest = digests[d]
			e.errors, e.timed = min(e.errors, e.calls), min(e.timed, e.calls)
			e.stale = min(e.stale, e.calls)
			e.ahead = min(e.ahead, e.calls-e.stale)
			e.staleAgo = ago(e.last, e.last-min(staleAgo, e.last-e.first), e.stale)
			e.errorAgo = ago(e.last, e.last-min(errorAgo, e.last-e.first), e.errors)
			ix.record(&k, e, cutoff)
		}
	}
	return read, r.err
}

// reader decodes the stored index; the first error sticks and every later
// read returns zero values.
type reader struct {
	buf []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", errCorrupt, what)
	}
	r.buf = nil
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.buf)
	if n <= 0 {
		r.fail("truncated number")
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

func (r *reader) u32() uint32 {
	v := r.uvarint()
	if v > 1<<32-1 {
		r.fail("number out of range")
		return 0
	}
	return uint32(v)
}

// count reads a length that must not exceed limit or the bytes left (every
// counted item takes at least one byte).
func (r *reader) count(limit uint64) int {
	v := r.uvarint()
	if v > limit || v > uint64(len(r.buf)) {
		r.fail("count out of range")
		return 0
	}
	return int(v)
}

func (r *reader) take(n int) []byte {
	if n > len(r.buf) {
		r.fail("truncated")
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}

func (r *reader) str() string {
	n := r.count(maxStringLen)
	return string(r.take(n))
}
