// Package controlplane is the contract between the mcpdrift_api extension
// and the components that feed it: the read-only views the mcpdrift receiver
// and the mcpimpact processor register with the extension, the registry they
// find it by, and what a prompt probe observed. The views answer in the API's
// shapes (package apiwire). The extension, the receiver and the processor
// import this package; none of them imports another. Clients of the HTTP API
// import apiwire only.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
)

// Errors a view returns; the extension maps them to HTTP statuses.
var (
	ErrUnknownServer = errors.New("unknown server")            // 404
	ErrUnknownTool   = errors.New("unknown tool")              // 404
	ErrUnknownDrift  = errors.New("unknown drift")             // 404
	ErrNoOpenDrift   = errors.New("no open drift")             // 409
	ErrDriftMismatch = errors.New("drift is not the open one") // 409
)

// DriftSource is the read-only view the mcpdrift receiver registers, plus
// its one command, Accept. Every method is safe for concurrent use and
// returns copies the caller may keep.
type DriftSource interface {
	// Servers returns the status of every target.
	Servers() []apiwire.ServerStatus
	// Server returns one target with its served contract.
	Server(name string) (apiwire.ServerDetail, error)
	// Drifts returns a page of a target's history, newest first: q.Limit
	// entries, after q.Before when set (ErrUnknownDrift when the history
	// holds no drift of that id).
	Drifts(server string, q DriftQuery) (apiwire.DriftPage, error)
	// Drift returns one history entry with its definitions.
	Drift(id string) (apiwire.DriftDetail, error)
	// Accept closes the target's open drifts on behalf of an operator:
	// pinned, the served contract becomes the baseline; advance, the drifts
	// are acknowledged. It emits an mcpdrift.drift_accepted event.
	Accept(ctx context.Context, server string, req apiwire.AcceptRequest, by Principal) (apiwire.AcceptResult, error)
}

// DriftQuery asks for a page of a server's drift history.
type DriftQuery struct {
	Limit int
	// Before, when set, is a drift id of the history: the page starts
	// with the drift after it (older). The history's bounds evict the
	// oldest drifts first, so an id evicted while a client pages means
	// nothing older is left.
	Before string
}

// Page cuts the page q asks for out of a history's entries, newest first:
// q.Limit entries after the one whose id is q.Before (ErrUnknownDrift when
// none is), and the cursor of the next page ("" when the page reaches the
// oldest entry).
func Page[E any](entries []E, id func(E) string, q DriftQuery) ([]E, string, error) {
	start := 0
	if q.Before != "" {
		i := slices.IndexFunc(entries, func(e E) bool { return id(e) == q.Before })
		if i < 0 {
			return nil, "", ErrUnknownDrift
		}
		start = i + 1
	}
	page := entries[start : start+min(q.Limit, len(entries)-start)]
	next := ""
	if len(page) > 0 && start+len(page) < len(entries) {
		next = id(page[len(page)-1])
	}
	return page, next, nil
}

// Principal is who asks for an accept.
type Principal struct {
	Name string
	// Authenticated is true when the Collector's auth extension
	// established Name.
	Authenticated bool
}

// ImpactQuery asks who called a tool of a server.
type ImpactQuery struct {
	Server string
	Tool   string
	Window time.Duration // at most the processor's window
}

// ImpactSource is the read-only view the mcpimpact processor registers.
type ImpactSource interface {
	// Windows returns the processor's window (the longest a query may ask
	// for) and recent window (risk).
	Windows() (window, recent time.Duration)
	// Impact answers who called a tool of a server within q.Window.
	Impact(ctx context.Context, q ImpactQuery) (apiwire.Impact, error)
	// DigestUsage answers how often a tool of a server was called with
	// each definition, by day.
	DigestUsage(ctx context.Context, q DigestUsageQuery) (apiwire.DigestUsage, error)
	// VariantImpacts answers who each variant of a mixed fleet affects,
	// from the receiver's classification of them: one answer per
	// q.Variants, in its order, from one pass over the server's calls.
	VariantImpacts(ctx context.Context, q VariantQuery) ([]apiwire.VariantImpact, error)
}

// VariantQuery asks who the variants of a server's mixed fleet affect.
type VariantQuery struct {
	Server string
	// Baseline maps the changed tools to their digests in the baseline
	// (its MixedVariant.ToolDigests).
	Baseline map[string]string
	// Variants are the variants asked about, the baseline not among them.
	Variants []Variant
	// Window is how far back calls count, at most the processor's window;
	// zero: all of it.
	Window time.Duration
}

// Variant is one variant a VariantQuery asks about.
type Variant struct {
	// Changes are the variant's changes against the baseline: the tools
	// they change at warning or breaking are the ones asked about.
	Changes []contract.Change
	// ToolDigests maps the changed tools to their digests in the variant
	// (MixedVariant.ToolDigests).
	ToolDigests map[string]string
}

// DigestUsageQuery asks how often a tool was called with each definition.
type DigestUsageQuery struct {
	Server string
	Tool   string
	Days   int // 1 to apiwire.MaxDigestUsageDays, ending today (UTC)
}

// Registry is what the extension offers the components that name it.
// Register returns a function that takes the source back (call it on
// Shutdown).
type Registry interface {
	RegisterDriftSource(id component.ID, s DriftSource) (unregister func(), err error)
	RegisterImpactSource(id component.ID, s ImpactSource) (unregister func(), err error)
	// RequestProbe asks the registered receiver that probes server for a
	// prompt probe (see PromptProber). It reports false, and never calls
	// done, when no registered receiver can.
	RequestProbe(server string, done func(Observation)) bool
}

// PromptProber is implemented by a DriftSource that can probe a target out
// of its schedule: the mcpimpact processor asks for one when a call carries
// a tool digest no probe has shown yet, so that its verdict settles in
// seconds rather than at the next interval.
type PromptProber interface {
	// ProbeNow asks for a probe of server now. done is called once, from
	// another goroutine, with what the next probe of server to finish
	// observed (a probe already running counts when it started after the
	// request; otherwise one more runs). It reports false, and never calls
	// done, when the source does not probe server or is not running.
	ProbeNow(server string, done func(Observation)) bool
}

// Observation is what one probe of a target saw.
type Observation struct {
	Server string
	// At is when the probe finished.
	At time.Time
	// ToolDigests maps each tool the target listed to its definition
	// digest; nil when the probe failed.
	ToolDigests map[string]string
	// Err is why the probe failed; nil on success.
	Err error
}

// Lookup finds the registry a component names in its control_plane setting,
// as components find their storage extension.
func Lookup(host component.Host, id component.ID) (Registry, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, fmt.Errorf("control_plane: extension %q not found (add it under extensions and service::extensions)", id)
	}
	r, ok := ext.(Registry)
	if !ok {
		return nil, fmt.Errorf("control_plane: extension %q is not an mcpdrift_api extension", id)
	}
	return r, nil
}
