// Package apiwire is the mcpdrift_api extension's HTTP wire format: the
// JSON shapes the API serves and accepts (docs/api.md; openapi.json beside
// the extension describes the same), its path version and its default
// endpoint. The extension that serves them, the receiver and processor that
// fill them, and the CLI that reads them share this package. It imports no
// Collector module, so a client such as `mcpdrift` links none (its test
// keeps it so); the Collector-side views live in package controlplane.
package apiwire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
)

// APIVersion is the path segment of every API route.
const APIVersion = "v1"

// DefaultEndpoint is where the API listens unless configured, and where a
// client looks unless told: loopback only, like the Collector's other local
// endpoints (health_check 13133, zpages 55679).
const DefaultEndpoint = "localhost:13180"

// Status is a server's state as the API reports it.
type Status string

// Server states, in the order the dashboard sorts them (worst first).
const (
	StatusDown    Status = "DOWN"    // the last probe failed
	StatusDrifted Status = "DRIFTED" // a drift is open (pinned) or not yet accepted (advance)
	StatusPending Status = "PENDING" // not probed since the Collector started
	StatusUp      Status = "UP"      // probed, and no drift waits for an operator
)

// Drift states.
const (
	DriftOpen       = "open"       // waits for an operator (advance) or still served (pinned)
	DriftAccepted   = "accepted"   // an operator accepted it
	DriftReverted   = "reverted"   // pinned: the server went back to the baseline
	DriftSuperseded = "superseded" // pinned: a newer drift from the same baseline replaced it
)

// Info says which parts of the API this Collector can answer.
type Info struct {
	APIVersion string     `json:"api_version"`
	Drift      Part       `json:"drift"`
	Impact     ImpactPart `json:"impact"`
}

// Part is one part of the API and the components that serve it.
type Part struct {
	Available bool `json:"available"`
	// Components are the IDs of the components that registered (e.g.
	// "mcpdrift", "mcpimpact/tier2").
	Components []string `json:"components"`
	// Message says why the part is unavailable; empty when available.
	Message string `json:"message,omitempty"`
}

// ImpactPart is the impact part, with the processor's windows.
type ImpactPart struct {
	Part
	// WindowHours is the longest window an impact query may ask for (the
	// processor's window); 0 when unavailable.
	WindowHours float64 `json:"window_hours"`
	// RecentWindowHours is what "recent" means for the risk level.
	RecentWindowHours float64 `json:"recent_window_hours"`
}

// ServerList is GET /api/v1/servers.
type ServerList struct {
	Servers []ServerStatus `json:"servers"` // by name
	Summary StatusSummary  `json:"summary"`
}

// StatusSummary counts servers per status.
type StatusSummary struct {
	Total   int `json:"total"`
	Up      int `json:"up"`
	Drifted int `json:"drifted"`
	Down    int `json:"down"`
	Pending int `json:"pending"`
}

// ServerStatus is one probed server.
type ServerStatus struct {
	Name string `json:"name"`
	// URL is the endpoint without credentials, query or fragment, or
	// stdio:<command> (never the environment).
	URL    string `json:"url"`
	Status Status `json:"status"`
	// BaselineMode is advance or pinned.
	BaselineMode string `json:"baseline_mode"`
	// Receiver is the component ID of the receiver that probes the server.
	Receiver string `json:"receiver"`
	// Probe is null until the first probe since the Collector started.
	Probe *ProbeStatus `json:"probe"`
	// Contract is null until a contract is known (probed, or restored).
	Contract *ContractSummary `json:"contract"`
	// OpenDrift is the newest drift still open; null when none is.
	OpenDrift *DriftRef `json:"open_drift"`
	// Mixed is true while the server is a mixed fleet (rolling deploy,
	// canary): two or more contracts served alternately.
	Mixed   bool          `json:"mixed"`
	History HistoryMemory `json:"history"`
	// Variants are the contracts of the open mixed fleet, most seen first;
	// absent when the server is not mixed.
	Variants []MixedVariant `json:"variants,omitempty"`
}

