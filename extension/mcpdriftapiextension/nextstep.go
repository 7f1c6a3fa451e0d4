package mcpdriftapiextension

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
)

// maxStepTools bounds the impact queries one drift's next step costs (a
// query is milliseconds; a drift that changes hundreds of tools is checked
// in part, and says so).
const maxStepTools = 32

// nextStep says what to do about an open drift, from the drift the
// receiver recorded and what the mcpimpact processor knows of the changed
// tools' callers; nil for a closed drift. Nothing is guessed: without a
// processor the step is review, and the rollback target is the contract
// the history names.
func (e *apiExtension) nextStep(ctx context.Context, d *apiwire.DriftDetail) (*apiwire.NextStep, error) {
	if d.State != apiwire.DriftOpen {
		return nil, nil
	}
	step := &apiwire.NextStep{Agents: []apiwire.AgentStep{}}
	if d.PreviousContract != "" {
		step.Rollback = &apiwire.Rollback{Contract: d.PreviousContract}
		if d.PreviousServer != nil && d.PreviousServer.Version != "" {
			v := d.PreviousServer.Version
			step.Rollback.ServerVersion = &v
		}
	}
	tools := changedTools(d.Changes)
	step.ToolsChanged = len(tools)
	if im := e.impactSrc(); im != nil {
		known, err := hurtAgents(ctx, im.src, d.Server, tools[:min(len(tools), maxStepTools)], step)
		if err != nil {
			return nil, err
		}
		step.ImpactKnown = known
	}
	step.Action, step.Summary = decide(d, step)
	return step, nil
}

// changedTools are the tools a drift changes, in the order of their worst
// change (the changes come worst first).
func changedTools(changes []contract.Change) []string {
	var out []string
	for _, c := range changes {
		if c.Subject == contract.KindTool && !slices.Contains(out, c.Name) {
			out = append(out, c.Name)
		}
	}
	return out
}

// hurtAgents asks the processor about each tool over its whole window and
// adds the agents the change hurts to step: those whose sessions are still
// stale or failed since the change, or, where no change is known to the
// processor, that made stale calls. known is false when the processor has
// not seen the server yet.
func hurtAgents(ctx context.Context, src controlplane.ImpactSource, server string, tools []string, step *apiwire.NextStep) (known bool, err error) {
	window, _ := src.Windows()
	byAgent := map[string]*apiwire.AgentStep{}
	for _, tool := range tools {
		im, err := src.Impact(ctx, controlplane.ImpactQuery{Server: server, Tool: tool, Window: window})
		switch {
		case errors.Is(err, controlplane.ErrUnknownServer):
			return false, nil
		case errors.Is(err, controlplane.ErrUnknownTool): // never listed, never called
			step.ToolsChecked++
			continue
		case err != nil:
			return false, err
		}
		step.ToolsChecked++
		for _, a := range im.Agents {
			if !hurt(a) {
				continue
			}
			key := "\x00" // the unnamed agent
			if a.Agent != nil {
				key = *a.Agent
			}
			s := byAgent[key]
			if s == nil {
				s = &apiwire.AgentStep{Agent: a.Agent, Tools: []string{}, Sessions: []string{}, Risk: a.Risk}
				byAgent[key] = s
			}
			s.Tools = append(s.Tools, tool)
			for _, id := range a.SessionIDs {
				if !slices.Contains(s.Sessions, id) {
					s.Sessions = append(s.Sessions, id)
				}
			}
			s.Stale += a.Digests.Stale
			if a.Recovery != nil {
				s.StillStale += a.Recovery.StillStale
				s.Failed += a.Recovery.Failed
			}
			if riskRank(a.Risk) > riskRank(s.Risk) {
				s.Risk = a.Risk
			}
		}
	}
	for _, s := range byAgent {
		step.Agents = append(step.Agents, *s)
	}
	slices.SortFunc(step.Agents, func(a, b apiwire.AgentStep) int {
		return cmp.Or(riskRank(b.Risk)-riskRank(a.Risk), cmp.Compare(b.StillStale+b.Failed, a.StillStale+a.Failed),
			cmp.Compare(b.Stale, a.Stale), cmp.Compare(agentName(a.Agent), agentName(b.Agent)))
	})
	return true, nil
}

// hurt reports whether the change hurts an agent now: some session of it
// is still stale or failed since the change. Without a known change (no
// recovery) a stale call is the only sign.
func hurt(a apiwire.AgentImpact) bool {
	if a.Recovery != nil {
		return a.Recovery.StillStale > 0 || a.Recovery.Failed > 0
	}
	return a.Digests.Stale > 0
}

func riskRank(risk string) int {
	switch risk {
	case "high":
		return 2
	case "medium":
		return 1
	}
	return 0
}

func agentName(a *string) string {
	if a == nil {
		return "(unnamed agent)"
	}
	return contract.SanitizeText(*a)
}

// decide picks the action and says it in a sentence.
func decide(d *apiwire.DriftDetail, step *apiwire.NextStep) (string, string) {
	rollback := "roll back"
	if r := step.Rollback; r != nil {
		rollback = "roll " + contract.SanitizeText(d.Server) + " back to contract " + r.Contract[:min(12, len(r.Contract))]
		if r.ServerVersion != nil {
			rollback += " (version " + contract.SanitizeText(*r.ServerVersion) + ")"
		}
	}
	partly := ""
	if step.ToolsChecked < step.ToolsChanged {
		partly = fmt.Sprintf(" (callers of %d of the %d changed tools checked)", step.ToolsChecked, step.ToolsChanged)
	}
	names := make([]string, len(step.Agents))
	for i, a := range step.Agents {
		names[i] = agentName(a.Agent)
	}
	switch {
	case !step.ImpactKnown:
		return apiwire.StepReview, "Who is hurt is not known (no mcpimpact processor has seen this server's calls): review the changes, then accept, or " + rollback + "."
	case len(step.Agents) == 0:
		return apiwire.StepAccept, "Nobody is hurt: no agent is still stale or failing since the change" + partly + "; accept the drift."
	case d.Severity == contract.Breaking.String():
		return apiwire.StepRollback, fmt.Sprintf("A breaking change hurts %s: %s, or restart or update %s%s.",
			plural(len(names), "agent"), rollback, strings.Join(names, ", "), partly)
	}
	return apiwire.StepUpdateAgents, fmt.Sprintf("Restart or update %s: their sessions hold a definition the server no longer serves, or fail since the change%s.",
		strings.Join(names, ", "), partly)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
