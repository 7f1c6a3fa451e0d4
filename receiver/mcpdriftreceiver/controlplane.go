package mcpdriftreceiver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
)

// The receiver's side of the control plane (docs/api.md): it registers a
// view of its targets with the mcpdrift_api extension its control_plane
// names. The view reads under each target's stateMu; Accept is the one
// command, and the drift logic it needs (what the baseline becomes) stays
// here.

// registerControlPlane registers the view when control_plane is set.
func (r *driftReceiver) registerControlPlane(host component.Host) error {
	if r.cfg.ControlPlane == nil {
		return nil
	}
	reg, err := controlplane.Lookup(host, *r.cfg.ControlPlane)
	if err != nil {
		return fmt.Errorf("mcpdrift: %w", err)
	}
	unregister, err := reg.RegisterDriftSource(r.set.ID, driftView{r})
	if err != nil {
		return fmt.Errorf("mcpdrift: %w", err)
	}
	r.unregister = unregister
	return nil
}

// restoreHistory loads a target's drift history from storage; one that
// cannot be read is discarded with a warning, one a newer version wrote is
// kept and not written over (the baselines still restore).
func (r *driftReceiver) restoreHistory(ctx context.Context, t *target) {
	records, err := r.store.loadHistory(ctx, t.name)
	switch {
	case errors.Is(err, errNewerFormat):
		r.set.Logger.Warn("Keeping stored drift history of a newer version as it is; this target's drifts are kept in memory only",
			zap.String("target", t.name), zap.Error(err))
		return
	case err != nil:
		r.set.Logger.Warn("Discarding stored drift history that cannot be read; the next drift starts a new one",
			zap.String("target", t.name), zap.Error(err))
		return
	}
	t.history.restore(records)
}

// driftView is the receiver as a controlplane.DriftSource.
type driftView struct{ r *driftReceiver }

var _ controlplane.DriftSource = driftView{}

func (v driftView) target(name string) (*target, error) {
	for _, t := range v.r.targets {
		if t.name == name {
			return t, nil
		}
	}
	return nil, controlplane.ErrUnknownServer
}

func (v driftView) Servers() []apiwire.ServerStatus {
	out := make([]apiwire.ServerStatus, 0, len(v.r.targets))
	for _, t := range v.r.targets {
		t.stateMu.Lock()
		out = append(out, v.r.serverStatus(t))
		t.stateMu.Unlock()
	}
	return out
}

func (v driftView) Server(name string) (apiwire.ServerDetail, error) {
	t, err := v.target(name)
	if err != nil {
		return apiwire.ServerDetail{}, err
	}
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	out := apiwire.ServerDetail{ServerStatus: v.r.serverStatus(t), Snapshot: []byte("null")}
	if cur := t.tracker.current; cur != nil {
		if out.Snapshot, err = cur.Encode(); err != nil {
			return out, err
		}
	}
	return out, nil
}

func (v driftView) Drifts(name string, q controlplane.DriftQuery) (apiwire.DriftPage, error) {
	t, err := v.target(name)
	if err != nil {
		return apiwire.DriftPage{}, err
	}
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	drifts, next, err := t.history.page(q)
	if err != nil {
		return apiwire.DriftPage{}, err
	}
	return apiwire.DriftPage{Server: t.name, Drifts: drifts, Total: len(t.history.entries), Next: next}, nil
}

func (v driftView) Drift(id string) (apiwire.DriftDetail, error) {
	for _, t := range v.r.targets {
		t.stateMu.Lock()
		e := t.history.find(id)
		var out apiwire.DriftDetail
		if e != nil {
			out = e.detail()
		}
		t.stateMu.Unlock()
		if e != nil {
			return out, nil
		}
	}
	return apiwire.DriftDetail{}, controlplane.ErrUnknownDrift
}