// MixedVariant is one contract of a mixed fleet: its share of the
// observations since the fleet started to disagree and, unless it is the
// baseline, what it changes against the baseline, classified as its drift
// would be.
type MixedVariant struct {
	Digest   string  `json:"digest"`
	Count    int     `json:"count"`
	Share    float64 `json:"share"`
	Baseline bool    `json:"baseline"`
	// Severity, Summary and Changes are absent for the baseline (and for a
	// contract the receiver no longer keeps).
	Severity string            `json:"severity,omitempty"`
	Summary  string            `json:"summary,omitempty"`
	Changes  []contract.Change `json:"changes,omitempty"`
	// ToolDigests maps each tool some variant changes to its digest in
	// this contract (absent from it: not offered); what a span's
	// mcpdrift.tool.digest is compared with to tell which contract served
	// the call. Absent when the receiver no longer keeps the contract.
	ToolDigests map[string]string `json:"tool_digests,omitempty"`
	// Impact is who the variant affects, from the mcpimpact processor;
	// absent for the baseline, and when no processor answers.
	Impact *VariantImpact `json:"impact,omitempty"`
}

// VariantImpact is who a mixed fleet's variant affects
// (docs/mcpimpact.md, "Impact of a mixed fleet's variant"): the agents and
// sessions it served, whose calls meet its change now, and those the
// baseline served, whose calls will meet it if the fleet converges.
type VariantImpact struct {
	// Hours is the window the calls were counted in (the processor's).
	Hours               float64       `json:"hours"`
	HurtNow             VariantTotals `json:"hurt_now"`
	AtRiskOnConvergence VariantTotals `json:"at_risk_on_convergence"`
	Tools               []VariantTool `json:"tools"` // breaking first, then by name
}

// VariantTotals add up one side of a variant's impact (agents and sessions
// counted once).
type VariantTotals struct {
	Agents   int   `json:"agents"`
	Sessions int   `json:"sessions"`
	Calls    int64 `json:"calls"`
}

// VariantTool is one tool a variant changes at warning or breaking, and
// who called it in the window.
type VariantTool struct {
	Tool     string `json:"tool"`
	Severity string `json:"severity"`
	// Agents: status hurt_now first, then at_risk_on_convergence; each by
	// risk, then calls. Calls with neither contract's digest are on
	// neither side.
	Agents []AgentImpact `json:"agents"`
}

// ProbeStatus is the outcome of the last probe.
type ProbeStatus struct {
	Last        time.Time  `json:"last"`
	LastSuccess *time.Time `json:"last_success"`
	// ErrorClass is "none" when the last probe succeeded, else why it
	// failed: unreachable, timeout, http_status, auth_required,
	// protocol_error, invalid_listing, too_large or internal.
	ErrorClass string `json:"error_class"`
	// FailingSince is when the current run of failed probes began (the
	// first failure after a success, or since the Collector started); null
	// when the last probe succeeded.
	FailingSince *time.Time `json:"failing_since"`
	DurationMS   float64    `json:"duration_ms"`
	Count        int64      `json:"count"` // probes since the Collector started
}

// ContractSummary describes the contract the server serves.
type ContractSummary struct {
	// Digest is the contract digest the server serves (confirmed).
	Digest string `json:"digest"`
	// BaselineDigest is what drift is reported against: the same as Digest
	// unless a pinned baseline has an open drift.
	BaselineDigest  string      `json:"baseline_digest"`
	ObservedAt      time.Time   `json:"observed_at"`
	Transport       string      `json:"transport"`
	SpecGeneration  string      `json:"spec_generation"`
	ProtocolVersion string      `json:"protocol_version"`
	ServerInfo      ServerInfo  `json:"server_info"`
	Definitions     Definitions `json:"definitions"`
}

// ServerInfo is the name and version the server reports (serverInfo).
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Definitions counts definitions per kind.
type Definitions struct {
	Tools             int `json:"tools"`
	Prompts           int `json:"prompts"`
	Resources         int `json:"resources"`
	ResourceTemplates int `json:"resource_templates"`
}

// DriftRef names a drift.
type DriftRef struct {
	ID       string    `json:"id"`
	Severity string    `json:"severity"`
	At       time.Time `json:"at"`
}

// HistoryMemory is what a server's drift history holds.
type HistoryMemory struct {
	Drifts int `json:"drifts"`
	// Bytes is the encoded size of the entries, in memory and in storage.
	Bytes int64 `json:"bytes"`
}

