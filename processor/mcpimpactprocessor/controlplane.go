package mcpimpactprocessor

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"

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
	return nil
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
func (v impactView) Impact(_ context.Context, q controlplane.ImpactQuery) (controlplane.Impact, error) {
	p := v.p
	now := p.now()
	span := min(q.Window, p.cfg.Window)
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.state
	srv := st.contracts.servers[q.Server]
	if srv == nil {
		return controlplane.Impact{}, controlplane.ErrUnknownServer
	}
	versions := srv.tools[q.Tool]
	current := srv.latest(q.Tool)
	previous := ""
	if n := len(versions); n >= 2 {
		previous = versions[n-2].digest
	}
	out := controlplane.Impact{
		Server: q.Server, Tool: q.Tool, Hours: span.Hours(),
		From: now.Add(-span).UTC(), To: now.UTC(),
		CurrentDigest: nonEmpty(current), PreviousDigest: nonEmpty(previous),
		Agents: []controlplane.AgentImpact{},
	}
	severity := ""
	if c, ok := srv.changes[q.Tool]; ok {
		severity = c.severity
		out.Change = &controlplane.ToolChange{DriftID: c.driftID, Severity: c.severity, At: time.Unix(0, c.at).UTC()}
	}
	imp := st.impact(srv, []toolChange{{tool: q.Tool, severity: severity}},
		map[string]string{q.Tool: previous}, map[string]string{q.Tool: current}, now, span)
	for _, ti := range imp.tools {
		for i := range ti.agents {
			out.Agents = append(out.Agents, agentJSON(&ti.agents[i]))
			out.Totals.Errors += ti.agents[i].errors
		}
	}
	if len(versions) == 0 && len(out.Agents) == 0 {
		return controlplane.Impact{}, controlplane.ErrUnknownTool
	}
	out.Totals.Agents, out.Totals.Sessions, out.Totals.Calls = imp.agents, imp.sessions, imp.calls
	out.NoRecentCallers = len(out.Agents) == 0
	return out, nil
}

func agentJSON(ai *agentImpact) controlplane.AgentImpact {
	out := controlplane.AgentImpact{
		Sessions:   ai.sessions,
		Calls:      ai.calls,
		Errors:     ai.errors,
		LastCall:   time.Unix(int64(ai.last), 0).UTC(),
		Digests:    controlplane.DigestUsed{Old: ai.oldCalls, New: ai.newCalls, Unknown: ai.unknownCalls},
		Risk:       ai.risk,
		SessionIDs: ai.sessionSample,
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

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