// Accept closes a target's open drifts for an operator. Pinned: the served
// contract becomes the baseline (mcpdrift.drift.open back to 0). Advance:
// the baseline already moved; the drifts are acknowledged. Either way the
// history keeps them, and one mcpdrift.drift_accepted event per drift goes
// to the logs pipeline.
func (v driftView) Accept(ctx context.Context, name string, req apiwire.AcceptRequest, by controlplane.Principal) (apiwire.AcceptResult, error) {
	r := v.r
	t, err := v.target(name)
	if err != nil {
		return apiwire.AcceptResult{}, err
	}
	t.stateMu.Lock()
	open := t.history.open()
	pinnedOpen := t.tracker.cfg.pinned && !t.tracker.openDrift.Empty()
	if len(open) == 0 && !pinnedOpen {
		t.stateMu.Unlock()
		return apiwire.AcceptResult{}, controlplane.ErrNoOpenDrift
	}
	if req.Drift != "" && (len(open) == 0 || (open[0].ID != req.Drift && open[0].DriftID != req.Drift)) {
		t.stateMu.Unlock()
		return apiwire.AcceptResult{}, controlplane.ErrDriftMismatch
	}
	now := r.now()
	previous, report := t.tracker.baseline, t.tracker.openDrift
	t.tracker.accept()
	acceptance := &acceptRecord{By: by.Name, At: now.UTC(), Authenticated: by.Authenticated}
	if req.Comment != "" {
		acceptance.Comment = &req.Comment
	}
	closed := t.history.close(driftAccepted, now, acceptance)
	out := apiwire.AcceptResult{Server: t.name, Accepted: []apiwire.Drift{}, At: now.UTC(), By: by.Name}
	var events []event
	for _, e := range closed {
		d := e.driftRecord
		out.Accepted = append(out.Accepted, e.drift())
		events = append(events, event{kind: eventAccepted, at: now, accepted: &d, mode: r.cfg.Baseline})
	}
	if len(closed) == 0 { // no history kept (max_drifts: 0): the pinned drift itself
		d := driftRecord{
			DriftID:          driftID(t.name, previous.Digests.Contract, t.tracker.current.Digests.Contract),
			PreviousContract: previous.Digests.Contract,
			CurrentContract:  t.tracker.current.Digests.Contract,
			Severity:         report.Worst().String(),
			Description:      contract.SanitizeText(report.OneLine()),
			Accepted:         acceptance,
		}
		events = append(events, event{kind: eventAccepted, at: now, accepted: &d, mode: r.cfg.Baseline})
	}
	r.persist(ctx, t, true)
	out.BaselineDigest = t.tracker.baseline.Digests.Contract
	out.Status = v.r.serverStatus(t).Status
	logs := buildLogs(t, events, now)
	md := r.buildMetrics(t, now)
	t.stateMu.Unlock()
	r.set.Logger.Info("Drift accepted", zap.String("target", t.name), zap.String("by", contract.SanitizeText(by.Name)),
		zap.Bool("authenticated", by.Authenticated), zap.Int("drifts", len(events)))
	r.sendLogs(ctx, t, logs)
	r.sendMetrics(ctx, t, md)
	return out, nil
}

// changedTools names the tools the variants' changes are about.
func changedTools(vs []mixedVariant) map[string]bool {
	out := map[string]bool{}
	for _, v := range vs {
		if v.report == nil {
			continue
		}
		for _, c := range v.report.Changes {
			if c.Subject == contract.KindTool {
				out[c.Name] = true
			}
		}
	}
	return out
}

// toolDigests maps the tools of s to their digests: those in names, or
// every one when names is nil; nil without s.
func toolDigests(s *contract.Snapshot, names map[string]bool) map[string]string {
	if s == nil {
		return nil
	}
	out := map[string]string{}
	for _, d := range s.Tools {
		if name := canon.KeyUTF8(d.Key); names == nil || names[name] {
			out[name] = d.Digest
		}
	}
	return out
}

// serverStatus describes a target; the caller holds its stateMu.
func (r *driftReceiver) serverStatus(t *target) apiwire.ServerStatus {
	tr := t.tracker
	out := apiwire.ServerStatus{
		Name:         t.name,
		URL:          t.url,
		BaselineMode: r.cfg.Baseline,
		Receiver:     r.set.ID.String(),
		Mixed:        tr.mixedOpen(),
		History:      t.history.memory(),
	}
	variants := tr.mixedVariants()
	changed := changedTools(variants)
	for _, v := range variants {
		mv := apiwire.MixedVariant{Digest: v.key, Count: v.count, Share: v.share, Baseline: v.baseline}
		if v.report != nil {
			mv.Severity, mv.Summary = v.report.Worst().String(), contract.SanitizeText(v.report.OneLine())
			mv.Changes = slices.Clone(v.report.Changes)
		}
		snap := v.snap
		if v.baseline {
			snap = tr.baseline
		}
		if len(changed) > 0 {
			mv.ToolDigests = toolDigests(snap, changed)
		}
		out.Variants = append(out.Variants, mv)
	}
	open := t.history.open()
	if len(open) > 0 {
		out.OpenDrift = &apiwire.DriftRef{ID: open[0].ID, Severity: open[0].Severity, At: open[0].At}
	}
	probes := t.probes.Load()
	if probes > 0 {
		class, since := t.failure()
		p := &apiwire.ProbeStatus{Last: t.lastProbe.UTC(), ErrorClass: class, FailingSince: since, DurationMS: float64(t.duration) / float64(time.Millisecond), Count: probes}
		if !t.lastSuccess.IsZero() {
			ls := t.lastSuccess.UTC()
			p.LastSuccess = &ls
		}
		out.Probe = p
	}
	if cur := tr.current; cur != nil {
		name, version := serverInfo(cur)
		out.Contract = &apiwire.ContractSummary{
			Digest:          cur.Digests.Contract,
			BaselineDigest:  tr.baseline.Digests.Contract,
			ObservedAt:      cur.ObservedAt.UTC(),
			Transport:       cur.Server.Transport,
			SpecGeneration:  string(cur.SpecGeneration),
			ProtocolVersion: cur.ProtocolVersion,
			ServerInfo:      apiwire.ServerInfo{Name: name, Version: version},
			Definitions: apiwire.Definitions{
				Tools: len(cur.Tools), Prompts: len(cur.Prompts), Resources: len(cur.Resources), ResourceTemplates: len(cur.ResourceTemplates),
			},
		}
	}
	switch {
	case probes == 0:
		out.Status = apiwire.StatusPending
	case out.Probe.ErrorClass != "none":
		out.Status = apiwire.StatusDown
	case len(open) > 0 || (tr.cfg.pinned && !tr.openDrift.Empty()):
		out.Status = apiwire.StatusDrifted
	default:
		out.Status = apiwire.StatusUp
	}
	return out
}
