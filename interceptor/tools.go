package interceptor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"github.com/mcpdrift/mcpdrift/contract/staleness"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// toolDef is one cached tool definition, with what a call of it puts on
// its span, computed once per listing rather than once per call.
type toolDef struct {
	digest   string          // "" when the definition has no digest (see contract)
	raw      json.RawMessage // as received; the guard reads inputSchema from it
	name     string          // the listing's key (unpaired surrogates kept)
	label    string          // name as gen_ai.tool.name writes it (valid UTF-8)
	spanName string          // "tools/call <label>"
}

func newToolDef(name, digest string, raw json.RawMessage) toolDef {
	label := canon.KeyUTF8(name)
	return toolDef{digest: digest, raw: raw, name: name, label: label, spanName: spanName(methodToolsCall, label)}
}

// lookup finds the cached tool a request names, from the name's JSON string
// token: a token without escapes (nearly every one) is looked up without
// building a string.
func (l *listing) lookup(token []byte) (toolDef, bool) {
	if l == nil || len(token) < 2 || token[0] != '"' || token[len(token)-1] != '"' {
		return toolDef{}, false
	}
	if inner := token[1 : len(token)-1]; bytes.IndexByte(inner, '\\') < 0 {
		d, ok := l.tools[string(inner)]
		return d, ok
	}
	key, ok := canon.UnquoteKey(token)
	if !ok {
		return toolDef{}, false
	}
	d, ok := l.tools[key]
	return d, ok
}

// listing is the session's cached tools listing. It is replaced, never
// mutated, so calls read it without locking.
type listing struct {
	tools     map[string]toolDef
	setDigest string // "" unless every definition has a digest
	// readable is false when the last page could not be read at all (over
	// the size limit, not JSON): what the client cached is then unknown.
	readable bool
	// gen is the list_changed generation when the refresh that built this
	// listing was sent; a later notification makes it stale.
	gen uint64
	// prev holds the definitions this listing's first page replaced.
	prev map[string]toolDef
	// superseded holds, for each tool the session was served another
	// definition of before, those definitions, newest first (at most
	// maxSuperseded): what the guard judges a call's arguments against. A
	// tool that never changed has no entry, and its calls cost the guard
	// nothing.
	superseded map[string][]staleness.Definition
}

// Bounds of a session's superseded definitions: per tool, and tools.
const (
	maxSuperseded      = 4
	maxSupersededTools = 1024
)

// listingStale reports whether a tools list_changed arrived after the
// refresh that produced l was sent (or ever, when there is no listing).
func (s *Session) listingStale(l *listing) bool {
	if l == nil {
		return s.gen.Load() > 0
	}
	return s.gen.Load() > l.gen
}

// ToolDigest is the digest of the definition of tool that this session was
// served (the cached listing's), and whether the listing has the tool. A
// proxy compares it with the server's current definition to refuse calls
// planned against a changed one. The digest is "" when the definition has
// none, or when no readable listing was seen.
func (s *Session) ToolDigest(tool string) (digest string, listed bool) {
	l := s.tools.Load()
	if l == nil || !l.readable {
		return "", false
	}
	d, ok := l.tools[tool]
	return d.digest, ok
}

// applyToolsPage caches one tools/list page: a first page (no cursor)
// replaces the listing, later pages merge into it. Digests are computed here,
// once per page, from the raw result. It returns attributes for the
// tools/list span: the cached listing's set digest and size.
func (s *Session) applyToolsPage(c *call, result json.RawMessage) []attribute.KeyValue {
	defs, readable, err := ToolDefinitions(s.ic.cfg.limits, result)
	if err != nil {
		s.ic.report(fmt.Errorf("tools/list from %s: %w", s.describe(), err))
	}
	s.listMu.Lock()
	defer s.listMu.Unlock()
	cur := s.tools.Load()
	next := &listing{readable: readable, gen: c.gen}
	if c.firstPage || cur == nil || !cur.readable {
		next.tools = make(map[string]toolDef, len(defs))
		if cur != nil {
			next.prev = cur.tools
		}
	} else {
		next.tools = maps.Clone(cur.tools)
		next.prev = cur.prev
		next.gen = min(cur.gen, c.gen) // a notification between pages makes the whole listing stale
	}
	for _, d := range defs {
		next.tools[d.Key] = newToolDef(d.Key, d.Digest, d.Raw)
	}
	next.superseded = s.supersede(cur, next, defs)
	if readable {
		next.setDigest = setDigest(next.tools)
		if next.setDigest != "" {
			next.tools = s.ic.listings.share(next.setDigest, next.tools)
		}
	}
	s.tools.Store(next)
	s.markStaleCalls(next)

	var kv []attribute.KeyValue
	if next.setDigest != "" {
		kv = append(kv, attribute.String(semconv.ToolsSetDigest, next.setDigest))
	}
	if readable {
		kv = append(kv, attribute.Int(semconv.ToolsCount, len(next.tools)))
	}
	return kv
}