// ServerDetail is GET /api/v1/servers/{name}: the status and the served
// contract, in the snapshot format `mcpdrift snapshot` writes.
type ServerDetail struct {
	ServerStatus
	// Snapshot is null while no contract is known.
	Snapshot json.RawMessage `json:"snapshot"`
}

// DriftPage is GET /api/v1/servers/{name}/drifts.
type DriftPage struct {
	Server string  `json:"server"`
	Drifts []Drift `json:"drifts"` // newest first
	// Total is how many drifts the history holds for the server.
	Total int `json:"total"`
	// Next is the cursor of the next (older) page, the id to pass as
	// before; "" (null in JSON) when this page reaches the oldest drift.
	Next string `json:"next"`
}

// AppendJSON appends the page's JSON to b. The drifts' kept encodings
// (Encoded) are copied as they are, so a page of a hundred drifts costs a
// copy rather than an encoding (and the API writes it without re-reading
// it: see JSONAppender).
func (p DriftPage) AppendJSON(b []byte) ([]byte, error) {
	server, err := marshal(p.Server)
	if err != nil {
		return nil, err
	}
	b = append(b, `{"server":`...)
	b = append(b, server...)
	b = append(b, `,"drifts":[`...)
	for i, d := range p.Drifts {
		if i > 0 {
			b = append(b, ',')
		}
		enc := d.Encoded
		if len(enc) == 0 {
			if enc, err = d.Encode(); err != nil {
				return nil, err
			}
		}
		b = append(b, enc...)
	}
	b = append(b, `],"total":`...)
	b = strconv.AppendInt(b, int64(p.Total), 10)
	b = append(b, `,"next":`...)
	if p.Next == "" {
		b = append(b, "null"...)
	} else {
		next, err := marshal(p.Next)
		if err != nil {
			return nil, err
		}
		b = append(b, next...)
	}
	return append(b, '}'), nil
}

// MarshalJSON writes what AppendJSON does.
func (p DriftPage) MarshalJSON() ([]byte, error) { return p.AppendJSON(nil) }

// JSONAppender is a response that writes its own JSON, already valid: the
// API sends it without encoding/json's second pass over the bytes.
type JSONAppender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// Drift is one entry of a server's drift history.
type Drift struct {
	// ID is unique among the drifts the Collector holds: the drift's
	// DriftID, with ".2", ".3", ... when the same change recurs.
	ID string `json:"id"`
	// DriftID is the mcpdrift.drift.id of the drift event: the same change
	// of the same server always has the same one.
	DriftID string `json:"drift_id"`
	Server  string `json:"server"`
	// At is when the drift was confirmed; ChangedAt when the server was
	// first seen serving the new contract: the drift event's timestamp, and
	// the change.at of the impact of the tools it changed.
	At               time.Time `json:"at"`
	ChangedAt        time.Time `json:"changed_at"`
	PreviousContract string    `json:"previous_contract"`
	CurrentContract  string    `json:"current_contract"`
	// PreviousServer and CurrentServer are the serverInfo the two
	// contracts carried (what to roll back to names the version); null in
	// entries recorded before the history kept them, or when the server
	// sent none.
	PreviousServer *ServerInfo      `json:"previous_server"`
	CurrentServer  *ServerInfo      `json:"current_server"`
	Severity       string           `json:"severity"`
	Summary        contract.Summary `json:"summary"`
	// Description is the drift event's one-line body, worst change first.
	Description string `json:"description"`
	// Changes is the classified change list, worst first, as `mcpdrift
	// diff --format json` writes it.
	Changes []contract.Change `json:"changes"`
	// State is open, accepted, reverted or superseded.
	State    string      `json:"state"`
	ClosedAt *time.Time  `json:"closed_at"`
	Accepted *Acceptance `json:"accepted"`
	// Truncated is true when before/after values or definitions were left
	// out to keep the entry within the history's per-drift byte budget.
	Truncated bool `json:"truncated"`

	// Encoded, when set, is this drift's JSON as MarshalJSON would write
	// it: a history keeps it with each entry, so a page of drifts costs a
	// copy, not an encoding. Whoever changes the drift drops it.
	Encoded json.RawMessage `json:"-"`
}

// driftJSON is Drift without its methods, for encoding.
type driftJSON Drift

// MarshalJSON writes Encoded when it is set.
func (d Drift) MarshalJSON() ([]byte, error) {
	if len(d.Encoded) > 0 {
		return d.Encoded, nil
	}
	return marshal(driftJSON(d))
}

