package proxy

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// gate decides which tools/call requests reach the server: with
// --on-stale refuse, none planned against a definition the server no longer
// serves; with --lock, none for a definition the lock does not hold.
type gate struct {
	refuse   bool
	lock     map[string]string // tool name -> approved digest; nil without --lock
	lockMode string

	mu      sync.Mutex
	current atomic.Pointer[map[string]string] // the server's definitions as last seen; nil: not yet
	failed  atomic.Bool                       // refuse-session tripped
	failure *refusal                          // set before failed
}

func newGate(cfg *Config) (*gate, error) {
	g := &gate{refuse: cfg.OnStale == OnStaleRefuse, lockMode: cfg.LockMode}
	if cfg.Lock == "" {
		return g, nil
	}
	lock, err := readLock(cfg.Lock, cfg.Limits)
	if err != nil {
		return nil, err
	}
	g.lock = lock
	return g, nil
}

// readLock reads the approved tool definitions of a lock file (a snapshot,
// as `mcpdrift check --lock` writes it).
func readLock(path string, limits contract.Limits) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--lock: %w", err)
	}
	defer f.Close()
	b := make([]byte, limits.MaxDocumentBytes+1)
	n, _ := f.ReadAt(b, 0)
	if n > limits.MaxDocumentBytes {
		return nil, fmt.Errorf("--lock %s: larger than %d bytes", path, limits.MaxDocumentBytes)
	}
	s, err := contract.DecodeSnapshot(b[:n])
	if err != nil {
		return nil, fmt.Errorf("--lock %s: %w", path, err)
	}
	lock := make(map[string]string, len(s.Tools))
	for _, d := range s.Tools {
		lock[d.Key] = d.Digest
	}
	return lock, nil
}

// learn records the server's current definitions (tool name -> digest) and
// reports whether they differ from the ones known before.
func (g *gate) learn(current map[string]string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	prev := g.current.Swap(&current)
	return prev != nil && !maps.Equal(*prev, current)
}

func (g *gate) sessionFailed() bool { return g.failed.Load() }

// active reports whether the gate can refuse a call at all.
func (g *gate) active() bool { return g.refuse || g.lock != nil }

// approved reports whether the lock holds this definition of tool.
func (g *gate) approved(tool, digest string) bool {
	d, ok := g.lock[tool]
	return ok && d != "" && d == digest
}

// check returns why a tools/call for tool must not reach the server, or nil.
// planned is the digest of the definition the agent listed (listed: it did).
// It reads only that digest and the gate's map: no hashing on the call path.
func (g *gate) check(tool, planned string, listed bool) *refusal {
	if !g.active() {
		return nil
	}
	var current map[string]string
	if p := g.current.Load(); p != nil {
		current = *p
	}
	cur, curKnown := current[tool]
	if g.lock != nil {
		d, known := cur, curKnown
		if !known && current == nil && listed {
			d, known = planned, true
		}
		_, named := g.lock[tool]
		if (known && !g.approved(tool, d)) || (!known && !named) {
			return &refusal{code: semconv.RefusalToolNotApproved, tool: tool, current: d}
		}
	}
	if g.refuse && current != nil && listed && planned != "" && cur != planned {
		return &refusal{code: semconv.RefusalStaleToolSchema, tool: tool, planned: planned, current: cur, stale: true}
	}
	return nil
}

// refusal is a call the proxy answered itself. As an error it ends the
// call's span: error.type "refused", the reason in mcpdrift.guard.refusal.
type refusal struct {
	code             string // semconv.Refusal*
	tool             string
	planned, current string
	stale            bool
	rpcError         bool // answered with a JSON-RPC error (a failed session), not a tool result
	unclear          bool // a call the gate could not read as servers would (unclearCall)
}

func (r *refusal) Error() string     { return r.text() }
func (r *refusal) ErrorType() string { return semconv.ErrorTypeRefused }

func (r *refusal) SpanAttributes() []attribute.KeyValue {
	kv := []attribute.KeyValue{
		attribute.String(semconv.GuardRefusal, r.code),
		attribute.String(semconv.GuardCurrentDigest, r.current),
	}
	if r.stale {
		kv = append(kv, attribute.Bool(semconv.GuardStaleDefinition, true),
			attribute.String(semconv.GuardPlannedDigest, r.planned))
	}
	return kv
}

// text is what the agent (an LLM, often) reads: what happened, that nothing
// ran, and what to do.
func (r *refusal) text() string {
	if r.unclear {
		return r.code + ": this tools/call names its method, params or tool more than once or in another case, or has no id, " +
			"so which tool a server would run cannot be told: it was not sent and nothing ran."
	}
	if r.code == semconv.RefusalStaleToolSchema {
		return fmt.Sprintf("%s: the definition of tool %q changed after your tool list was fetched, so this call was not sent and nothing ran. "+
			"Fetch the tool list again (tools/list), read the tool's new schema, and plan the call again.", r.code, r.tool)
	}
	return fmt.Sprintf("%s: the server's current definition of tool %q is not approved in this proxy's lock file, so this call was not sent and nothing ran. "+
		"An operator must review and approve it (mcpdrift approve).", r.code, r.tool)
}

// result is the tools/call result frame the agent gets: a tool execution
// error (isError) with the refusal in structuredContent.
func (r *refusal) result(id json.RawMessage) []byte {
	action := "refresh_tools"
	if r.code == semconv.RefusalToolNotApproved {
		action = "operator_approval"
	}
	sc := map[string]any{
		"error_code": r.code, "tool": r.tool, "required_action": action,
		"side_effect_started": false, "current_digest": r.current,
	}
	if r.stale {
		sc["planned_digest"] = r.planned
	}
	res, _ := json.Marshal(map[string]any{
		"content":           []map[string]string{{"type": "text", "text": r.text()}},
		"structuredContent": sc,
		"isError":           true,
	})
	return responseFrame(id, res)
}

func responseFrame(id, result []byte) []byte {
	if len(id) == 0 {
		id = []byte("null")
	}
	b := make([]byte, 0, 40+len(id)+len(result))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}
