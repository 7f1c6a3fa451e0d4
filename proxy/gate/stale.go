package gate

import (
	"bytes"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/contract/staleness"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// The stale judgement (contract/staleness, docs/mcpimpact.md "What stale
// means"): a call whose arguments fit a definition of the tool the server
// served before and not the current one is stale even when the session has
// listed the new one; otherwise its digest decides.

// Bounds of what a gate family keeps for the judgement.
const (
	maxSuperseded  = 4        // earlier definitions kept per tool
	maxSchemas     = 4096     // inputSchemas kept once for all sessions
	maxSchemaBytes = 64 << 20 // and their bytes: past either, sessions keep their own copies
)

// family is what the sessions of one proxy share: the judge (schemas
// compiled once per digest) and one copy of each inputSchema.
type family struct {
	judge *staleness.Judge

	mu      sync.Mutex
	schemas map[string][]byte // digest -> inputSchema
	bytes   int               // held in schemas
}

func newFamily() *family {
	return &family{judge: staleness.NewJudge(nil), schemas: map[string][]byte{}}
}

// intern is defs with one copy of each inputSchema shared by all sessions
// (a session keeps its listing, the proxy may hold thousands); defs itself
// is not changed (it may be read already).
func (f *family) intern(defs Definitions) Definitions {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out Definitions
	for k, d := range defs {
		if d.Schema == nil || d.Digest == "" {
			continue
		}
		held, ok := f.schemas[d.Digest]
		switch {
		case !ok && len(f.schemas) < maxSchemas && f.bytes+len(d.Schema) <= maxSchemaBytes:
			f.schemas[d.Digest] = d.Schema
			f.bytes += len(d.Schema)
		case ok && bytes.Equal(held, d.Schema) && len(held) > 0 && &held[0] != &d.Schema[0]:
			if out == nil {
				out = maps.Clone(defs)
			}
			d.Schema = held
			out[k] = d
		}
	}
	if out == nil {
		return defs
	}
	return out
}

// supersede records, for each tool whose definition prev had and next
// changes, prev's as superseded (newest first, bounded). Under g.mu.
func (g *Gate) supersede(prev, next Definitions) {
	for tool, old := range prev {
		cur, ok := next[tool]
		if old.Digest == "" || (ok && cur.Digest == old.Digest) {
			continue
		}
		chain := []staleness.Definition{{Digest: old.Digest, InputSchema: old.Schema}}
		for _, d := range g.superseded[tool] {
			if d.Digest != old.Digest && d.Digest != cur.Digest && len(chain) < maxSuperseded {
				chain = append(chain, d)
			}
		}
		if g.superseded == nil {
			g.superseded = map[string][]staleness.Definition{}
		}
		g.superseded[tool] = chain
	}
}

// checkStale is the stale judgement of a call against the server's
// current definition cur. A tool that never changed costs two comparisons.
func (g *Gate) checkStale(call Call, cur Definition) *Refusal {
	g.mu.Lock()
	sup := g.superseded[call.Tool]
	g.mu.Unlock()
	if len(sup) == 0 && cur.Digest == call.Planned {
		return nil
	}
	if cur.Digest != call.Planned && !slices.ContainsFunc(sup, func(d staleness.Definition) bool { return d.Digest == call.Planned }) {
		// Served through this proxy, so once the server's: superseded.
		sup = append(slices.Clip(sup), staleness.Definition{Digest: call.Planned})
	}
	args := call.Arguments
	if jsonwire.IsNull(args) {
		args = []byte("{}")
	}
	v := g.family.judge.Judge(staleness.Evidence{Planned: call.Planned, Current: &staleness.Definition{Digest: cur.Digest, InputSchema: cur.Schema},
		Superseded: sup, Arguments: args})
	if v.State != staleness.Stale {
		return nil
	}
	g.window.Done(call.Tool)
	return staleRefusal(call.Tool, v)
}

// checkWindow refuses, once, the first call to a tool within --stale-window
// after the session was served a change of it.
func (g *Gate) checkWindow(call Call, cur Definition) *Refusal {
	if !g.window.Take(call.Tool, time.Now()) {
		return nil
	}
	v := staleness.Verdict{State: staleness.Stale, Basis: staleness.BasisWindow, Current: cur.Digest}
	g.mu.Lock()
	if sup := g.superseded[call.Tool]; len(sup) > 0 {
		v.Planned = sup[0].Digest
	}
	g.mu.Unlock()
	return staleRefusal(call.Tool, v)
}

// staleRefusal is a STALE_TOOL_SCHEMA refusal as the interceptor's guard
// words it (the envelope with basis and witness, the span's attributes).
func staleRefusal(tool string, v staleness.Verdict) *Refusal {
	return &Refusal{code: semconv.RefusalStaleToolSchema, tool: tool, current: v.Current,
		guard: &interceptor.Refusal{Tool: tool, Verdict: v}}
}