// Encode returns the drift's JSON, for Encoded.
func (d Drift) Encode() (json.RawMessage, error) {
	d.Encoded = nil
	return marshal(driftJSON(d))
}

// marshal is json.Marshal without HTML escaping (server text stays as sent).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Acceptance records who accepted a drift.
type Acceptance struct {
	By string    `json:"by"`
	At time.Time `json:"at"`
	// Authenticated is true when By is the principal the Collector's auth
	// extension established, false when the request named it.
	Authenticated bool `json:"authenticated"`
	// Comment is null when the operator gave none.
	Comment *string `json:"comment"`
}

// DriftDetail is GET /api/v1/drifts/{id}: the drift with the full before
// and after definitions of every changed item, and what to do next.
type DriftDetail struct {
	Drift
	Definitions []DefinitionChange `json:"definitions"`
	// NextStep is what an operator should do about the drift while it is
	// open; null once it is closed. The extension fills it in from the
	// receiver's drift and the mcpimpact processor's impact; a history
	// does not store it.
	NextStep *NextStep `json:"next_step"`
}

// Next-step actions, from the most to the least urgent.
const (
	// StepRollback: a breaking change hurts agents now; roll the server
	// back to the previous contract (or update the agents it names).
	StepRollback = "rollback"
	// StepUpdateAgents: agents hold a definition the server no longer
	// serves, or fail since the change; restart or update them.
	StepUpdateAgents = "update_agents"
	// StepAccept: nobody called a changed tool with a stale definition or
	// failed since the change.
	StepAccept = "accept"
	// StepReview: who is hurt is not known (no mcpimpact processor, or it
	// failed); review the changes before accepting.
	StepReview = "review"
)

// NextStep is what to do about an open drift.
type NextStep struct {
	// Action is rollback, update_agents, accept or review.
	Action string `json:"action"`
	// Summary says the step in one sentence (names escaped for display).
	Summary string `json:"summary"`
	// Rollback is the contract to go back to; null when the history does
	// not know it.
	Rollback *Rollback `json:"rollback"`
	// Agents are the agents the change hurts, worst first: those to
	// restart (their sessions hold the old definition) or update (their
	// calls fail since the change). Empty when nobody is hurt or impact is
	// not known.
	Agents []AgentStep `json:"agents"`
	// ImpactKnown is false when no mcpimpact processor answered for the
	// changed tools.
	ImpactKnown bool `json:"impact_known"`
	// ToolsChecked counts the changed tools whose impact was asked;
	// ToolsChanged all of them (a very large drift is checked in part).
	ToolsChecked int `json:"tools_checked"`
	ToolsChanged int `json:"tools_changed"`
}

// Rollback names the previous contract.
type Rollback struct {
	Contract string `json:"contract"`
	// ServerVersion is the serverInfo.version the previous contract
	// carried; null when not known.
	ServerVersion *string `json:"server_version"`
}

// AgentStep is one hurt agent.
type AgentStep struct {
	// Agent is null when the spans named no agent.
	Agent *string `json:"agent"`
	// Tools are the changed tools it called.
	Tools []string `json:"tools"`
	// Sessions are its most recently active sessions (the impact's
	// session_ids), to restart.
	Sessions []string `json:"sessions"`
	// Stale counts its calls judged stale; StillStale and Failed its
	// sessions since the change (see Recovery).
	Stale      int64 `json:"stale"`
	StillStale int   `json:"still_stale"`
	Failed     int   `json:"failed"`
	// Risk is the agent's worst risk over the tools.
	Risk string `json:"risk"`
}

// MarshalJSON writes the drift's members and definitions as one object (the
// embedded Drift's MarshalJSON would otherwise stand for the whole).
func (d DriftDetail) MarshalJSON() ([]byte, error) {
	head, err := d.Drift.MarshalJSON()
	if err != nil {
		return nil, err
	}
	defs := d.Definitions
	if defs == nil {
		defs = []DefinitionChange{}
	}
	tail, err := marshal(defs)
	if err != nil {
		return nil, err
	}
	step, err := marshal(d.NextStep)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(head)+len(tail)+len(step)+len(`,"definitions":,"next_step":}`))
	out = append(out, head[:len(head)-1]...) // without the closing brace
	out = append(out, `,"definitions":`...)
	out = append(out, tail...)
	out = append(out, `,"next_step":`...)
	out = append(out, step...)
	return append(out, '}'), nil
}

