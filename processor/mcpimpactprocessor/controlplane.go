package mcpimpactprocessor

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// The processor's side of the control plane (docs/api.md): impact queries
// answered from the live index, by the same scan and the same risk rules
// as the impact records of a drift.

// registerControlPlane registers the view when control_plane is set.
func (p *impactProcessor) registerControlPlane(host component.Host) error {
	if p.cfg.ControlPlane == nil {
		return nil
	}
	reg, err := controlplane.Lookup(host, *p.cfg.ControlPlane)
	if err != nil {
		return fmt.Errorf("mcpimpact: %w", err)
	}
	unregister, err := reg.RegisterImpactSource(p.id, impactView{p})
	if err != nil {
		return fmt.Errorf("mcpimpact: %w", err)
	}
	p.unregister = unregister
	if p.cfg.PromptProbeInterval > 0 {
		p.probes = newPromptProbes(reg, p.cfg.PromptProbeInterval, p.probeLanded)
	}
	return nil
}

// promptProbes asks the receiver, through the control plane, for a probe
// of a target as soon as a call carries a tool digest no probe has shown
// (ahead), so the verdict settles in seconds. Requests for one target are
// at least every apart; one that comes sooner is sent when that time is
// up, once, however many calls asked meanwhile. A probe that fails is
// asked again the same way while calls wait on it, up to
// maxPromptProbeRetries times in a row; past that, the next ahead call
// asks.
type promptProbes struct {
	reg    controlplane.Registry
	every  time.Duration
	landed func(controlplane.Observation)
	// afterFunc runs f after d and returns what cancels it: time.AfterFunc's;
	// tests run f themselves.
	afterFunc func(d time.Duration, f func()) (stop func() bool)

	mu       sync.Mutex
	last     map[string]time.Time   // target → its last request
	deferred map[string]func() bool // target → what cancels its request waiting for the rate limit
	failures map[string]int         // target → its prompt probes that failed in a row
	stopped  bool
}

// maxPromptProbeRetries bounds the requests a target's failing prompt
// probes make by themselves: a target that cannot be probed is not asked
// every interval for as long as it is down.
const maxPromptProbeRetries = 3

func newPromptProbes(reg controlplane.Registry, every time.Duration, landed func(controlplane.Observation)) *promptProbes {
	return &promptProbes{reg: reg, every: every, landed: landed,
		afterFunc: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop },
		last:      map[string]time.Time{}, deferred: map[string]func() bool{}, failures: map[string]int{}}
}

// ask requests a prompt probe of server for a call judged ahead at now.
func (pp *promptProbes) ask(server string, now time.Time) {
	pp.mu.Lock()
	send := pp.request(server, now)
	pp.mu.Unlock()
	if send {
		// The extension only hands the request on; the probe runs elsewhere.
		pp.reg.RequestProbe(server, pp.landed)
	}
}

// failed asks again, within the rate limit, after a prompt probe of
// server failed at now while calls still waited on it, unless its probes
// have failed maxPromptProbeRetries times in a row.
func (pp *promptProbes) failed(server string, now time.Time) {
	pp.mu.Lock()
	pp.failures[server]++
	send := pp.failures[server] <= maxPromptProbeRetries && pp.request(server, now)
	pp.mu.Unlock()
	if send {
		pp.reg.RequestProbe(server, pp.landed)
	}
}

// succeeded resets server's count of failed probes.
func (pp *promptProbes) succeeded(server string) {
	pp.mu.Lock()
	delete(pp.failures, server)
	pp.mu.Unlock()
}

// request, under mu, reports whether a request for server is to be sent
// now; when the last one is too recent, it defers one (unless one is
// deferred already) and reports false.
func (pp *promptProbes) request(server string, now time.Time) bool {
	if pp.stopped || pp.deferred[server] != nil {
		return false
	}
	if t, ok := pp.last[server]; ok && now.Before(t.Add(pp.every)) && !now.Before(t) {
		pp.deferred[server] = pp.afterFunc(t.Add(pp.every).Sub(now), func() {
			pp.mu.Lock()
			delete(pp.deferred, server)
			stopped := pp.stopped
			pp.last[server] = t.Add(pp.every)
			pp.mu.Unlock()
			if !stopped {
				pp.reg.RequestProbe(server, pp.landed)
			}
		})
		return false
	}
	pp.last[server] = now
	return true
}

// stop cancels the deferred requests (Shutdown).
func (pp *promptProbes) stop() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.stopped = true
	for _, cancel := range pp.deferred {
		cancel()
	}
	clear(pp.deferred)
}

