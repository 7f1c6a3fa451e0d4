package mcpimpactprocessor

import (
	"net"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
)

// identity is what a tool-call span says about the server it called. Spans
// and probes meet on the receiver's target name; DESIGN.md "Server identity"
// gives the order in which a span's identity is matched to a target.
type identity struct {
	name string // mcpdrift.server.name (configured name, or serverInfo.name)
	url  string // mcpdrift.server.url or url.full, as sent
	info string // a serverInfo-like name: service.name of a server-side span
	host string // server.address
	port string // server.port
}

func (id identity) clone() identity {
	return identity{
		name: strings.Clone(id.name),
		url:  strings.Clone(id.url),
		info: strings.Clone(id.info),
		host: strings.Clone(id.host),
		port: strings.Clone(id.port),
	}
}

// label names the server for metrics and records when no target matched.
func (id identity) label() string {
	switch {
	case id.name != "":
		return id.name
	case id.url != "":
		return serverid.Normalize(id.url)
	case id.info != "":
		return id.info
	case id.host != "":
		return net.JoinHostPort(id.host, id.port)
	}
	return unknownLabel
}

// resolve finds the target a span identity belongs to, in DESIGN order:
// exact name; normalized URL; serverInfo name (the interceptor defaults
// mcpdrift.server.name to it, server-side spans carry it as service.name).
// As a last resort, a span with no URL, only server.address and
// server.port, matches the target whose URL has that host (and port). A rule
// that matches more than one target matches none.
func (c *contracts) resolve(id identity) *server {
	if id.name != "" {
		if s, ok := c.servers[id.name]; ok {
			return s
		}
	}
	if id.url != "" {
		norm := serverid.Normalize(id.url)
		if s := c.unique(func(s *server) bool { return s.url == norm }); s != nil {
			return s
		}
	}
	for _, name := range [2]string{id.info, id.name} {
		if name == "" {
			continue
		}
		if s := c.unique(func(s *server) bool { return s.info == name }); s != nil {
			return s
		}
	}
	if id.host != "" && id.url == "" {
		host := strings.ToLower(id.host)
		if s := c.unique(func(s *server) bool { return s.host == host && (id.port == "" || s.port == id.port) }); s != nil {
			return s
		}
	}
	return nil
}

// unique returns the only server that match accepts, or nil.
func (c *contracts) unique(match func(*server) bool) *server {
	var found *server
	for _, s := range c.servers {
		if !match(s) {
			continue
		}
		if found != nil {
			return nil
		}
		found = s
	}
	return found
}

// hostPort splits a normalized URL into host and port, the port made
// explicit for http(s) and ws(s).
func hostPort(normalized string) (host, port string) {
	h, p := serverid.HostPort(normalized)
	if p > 0 {
		port = strconv.Itoa(p)
	}
	return h, port
}

// resolver caches, per index server id, which target the identity matched,
// until the set of targets changes. Ids are reused after they are freed, so
// an answer also remembers the identity it is for.
type resolver struct {
	answers []resolved
}

type resolved struct {
	gen    uint64 // contracts generation; 0: no answer
	id     identity
	target *server
}

func (r *resolver) target(c *contracts, ids *interner[identity], id uint32) *server {
	if id == 0 {
		return nil
	}
	if int(id) >= len(r.answers) {
		n := max(ids.span(), 2*len(r.answers))
		r.answers = append(r.answers, make([]resolved, n-len(r.answers))...)
	}
	a := &r.answers[id]
	if v := ids.value(id); a.gen != c.gen || a.id != v {
		*a = resolved{gen: c.gen, id: v, target: c.resolve(v)}
	}
	return a.target
}
