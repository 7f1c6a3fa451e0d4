package mcpimpactprocessor

import (
	"cmp"
	"slices"
	"time"

	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
)

// Usage by definition: calls per tool, per digest they were planned
// against, per UTC day, kept per known server for usageDays, for server
// authors deciding when no caller uses an old definition any more (the
// control plane's digests view). It outlives the impact window, and is
// stored with the current-digest table.

const (
	// usageDays is how many days of usage are kept.
	usageDays = apiwire.MaxDigestUsageDays
	// maxUsageRows bounds a server's usage rows (tool, digest, day); past
	// it, new rows are dropped and counted in the server's usageDropped.
	maxUsageRows = 16384
	daySeconds   = 24 * 60 * 60
)

type usageKey struct {
	tool, digest string
	day          uint32 // days since the Unix epoch, UTC
}

// countUsage adds one call of tool planned on digest ("" for none) at unix
// nanoseconds at. Rows older than usageDays before now go first.
func (s *server) countUsage(tool, digest string, at int64, now time.Time) {
	day := uint32(max(at, 0) / int64(time.Second) / daySeconds)
	today := uint32(now.Unix() / daySeconds)
	if day+usageDays <= today || day > today+1 {
		return
	}
	if s.usage == nil {
		s.usage = map[usageKey]uint32{}
	}
	if today != s.usageSwept {
		for k := range s.usage {
			if k.day+usageDays <= today {
				delete(s.usage, k)
			}
		}
		s.usageSwept = today
	}
	k := usageKey{tool: tool, digest: digest, day: day}
	if n, ok := s.usage[k]; ok {
		s.usage[k] = satAdd(n, 1)
		return
	}
	if len(s.usage) >= maxUsageRows {
		s.usageDropped++
		return
	}
	s.usage[k] = 1
}

// digestUsage is one digest's calls of a tool, by day.
type digestUsage struct {
	digest string
	calls  int64
	days   []dayCalls // ascending
}

type dayCalls struct {
	day   uint32
	calls int64
}

// usageOf returns the calls of tool by digest over the days from `from`
// (inclusive) on: the most called digest first.
func (s *server) usageOf(tool string, from uint32) []digestUsage {
	byDigest := map[string]*digestUsage{}
	for k, n := range s.usage {
		if k.tool != tool || k.day < from {
			continue
		}
		u := byDigest[k.digest]
		if u == nil {
			u = &digestUsage{digest: k.digest}
			byDigest[k.digest] = u
		}
		u.calls += int64(n)
		u.days = append(u.days, dayCalls{day: k.day, calls: int64(n)})
	}
	out := make([]digestUsage, 0, len(byDigest))
	for _, u := range byDigest {
		slices.SortFunc(u.days, func(a, b dayCalls) int { return cmp.Compare(a.day, b.day) })
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b digestUsage) int {
		if c := cmp.Compare(b.calls, a.calls); c != 0 {
			return c
		}
		return cmp.Compare(a.digest, b.digest)
	})
	return out
}