// supersede records, for each tool on this page whose definition differs
// from the one the session was served before, the old one; a tool the
// session keeps its entry while the previous listing had it.
func (s *Session) supersede(cur, next *listing, defs []contract.Definition) map[string][]staleness.Definition {
	var carried map[string][]staleness.Definition
	if cur != nil {
		carried = cur.superseded
	}
	changed := false
	for _, d := range defs {
		if old, had := next.prev[d.Key]; had && old.digest != "" && old.digest != d.Digest {
			changed = true
			break
		}
	}
	if !changed && (cur == nil || next.prev == nil || sameKeys(carried, next.prev)) {
		return carried
	}
	out := make(map[string][]staleness.Definition, len(carried)+1)
	for tool, chain := range carried {
		if _, listed := next.prev[tool]; listed || next.prev == nil {
			out[tool] = chain
		}
	}
	now := time.Now()
	for _, d := range defs {
		old, had := next.prev[d.Key]
		if !had || old.digest == "" || old.digest == d.Digest {
			continue
		}
		if _, tracked := out[d.Key]; !tracked && len(out) >= maxSupersededTools {
			continue
		}
		chain := []staleness.Definition{{Digest: old.digest, Raw: old.raw}}
		for _, c := range out[d.Key] {
			if c.Digest != old.digest && c.Digest != d.Digest && len(chain) < maxSuperseded {
				chain = append(chain, c)
			}
		}
		out[d.Key] = chain
		s.window.Served(d.Key, now)
	}
	return out
}

// sameKeys reports whether every tool in m is in prev (nothing to prune).
func sameKeys(m map[string][]staleness.Definition, prev map[string]toolDef) bool {
	for k := range m {
		if _, ok := prev[k]; !ok {
			return false
		}
	}
	return true
}

// sharedListings lets the sessions that were served the same tools listing
// hold one copy of it: a proxy in front of one server sees the same listing
// on every session, and a thousand copies of a large listing would be most
// of its memory. Listings are never mutated once published, so sharing is
// safe; the set digest names the definitions exactly. Bounded: past
// maxSharedListings an arbitrary entry makes room (its sessions keep their
// copy).
type sharedListings struct {
	mu sync.Mutex
	m  map[string]map[string]toolDef
}

const maxSharedListings = 64

// share returns the listing with this set digest that sessions already
// hold, or records tools as it.
func (sl *sharedListings) share(setDigest string, tools map[string]toolDef) map[string]toolDef {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if held, ok := sl.m[setDigest]; ok {
		return held
	}
	if sl.m == nil {
		sl.m = map[string]map[string]toolDef{}
	}
	if len(sl.m) >= maxSharedListings {
		for k := range sl.m {
			delete(sl.m, k)
			break
		}
	}
	sl.m[setDigest] = tools
	return tools
}

// ToolDefinitions hashes the tool definitions on one tools/list result page,
// within limits. When the page as a whole has no digests (one definition
// repeats a member name, say) the definitions that can be hashed on their own
// still are, and the rest come without a digest, so one bad tool does not
// blind the reader to the others; err then says why. readable is false when
// the page could not be read at all (over the limits, not JSON).
func ToolDefinitions(limits contract.Limits, result json.RawMessage) (defs []contract.Definition, readable bool, err error) {
	page, err := limits.ParsePage(result)
	if err == nil {
		return page.Definitions[contract.KindTool], true, nil
	}
	if errors.Is(err, canon.ErrTooLarge) || errors.Is(err, canon.ErrTooDeep) || errors.Is(err, contract.ErrTooMany) {
		return nil, false, err
	}
	var lenient struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(result, &lenient) != nil {
		return nil, false, err
	}
	for _, raw := range lenient.Tools {
		l, herr := limits.HashDefinitions(contract.KindTool, []json.RawMessage{raw})
		if herr == nil && len(l) == 1 {
			defs = append(defs, l[0])
			continue
		}
		var named struct {
			Name json.RawMessage `json:"name"`
		}
		if json.Unmarshal(raw, &named) == nil {
			if name, ok := canon.UnquoteKey(named.Name); ok && name != "" {
				defs = append(defs, contract.Definition{Key: name, Raw: raw})
			}
		}
	}
	return defs, true, err
}

// setDigest is the recipe's set digest of the cached tools, or "" when one
// of them has no digest (the recipe gives such a listing none).
func setDigest(tools map[string]toolDef) string {
	l := make(contract.Listing, 0, len(tools))
	for name, d := range tools {
		if d.digest == "" {
			return ""
		}
		l = append(l, contract.Definition{Key: name, Digest: d.digest})
	}
	return l.SetDigest()
}

// markStaleCalls flags tools/call requests still in flight whose tool the
// new listing shows changed: they were planned against the old definition.
func (s *Session) markStaleCalls(l *listing) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.pending {
		if c.method != methodToolsCall || c.digest == "" {
			continue
		}
		if d, ok := l.tools[c.target]; !ok || d.digest != c.digest {
			c.staleDefinition = true
		}
	}
}

// describe names the server in the interceptor's own error messages.
func (s *Session) describe() string {
	if n := s.ServerName(); n != "" {
		return fmt.Sprintf("server %q", n)
	}
	if u := s.endpoint.ServerURL(); u != "" {
		return u
	}
	return "the server"
}