// DefinitionChange is one changed item, whole, on both sides.
type DefinitionChange struct {
	// Subject is tool, prompt, resource, resource_template or server.
	Subject contract.Kind `json:"subject"`
	// Name is the tool or prompt name, resource URI or URI template; "" for
	// the server (whose before/after hold protocol_version,
	// spec_generation, server_info, capabilities and instructions).
	Name string `json:"name"`
	// Before and After are the definitions exactly as the server sent
	// them; null where the item did not exist, or when Truncated.
	Before       json.RawMessage `json:"before"`
	After        json.RawMessage `json:"after"`
	BeforeDigest string          `json:"before_digest"`
	AfterDigest  string          `json:"after_digest"`
	Truncated    bool            `json:"truncated"`
}

// AcceptRequest is the optional body of POST /api/v1/servers/{name}/accept.
type AcceptRequest struct {
	// Drift, when set, must be the id of the server's newest open drift:
	// an operator accepts what they looked at, not what arrived since.
	Drift string `json:"drift,omitempty"`
	// By names the operator when no auth extension establishes one.
	By      string `json:"by,omitempty"`
	Comment string `json:"comment,omitempty"`
}

// AcceptResult is the answer to an accept.
type AcceptResult struct {
	Server string `json:"server"`
	// Accepted are the drifts this accept closed, newest first.
	Accepted []Drift   `json:"accepted"`
	At       time.Time `json:"at"`
	By       string    `json:"by"`
	// BaselineDigest is the baseline from now on.
	BaselineDigest string `json:"baseline_digest"`
	Status         Status `json:"status"`
}