// probeLanded records what a prompt probe saw and re-judges the calls that
// were waiting for it. A failed probe tells nothing: it is asked again
// while calls wait on it (promptProbes.failed).
func (p *impactProcessor) probeLanded(obs controlplane.Observation) {
	if obs.Err != nil || obs.ToolDigests == nil {
		p.mu.Lock()
		waiting := p.state.index.ahead > 0
		p.mu.Unlock()
		if waiting && p.probes != nil {
			p.probes.failed(obs.Server, p.now())
		}
		return
	}
	if p.probes != nil {
		p.probes.succeeded(obs.Server)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if srv := p.state.contracts.servers[obs.Server]; srv != nil {
		srv.observe(obs.At.UnixNano(), obs.ToolDigests)
		p.state.settle(srv)
	}
}

// impactView is the processor as a controlplane.ImpactSource.
type impactView struct{ p *impactProcessor }

var _ controlplane.ImpactSource = impactView{}

func (v impactView) Windows() (window, recent time.Duration) {
	return v.p.cfg.Window, v.p.cfg.RecentWindow
}

// Impact lists the agents that called a tool of a server within q.Window:
// the tool's current digest, the one before its last change, and that
// change's severity (risk follows it) come from the digest table.
func (v impactView) Impact(_ context.Context, q controlplane.ImpactQuery) (apiwire.Impact, error) {
	p := v.p
	now := p.now()
	span := min(q.Window, p.cfg.Window)
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.state
	srv := st.contracts.servers[q.Server]
	if srv == nil {
		return apiwire.Impact{}, controlplane.ErrUnknownServer
	}
	versions := srv.tools[q.Tool]
	current := srv.latest(q.Tool)
	previous := ""
	if n := len(versions); n >= 2 {
		previous = versions[n-2].digest
	}
	out := apiwire.Impact{
		Server: q.Server, Tool: q.Tool, Hours: span.Hours(),
		From: now.Add(-span).UTC(), To: now.UTC(),
		CurrentDigest: nonEmpty(current), PreviousDigest: nonEmpty(previous),
		Agents: []apiwire.AgentImpact{},
	}
	severity := ""
	var changeAt uint32
	if c, ok := srv.changes[q.Tool]; ok {
		severity = c.severity
		changeAt = max(unixSec(c.at), 1)
		out.Change = &apiwire.ToolChange{DriftID: c.driftID, Severity: c.severity, At: time.Unix(0, c.at).UTC()}
	}
	imp := st.impact(srv, []toolChange{{tool: q.Tool, severity: severity}},
		map[string]string{q.Tool: previous}, map[string]string{q.Tool: current}, now, span, changeAt, allCalls)
	var total recovery
	for _, ti := range imp.tools {
		for i := range ti.agents {
			ai := &ti.agents[i]
			out.Agents = append(out.Agents, agentJSON(ai, changeAt > 0))
			out.Totals.Errors += ai.errors
			out.Totals.Stale += ai.staleCalls
			out.Totals.Before += ai.beforeCalls
			total.add(&ai.recovery)
		}
	}
	if changeAt > 0 {
		out.Totals.Recovery = recoveryJSON(&total)
	}
	if len(versions) == 0 && len(out.Agents) == 0 {
		return apiwire.Impact{}, controlplane.ErrUnknownTool
	}
	out.Totals.Agents, out.Totals.Sessions, out.Totals.Calls = imp.agents, imp.sessions, imp.calls
	out.NoRecentCallers = len(out.Agents) == 0
	return out, nil
}

// VariantImpacts answers who each variant of a mixed fleet affects, by the
// same pass as the impact records of its mixed event (variantsImpact: the
// server's calls of the changed tools walked once for all the variants),
// over q.Window (default and at most the processor's window): per changed
// tool, the agents a variant's sessions reached (hurt now) and those the
// baseline served (at risk on convergence).
func (v impactView) VariantImpacts(_ context.Context, q controlplane.VariantQuery) ([]apiwire.VariantImpact, error) {
	p := v.p
	variants := make([]variantChanges, len(q.Variants))
	for i, qv := range q.Variants {
		worst := map[string]string{}
		for _, c := range qv.Changes {
			noteWorst(worst, string(c.Subject), c.Name, c.Severity.String())
		}
		variants[i] = variantChanges{changes: changedTools(worst), current: qv.ToolDigests}
	}
	now := p.now()
	span := p.cfg.Window
	if q.Window > 0 {
		span = min(q.Window, span)
	}
	p.mu.Lock()
	srv := p.state.contracts.servers[q.Server]
	if srv == nil {
		p.mu.Unlock()
		return nil, controlplane.ErrUnknownServer
	}
	res := p.state.variantsImpact(srv, q.Baseline, variants, now, span)
	p.mu.Unlock()
	out := make([]apiwire.VariantImpact, len(res))
	for i := range res {
		r := &res[i]
		out[i] = apiwire.VariantImpact{
			Hours:               span.Hours(),
			HurtNow:             variantTotals(&r.hurt),
			AtRiskOnConvergence: variantTotals(&r.later),
			Tools:               make([]apiwire.VariantTool, len(r.all.tools)),
		}
		for j, ti := range r.all.tools {
			out[i].Tools[j] = apiwire.VariantTool{Tool: ti.tool, Severity: ti.severity, Agents: make([]apiwire.AgentImpact, len(ti.agents))}
			for k := range ti.agents {
				out[i].Tools[j].Agents[k] = agentJSON(&ti.agents[k], false)
			}
		}
	}
	return out, nil
}

func variantTotals(d *driftImpact) apiwire.VariantTotals {
	return apiwire.VariantTotals{Agents: d.agents, Sessions: d.sessions, Calls: d.calls}
}

// DigestUsage counts a tool's calls by the digest they were planned
// against and by day, from the usage table (usage.go).
func (v impactView) DigestUsage(_ context.Context, q controlplane.DigestUsageQuery) (apiwire.DigestUsage, error) {
	p := v.p
	today := uint32(p.now().Unix() / daySeconds)
	days := min(max(q.Days, 1), apiwire.MaxDigestUsageDays)
	from := today - uint32(days) + 1
	p.mu.Lock()
	defer p.mu.Unlock()
	srv := p.state.contracts.servers[q.Server]
	if srv == nil {
		return apiwire.DigestUsage{}, controlplane.ErrUnknownServer
	}
	usage := srv.usageOf(q.Tool, from)
	if len(srv.tools[q.Tool]) == 0 && len(usage) == 0 {
		return apiwire.DigestUsage{}, controlplane.ErrUnknownTool
	}
	current := srv.latest(q.Tool)
	out := apiwire.DigestUsage{
		Server: q.Server, Tool: q.Tool, Days: days, From: dayString(from), To: dayString(today),
		CurrentDigest: nonEmpty(current), Digests: make([]apiwire.DigestCalls, 0, len(usage)), Dropped: srv.usageDropped,
	}
	for _, u := range usage {
		dc := apiwire.DigestCalls{Digest: nonEmpty(u.digest), Current: u.digest != "" && u.digest == current, Calls: u.calls,
			LastDay: dayString(u.days[len(u.days)-1].day), ByDay: make([]apiwire.DayCalls, len(u.days))}
		for i, d := range u.days {
			dc.ByDay[i] = apiwire.DayCalls{Day: dayString(d.day), Calls: d.calls}
		}
		out.Digests = append(out.Digests, dc)
	}
	return out, nil
}

// dayString writes days since the Unix epoch as a UTC date.
func dayString(day uint32) string {
	return time.Unix(int64(day)*daySeconds, 0).UTC().Format(time.DateOnly)
}

func agentJSON(ai *agentImpact, changed bool) apiwire.AgentImpact {
	out := apiwire.AgentImpact{
		Sessions: ai.sessions,
		Calls:    ai.calls,
		Errors:   ai.errors,
		LastCall: time.Unix(int64(ai.last), 0).UTC(),
		Digests: apiwire.DigestUsed{
			Before: ai.beforeCalls, Stale: ai.staleCalls, New: ai.newCalls, Ahead: ai.aheadCalls, Unknown: ai.unknownCalls,
		},
		Risk:       ai.risk,
		SessionIDs: ai.sessionSample,
		Status:     ai.status,
	}
	if changed {
		out.Recovery = recoveryJSON(&ai.recovery)
	}
	if ai.agent != "" {
		out.Agent = &ai.agent
	}
	if ai.timed > 0 {
		ms := float64(ai.latency) / float64(ai.timed) / 1000
		out.AvgLatencyMS = &ms
	}
	if out.SessionIDs == nil {
		out.SessionIDs = []string{}
	}
	if out.Risk == "" {
		out.Risk = semconv.ImpactRiskLow
	}
	return out
}

func recoveryJSON(r *recovery) *apiwire.Recovery {
	out := &apiwire.Recovery{Recovered: r.recovered, StillStale: r.stillStale, Failed: r.failed, Idle: r.idle}
	if n := len(r.took); n > 0 {
		median := float64(r.took[n/2])
		if n%2 == 0 {
			median = (float64(r.took[n/2-1]) + float64(r.took[n/2])) / 2
		}
		longest := float64(r.took[n-1])
		out.MedianSecondsToRecover, out.MaxSecondsToRecover = &median, &longest
	}
	return out
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
