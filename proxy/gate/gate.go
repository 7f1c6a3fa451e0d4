// Package gate decides which tools/call requests reach the server, for
// every mode of the proxy: with --on-stale refuse none planned against a
// definition the server no longer serves, with --lock none for a definition
// the lock does not hold. It keeps the server's current definitions as the
// proxy last learned them (Learn), judges a call (Check) as the mode parsed
// it (Call: the tool, the digest the session was served, the arguments),
// and answers a refused one (Refusal: the span's error, the envelope the
// agent reads).
package gate

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/staleness"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// Stale-gate modes (--on-stale).
const (
	OnStaleObserve = "observe" // record the stale call, forward it
	OnStaleRefuse  = "refuse"  // answer it with a STALE_TOOL_SCHEMA tool error, never forward it
)

// Lock modes (--lock-mode).
const (
	LockHide          = "hide"           // unapproved definitions are left out of tools/list; their calls are refused
	LockRefuseSession = "refuse-session" // a listing with an unapproved definition fails the session
)

// Options are the gate's flags.
type Options struct {
	Refuse   bool              // --on-stale refuse
	Lock     map[string]string // tool name -> approved digest (ReadLock); nil without --lock
	LockMode string            // LockHide or LockRefuseSession
	// StaleWindow (--stale-window) refuses once the first call to a tool
	// within it after the session was served a changed definition; 0: off.
	StaleWindow time.Duration
}

// Gate is the gate of one session (the stdio modes have one; the HTTP →
// HTTP proxy one per MCP session, each a Fork of its flags): the server's
// current definitions (Learn) and the listing the session was last served
// (Serve).
type Gate struct {
	refuse      bool
	lock        map[string]string
	lockMode    string
	staleWindow time.Duration
	family      *family           // shared with the gate's forks
	window      *staleness.Window // this session's; nil without --stale-window

	mu         sync.Mutex
	superseded map[string][]staleness.Definition // tool -> earlier definitions, newest first
	current    atomic.Pointer[Definitions]       // the server's definitions as last seen; nil: not yet
	served     atomic.Pointer[Definitions]       // the last whole listing the session was served; nil: none
	failed     atomic.Bool                       // refuse-session tripped
	failure    *Refusal                          // set before failed
}

// New is a gate with the flags o.
func New(o Options) *Gate {
	return &Gate{refuse: o.Refuse, lock: o.Lock, lockMode: o.LockMode, staleWindow: o.StaleWindow,
		family: newFamily(), window: staleness.NewWindow(o.StaleWindow)}
}

// Fork is a gate with g's flags and nothing learned: another session's.
func (g *Gate) Fork() *Gate {
	return &Gate{refuse: g.refuse, lock: g.lock, lockMode: g.lockMode, staleWindow: g.staleWindow,
		family: g.family, window: staleness.NewWindow(g.staleWindow)}
}

// ReadLock reads the approved tool definitions of a lock file (a snapshot,
// as `mcpdrift check --lock` writes it): tool name -> digest.
func ReadLock(path string, limits contract.Limits) (map[string]string, error) {
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

// Learn records the server's current definitions and reports whether their
// digests differ from the ones known before.
func (g *Gate) Learn(current Definitions) bool {
	current = g.family.intern(current)
	g.mu.Lock()
	defer g.mu.Unlock()
	prev := g.current.Swap(&current)
	changed := prev != nil && !maps.EqualFunc(*prev, current, Definition.sameDigest)
	if changed {
		g.supersede(*prev, current)
	}
	return changed
}

// Current is the server's definitions as last learned (nil: not yet).
func (g *Gate) Current() Definitions {
	if p := g.current.Load(); p != nil {
		return *p
	}
	return nil
}

// Serve records a whole listing the session was served: what its agent
// plans calls with. With --stale-window, a tool whose digest differs from
// the one the session was served before starts the window for it.
func (g *Gate) Serve(defs Definitions) {
	defs = g.family.intern(defs)
	prev := g.served.Swap(&defs)
	if g.window == nil || prev == nil {
		return
	}
	now := time.Now()
	for tool, d := range defs {
		if before, ok := (*prev)[tool]; ok && before.Digest != d.Digest {
			g.window.Served(tool, now)
		}
	}
}

// Served is the last whole listing the session was served (nil: none yet).
func (g *Gate) Served() Definitions {
	if p := g.served.Load(); p != nil {
		return *p
	}
	return nil
}

// Active reports whether the gate can refuse a call at all.
func (g *Gate) Active() bool { return g.refuse || g.lock != nil || g.window != nil }

// Refuses reports whether stale calls are refused (--on-stale refuse).
func (g *Gate) Refuses() bool { return g.refuse }

// Locked reports whether a lock is set (--lock).
func (g *Gate) Locked() bool { return g.lock != nil }

// LockMode is LockHide or LockRefuseSession.
func (g *Gate) LockMode() string { return g.lockMode }

// Approved reports whether the lock holds this definition of tool.
func (g *Gate) Approved(tool, digest string) bool {
	d, ok := g.lock[tool]
	return ok && d != "" && d == digest
}

// Call is a tools/call as the gate judges it.
type Call struct {
	Tool string
	// Planned is the digest of the definition of Tool the session was
	// served (Listed: it was served one).
	Planned string
	Listed  bool
	// Arguments are the call's raw arguments (nil when it has none).
	Arguments json.RawMessage
}

// Check returns why call must not reach the server, or nil. No hashing on
// the call path: for a tool that never changed it compares digests; for
// one that did, the stale judgement validates the call's arguments
// (contract/staleness: arguments that fit a superseded definition and not
// the current one are stale even after the session listed again).
func (g *Gate) Check(call Call) *Refusal {
	if !g.Active() {
		return nil
	}
	current := g.Current()
	cur, curKnown := current[call.Tool]
	if g.lock != nil {
		d, known := cur.Digest, curKnown
		if !known && current == nil && call.Listed {
			d, known = call.Planned, true
		}
		_, named := g.lock[call.Tool]
		if (known && !g.Approved(call.Tool, d)) || (!known && !named) {
			return &Refusal{code: semconv.RefusalToolNotApproved, tool: call.Tool, current: d}
		}
	}
	if g.refuse && current != nil && call.Listed && call.Planned != "" {
		if ref := g.checkStale(call, cur); ref != nil {
			return ref
		}
	}
	if g.window != nil && current != nil && curKnown {
		return g.checkWindow(call, cur)
	}
	return nil
}

// Fail marks the session failed (refuse-session) with its first refusal.
func (g *Gate) Fail(ref *Refusal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.failed.Load() {
		g.failure = ref
		g.failed.Store(true)
	}
}

// Failure is the refusal that failed the session (refuse-session), or nil.
func (g *Gate) Failure() *Refusal {
	if !g.failed.Load() {
		return nil
	}
	return g.failure
}