// Impact is GET /api/v1/servers/{name}/impact.
type Impact struct {
	Server string    `json:"server"`
	Tool   string    `json:"tool"`
	Hours  float64   `json:"hours"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	// CurrentDigest is the tool's digest now; null when the server no
	// longer offers it (or it never listed it).
	CurrentDigest *string `json:"current_digest"`
	// PreviousDigest is the tool's digest before its last change; null
	// when no change is known.
	PreviousDigest *string `json:"previous_digest"`
	// Change is the tool's last change the processor saw; null when none.
	Change *ToolChange   `json:"change"`
	Totals ImpactTotals  `json:"totals"`
	Agents []AgentImpact `json:"agents"` // by risk, then calls
	// NoRecentCallers is true when nobody called the tool in the window.
	NoRecentCallers bool `json:"no_recent_callers"`
	// Variants are the variants of a mixed fleet (rolling deploy, canary)
	// that change the tool at warning or breaking, most seen first, each
	// with who it affects in the same window; absent when the server is not
	// mixed or no variant changes the tool so.
	Variants []ImpactVariant `json:"variants,omitempty"`
}

// ImpactVariant is one variant of a mixed fleet in an Impact answer: its
// share of the probes and its VariantImpact restricted to the tool asked
// about.
type ImpactVariant struct {
	Digest string        `json:"digest"`
	Share  float64       `json:"share"`
	Impact VariantImpact `json:"impact"`
}

// ToolChange is the last change of a tool.
type ToolChange struct {
	DriftID string `json:"drift_id"`
	// Severity is the tool's worst change in that drift; risk follows it.
	Severity string    `json:"severity"`
	At       time.Time `json:"at"`
}

// ImpactTotals add up the agents (agents and sessions counted once).
type ImpactTotals struct {
	Agents   int   `json:"agents"`
	Sessions int   `json:"sessions"`
	Calls    int64 `json:"calls"`
	Errors   int64 `json:"errors"`
	// Stale is the headline: calls judged stale, as many as the spans
	// marked mcpdrift.tool.stale=true in the window.
	Stale int64 `json:"stale"`
	// Before counts the calls made with the previous definition while the
	// server still served it.
	Before int64 `json:"before"`
	// Recovery adds up the agents' recovery; null when no change is known.
	Recovery *Recovery `json:"recovery"`
}

// AgentImpact is one agent's calls of the tool in the window.
type AgentImpact struct {
	// Agent is null when the spans named no agent.
	Agent    *string `json:"agent"`
	Sessions int     `json:"sessions"`
	Calls    int64   `json:"calls"`
	Errors   int64   `json:"errors"`
	// AvgLatencyMS is the mean span duration; null when no call had one.
	AvgLatencyMS *float64   `json:"avg_latency_ms"`
	LastCall     time.Time  `json:"last_call"`
	Digests      DigestUsed `json:"digests"`
	// Risk is high, medium or low (docs/mcpimpact.md, "Risk").
	Risk string `json:"risk"`
	// SessionIDs are the most recently active sessions (at most the
	// processor's max_sessions_per_record).
	SessionIDs []string `json:"session_ids"`
	// Recovery says where this agent's sessions stand since the tool's
	// last change; null when no change is known.
	Recovery *Recovery `json:"recovery"`
	// Status, on a mixed fleet's variant only: hurt_now (the variant
	// served these sessions) or at_risk_on_convergence (the baseline did).
	Status string `json:"status,omitempty"`
}

// DigestUsed splits calls by what they were planned against
// (docs/mcpimpact.md, "Staleness"): stale; the tool's previous digest
// before the change; its current one; a digest no probe has shown yet
// (ahead, until the prompt probe lands); unknown (no digest on the span,
// or another one). The five add up to the calls.
type DigestUsed struct {
	Before  int64 `json:"before"`
	Stale   int64 `json:"stale"`
	New     int64 `json:"new"`
	Ahead   int64 `json:"ahead"`
	Unknown int64 `json:"unknown"`
}

// Recovery classifies the sessions a tool's last change affected (those
// that called it before the change, or made a stale call after it).
type Recovery struct {
	// Recovered sessions called with the current definition after the
	// change, and not stale since.
	Recovered int `json:"recovered"`
	// StillStale sessions' latest call after the change was stale.
	StillStale int `json:"still_stale"`
	// Failed sessions called after the change, neither with the current
	// definition nor stale, and some of those calls failed.
	Failed int `json:"failed"`
	// Idle sessions have not called the tool since the change.
	Idle int `json:"idle"`
	// MedianSecondsToRecover and MaxSecondsToRecover run from the change
	// to each recovered session's first call with the current definition;
	// null when no session recovered.
	MedianSecondsToRecover *float64 `json:"median_seconds_to_recover"`
	MaxSecondsToRecover    *float64 `json:"max_seconds_to_recover"`
}

// MaxDigestUsageDays is how many days of calls by digest the processor
// keeps, and the most a digests query may ask for.
const MaxDigestUsageDays = 35

// DigestUsage is GET /api/v1/servers/{name}/digests: calls of a tool per
// definition digest they were planned against, per UTC day, for server
// authors deciding when to drop a compatibility shim.
type DigestUsage struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	Days   int    `json:"days"`
	// From and To are the first and last day counted (YYYY-MM-DD, UTC).
	From string `json:"from"`
	To   string `json:"to"`
	// CurrentDigest is the tool's digest now; null when the server no
	// longer offers it.
	CurrentDigest *string `json:"current_digest"`
	// Digests are the definitions called, the most called first.
	Digests []DigestCalls `json:"digests"`
	// Dropped counts calls of the server that were not counted because
	// its usage table was full.
	Dropped int64 `json:"dropped"`
}

// DigestCalls is one definition's calls.
type DigestCalls struct {
	// Digest is null for calls whose span carried none.
	Digest  *string `json:"digest"`
	Current bool    `json:"current"`
	Calls   int64   `json:"calls"`
	// LastDay is the last day it was called (YYYY-MM-DD, UTC).
	LastDay string     `json:"last_day"`
	ByDay   []DayCalls `json:"by_day"` // ascending, days without calls left out
}

// DayCalls is one day's calls.
type DayCalls struct {
	Day   string `json:"day"`
	Calls int64  `json:"calls"`
}

// ErrorBody is every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong.
type ErrorDetail struct {
	// Code is bad_parameter, unauthorized, unknown_server, unknown_tool,
	// unknown_drift, no_open_drift, drift_mismatch, unavailable, not_found,
	// method_not_allowed, unsupported_media_type or request_too_large.
	Code    string `json:"code"`
	Message string `json:"message"`
	// Parameter names the query parameter or body member at fault.
	Parameter string `json:"parameter,omitempty"`
}
