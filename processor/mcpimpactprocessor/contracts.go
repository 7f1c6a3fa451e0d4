package mcpimpactprocessor

import (
	"slices"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
)

// Bounds of the current-digest table. Snapshot and drift events come from
// the mcpdrift receiver, but a logs pipeline can carry anything.
const (
	maxServers         = 4096
	maxToolsPerServer  = 16384
	maxVersionsPerTool = 8
)

// version is one definition of a tool, in effect from since on.
type version struct {
	since  int64  // unix nanoseconds; the first known version holds from the start of time
	digest string // "" while the server did not offer the tool
}

// server is a target the receiver probes, with the tool definitions it
// offered over time.
type server struct {
	name       string // the receiver's target name
	url        string // normalized endpoint URL
	host, port string // of url, for spans that carry only server.address/port
	info       string // serverInfo.name
	listed     bool   // a complete tool listing has been applied
	tools      map[string][]version
	// changes holds each tool's last change seen in a drift event, for the
	// control plane's impact queries (risk follows its severity).
	changes map[string]toolChangeInfo
	// provisional holds, per tool, a digest a prompt probe saw served that
	// no snapshot or drift has confirmed yet; provisionalAt is that probe's
	// time. A confirmed listing as recent replaces them.
	provisional   map[string]string
	provisionalAt int64
	// observed is the time of the latest observation of the server
	// (snapshot, drift or prompt probe), unix nanoseconds.
	observed int64
	// usage counts calls by tool, digest and day (usage.go).
	usage        map[usageKey]uint32
	usageSwept   uint32 // the day expired rows were last removed
	usageDropped int64  // calls not counted: the server had maxUsageRows rows
}

// toolChangeInfo is a tool's last change.
type toolChangeInfo struct {
	driftID  string
	severity string
	at       int64 // unix nanoseconds
}

// contracts is the current-digest table: what each known server offered,
// learned from mcpdrift.snapshot and mcpdrift.drift events.
type contracts struct {
	servers map[string]*server
	gen     uint64 // changes whenever a server is added or its identity changes
}

func newContracts() *contracts {
	return &contracts{servers: map[string]*server{}, gen: 1}
}

// listing is what a snapshot or drift event says about a server.
type listing struct {
	name, url, info string
	at              int64             // unix nanoseconds
	digests         map[string]string // every tool the server offers → digest; nil: not known
	previous        map[string]string // drift only: the listing before
	driftID         string            // drift only: mcpdrift.drift.id
	changed         map[string]string // drift only: tool → its worst change's severity
}

// apply records a listing. It returns the tools whose history the listing
// changed (a new version, or a change known earlier than before), and
// false when the server is new and the table is full.
func (c *contracts) apply(l *listing) (changed []string, ok bool) {
	s := c.servers[l.name]
	if s == nil {
		if len(c.servers) >= maxServers {
			return nil, false
		}
		s = &server{name: l.name, tools: map[string][]version{}}
		c.servers[l.name] = s
		c.gen++
	}
	if u := serverid.Normalize(l.url); l.url != "" && u != s.url {
		s.url = u
		s.host, s.port = hostPort(u)
		c.gen++
	}
	if l.info != "" && l.info != s.info {
		s.info = l.info
		c.gen++
	}
	if l.digests == nil {
		return nil, true
	}
	// A drift seen before any snapshot still tells what came before it.
	for tool, d := range l.previous {
		if _, ok := s.tools[tool]; !ok && len(s.tools) < maxToolsPerServer {
			s.tools[tool] = []version{{since: 0, digest: d}}
		}
	}
	set := func(tool string, h []version, d string) {
		h, moved := recordAt(h, l.at, d)
		s.tools[tool] = h
		if moved {
			changed = append(changed, tool)
		}
	}
	for tool, d := range l.digests {
		if h, ok := s.tools[tool]; ok || len(s.tools) < maxToolsPerServer {
			set(tool, h, d)
		}
	}
	for tool, h := range s.tools {
		if _, ok := l.digests[tool]; !ok {
			set(tool, h, "")
		}
	}
	s.listed = true
	s.observed = max(s.observed, l.at)
	if l.at >= s.provisionalAt {
		s.provisional, s.provisionalAt = nil, 0
	}
	for tool, sev := range l.changed {
		if _, ok := s.tools[tool]; !ok {
			continue // past maxToolsPerServer
		}
		if c, ok := s.changes[tool]; !ok || c.at <= l.at {
			if s.changes == nil {
				s.changes = map[string]toolChangeInfo{}
			}
			s.changes[tool] = toolChangeInfo{driftID: l.driftID, severity: sev, at: l.at}
		}
	}
	return changed, true
}

// setAt records that the tool had digest d (or was absent, "") at time at.
// Listings may arrive out of order; the history stays sorted and without
// repeats, and keeps the latest maxVersionsPerTool versions.
func setAt(h []version, at int64, d string) []version {
	h, _ = recordAt(h, at, d)
	return h
}

// recordAt is setAt that also reports whether the history changed.
func recordAt(h []version, at int64, d string) ([]version, bool) {
	i := runAt(h, at) + 1
	// h[:i] started at or before at; h[i-1] is in effect at at.
	if i > 0 && h[i-1].digest == d {
		return h, false
	}
	if i == 0 && len(h) == 0 && d == "" {
		return h, false // never offered: nothing to record
	}
	h = slices.Insert(h, i, version{since: at, digest: d})
	if i+1 < len(h) && h[i+1].digest == d {
		h = slices.Delete(h, i+1, i+2)
	}
	if len(h) > maxVersionsPerTool {
		h = slices.Delete(h, 0, len(h)-maxVersionsPerTool)
	}
	return h, true
}

// verdict is what the table says about a call made at a time with a digest.
type verdict struct {
	known   bool   // the server's listing is known
	current string // digest in effect at the call; "": the tool was not offered
	state   staleness
}

// judge tells whether a call to tool made at time at with definition digest
// d used the definition the server served then (judgeDigest).
func (s *server) judge(tool string, at int64, d string) verdict {
	ev := digestEvidence{history: s.tools[tool], provisional: s.provisional[tool], observed: s.observed}
	state, current := judgeDigest(&ev, at, d)
	return verdict{known: s.listed || ev.provisional != "", current: current, state: state}
}

// observe records what a prompt probe saw the server serve at time at:
// tools whose digest differs from the confirmed one are provisional until a
// snapshot or drift confirms or replaces them.
func (s *server) observe(at int64, digests map[string]string) {
	if at < s.provisionalAt {
		return // an older probe's answer, landed late
	}
	s.observed = max(s.observed, at)
	s.provisional, s.provisionalAt = nil, at
	for tool, d := range digests {
		if d == "" || d == s.latest(tool) {
			continue
		}
		if s.provisional == nil {
			s.provisional = map[string]string{}
		}
		if len(s.provisional) < maxToolsPerServer {
			s.provisional[tool] = d
		}
	}
}

// latest returns the tool's newest digest ("" when it is not offered).
func (s *server) latest(tool string) string {
	h := s.tools[tool]
	if len(h) == 0 {
		return ""
	}
	return h[len(h)-1].digest
}

// offers reports whether the server offered tool at any known time.
func (s *server) offers(tool string) bool {
	for _, v := range s.tools[tool] {
		if v.digest != "" {
			return true
		}
	}
	return false
}

// soleOwner returns the only known server that ever offered tool, or nil.
func (c *contracts) soleOwner(tool string) *server {
	return c.unique(func(s *server) bool { return s.offers(tool) })
}
