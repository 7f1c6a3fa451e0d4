package mcpdriftreceiver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"github.com/mcpdrift/mcpdrift/receiver/mcpdriftreceiver/internal/metadata"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// buildLogs turns tracker events into log records (docs/events.md), under
// one resource that names the target.
func buildLogs(t *target, events []event, now time.Time) plog.Logs {
	logs := plog.NewLogs()
	rl := logs.ResourceLogs().AppendEmpty()
	setServerAttrs(t, rl.Resource().Attributes(), true)
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(metadata.ScopeName)
	for _, e := range events {
		lr := sl.LogRecords().AppendEmpty()
		// A drift occurred when its contract was first observed; it was
		// observed (confirmed) now.
		lr.SetTimestamp(pcommon.NewTimestampFromTime(e.occurred()))
		lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(now))
		attrs := lr.Attributes()
		setServerAttrs(t, attrs, false)
		switch e.kind {
		case eventSnapshot:
			setEventName(lr, semconv.EventSnapshot)
			fillSnapshot(lr, t, e.current)
		case eventDrift:
			setEventName(lr, semconv.EventDrift)
			fillDrift(lr, t, e)
		case eventMixedOpen, eventMixedUpdated, eventMixedResolved:
			setEventName(lr, semconv.EventMixedContract)
			fillMixed(lr, t, e)
		case eventAccepted:
			setEventName(lr, semconv.EventDriftAccepted)
			fillAccepted(lr, t, e)
		case eventVolatile:
			setEventName(lr, semconv.EventVolatileField)
			lr.SetSeverityNumber(plog.SeverityNumberWarn)
			lr.SetSeverityText("warning")
			attrs.PutStr(semconv.VolatileSubject, string(e.field.Subject))
			attrs.PutStr(semconv.VolatileName, e.field.Name)
			attrs.PutStr(semconv.VolatilePath, e.field.Path)
			lr.Body().SetStr(volatileBody(t, e.field))
		}
	}
	return logs
}

// volatileBody says what happens to a volatile field from now on: a change
// there alone is never drift, and volatile.ignore decides whether drift
// reports show it.
func volatileBody(t *target, f fieldKey) string {
	next := "it is left out of drift reports from now on, and a change there alone is not drift"
	if !t.tracker.cfg.ignoreVolatile {
		next = "a change there alone is not drift; drift reports still show it (volatile.ignore: false)"
	}
	return fmt.Sprintf("%s: %s %s field %s changes on every probe; %s",
		t.name, f.Subject, contract.SanitizeText(f.Name), contract.SanitizeText(f.Path), next)
}

// setEventName sets the record's event name field and, for consumers that
// only read attributes, the event.name attribute.
func setEventName(lr plog.LogRecord, name string) {
	lr.SetEventName(name)
	lr.Attributes().PutStr(semconv.EventName, name)
}

// setServerAttrs writes the keys that name the target. On the resource they
// include server.address, server.port and url.full for HTTP targets.
func setServerAttrs(t *target, attrs pcommon.Map, resource bool) {
	attrs.PutStr(semconv.ServerName, t.name)
	attrs.PutStr(semconv.ServerURL, t.url)
	if !resource {
		return
	}
	if host, port := t.hostPort(); host != "" {
		attrs.PutStr(semconv.ServerAddress, host)
		attrs.PutInt(semconv.ServerPort, int64(port))
		attrs.PutStr(semconv.URLFull, t.url)
	}
}

func fillSnapshot(lr plog.LogRecord, t *target, s *contract.Snapshot) {
	lr.SetSeverityNumber(plog.SeverityNumberInfo)
	lr.SetSeverityText("info")
	attrs := lr.Attributes()
	attrs.PutStr(semconv.ContractDigest, s.Digests.Contract)
	attrs.PutStr(semconv.ProtocolVersion, s.ProtocolVersion)
	attrs.PutStr(semconv.SpecGeneration, string(s.SpecGeneration))
	attrs.PutStr(semconv.Transport, s.Server.Transport)
	if name, version := serverInfo(s); name != "" || version != "" {
		attrs.PutStr(semconv.ServerInfoName, name)
		attrs.PutStr(semconv.ServerInfoVersion, version)
	}
	putDigests(attrs.PutEmptyMap(semconv.ToolDigests), s.Tools)
	attrs.PutStr(semconv.ToolsSetDigest, s.Digests.Tools)
	attrs.PutStr(semconv.PromptsSetDigest, s.Digests.Prompts)
	attrs.PutStr(semconv.ResourcesSetDigest, s.Digests.Resources)
	attrs.PutStr(semconv.TemplatesSetDigest, s.Digests.ResourceTemplates)
	if s.Digests.Instructions != nil {
		attrs.PutStr(semconv.InstructionsDigest, *s.Digests.Instructions)
	}
	attrs.PutInt(semconv.ToolsCount, int64(len(s.Tools)))
	lr.Body().SetStr(fmt.Sprintf("snapshot of %s: %d tools, %d prompts, %d resources, contract %s",
		t.name, len(s.Tools), len(s.Prompts), len(s.Resources), short(s.Digests.Contract)))
}

func fillDrift(lr plog.LogRecord, t *target, e event) {
	r := e.report
	worst := r.Worst()
	lr.SetSeverityNumber(logSeverity(worst))
	lr.SetSeverityText(worst.String())
	lr.Body().SetStr(contract.SanitizeText(r.OneLine()))
	attrs := lr.Attributes()
	attrs.PutStr(semconv.DriftID, driftID(t.name, e.previous.Digests.Contract, e.current.Digests.Contract))
	attrs.PutStr(semconv.DriftSeverity, worst.String())
	attrs.PutStr(semconv.PreviousContract, e.previous.Digests.Contract)
	attrs.PutStr(semconv.ContractDigest, e.current.Digests.Contract)
	putClassification(attrs, r)
	putDigests(attrs.PutEmptyMap(semconv.PreviousToolDigests), e.previous.Tools)
	putDigests(attrs.PutEmptyMap(semconv.ToolDigests), e.current.Tools)
}

// putClassification writes what a drift, or a mixed fleet's variant,
// changes against the baseline: counts by severity and every change.
func putClassification(attrs pcommon.Map, r *contract.Report) {
	counts := r.Summary()
	attrs.PutInt(semconv.DriftBreaking, int64(counts.Count(contract.Breaking)))
	attrs.PutInt(semconv.DriftWarning, int64(counts.Count(contract.Warning)))
	attrs.PutInt(semconv.DriftCompatible, int64(counts.Count(contract.Compatible)))
	attrs.PutInt(semconv.DriftInfo, int64(counts.Count(contract.Info)))
	changes := attrs.PutEmptySlice(semconv.DriftChanges)
	for _, c := range r.Changes {
		m := changes.AppendEmpty().SetEmptyMap()
		m.PutStr(semconv.ChangeRule, string(c.Rule))
		m.PutStr(semconv.ChangeSeverity, c.Severity.String())
		m.PutStr(semconv.ChangeSubject, string(c.Subject))
		m.PutStr(semconv.ChangeName, canon.KeyUTF8(c.Name))
		m.PutStr(semconv.ChangePath, c.Path)
		m.PutStr(semconv.ChangeBefore, string(c.Before))
		m.PutStr(semconv.ChangeAfter, string(c.After))
		m.PutStr(semconv.ChangeMessage, c.Message)
	}
}

// mixedStates names the mixed events' mcpdrift.mixed.state.
var mixedStates = map[eventKind]string{eventMixedOpen: "open", eventMixedUpdated: "updated", eventMixedResolved: "resolved"}

// fillMixed describes a mixed fleet. While it is open (open, updated) each
// variant other than the baseline carries its classification against the
// baseline, and the record is as severe as the worst of them (at least
// WARN): a breaking canary is an error now, not when it reaches 100 %.
func fillMixed(lr plog.LogRecord, t *target, e event) {
	attrs := lr.Attributes()
	state := mixedStates[e.kind]
	attrs.PutStr(semconv.MixedState, state)
	worst, worstVariant := contract.Info, (*mixedVariant)(nil)
	vs := attrs.PutEmptySlice(semconv.MixedVariants)
	for i, v := range e.variants {
		m := vs.AppendEmpty().SetEmptyMap()
		m.PutStr(semconv.MixedVariantDigest, v.key)
		m.PutInt(semconv.MixedVariantCount, int64(v.count))
		m.PutDouble(semconv.MixedVariantShare, v.share)
		m.PutStr(semconv.MixedVariantFirstSeen, v.first.UTC().Format(time.RFC3339))
		m.PutStr(semconv.MixedVariantLastSeen, v.last.UTC().Format(time.RFC3339))
		m.PutBool(semconv.MixedVariantBaseline, v.baseline)
		if v.report == nil || e.kind == eventMixedResolved {
			continue
		}
		sev := v.report.Worst()
		if v.snap != nil { // for mcpimpact: which calls were made with this variant's tools
			putDigests(m.PutEmptyMap(semconv.ToolDigests), v.snap.Tools)
		}
		m.PutStr(semconv.DriftSeverity, sev.String())
		m.PutStr(semconv.MixedVariantSummary, contract.SanitizeText(v.report.OneLine()))
		putClassification(m, v.report)
		if worstVariant == nil || sev > worst {
			worst, worstVariant = sev, &e.variants[i]
		}
	}
	if e.kind == eventMixedResolved {
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText(state)
		attrs.PutStr(semconv.ContractDigest, e.current.Digests.Contract)
		lr.Body().SetStr(fmt.Sprintf("%s mixed fleet resolved: contract %s holds", t.name, short(e.current.Digests.Contract)))
		return
	}
	if e.previous != nil {
		putDigests(attrs.PutEmptyMap(semconv.PreviousToolDigests), e.previous.Tools)
	}
	lr.SetSeverityNumber(max(plog.SeverityNumberWarn, logSeverity(worst)))
	lr.SetSeverityText(state)
	body := fmt.Sprintf("%s serves %d contracts alternately (mixed fleet); drift is held until one holds", t.name, len(e.variants))
	if worstVariant != nil {
		attrs.PutStr(semconv.DriftSeverity, worst.String())
		body += fmt.Sprintf(". Variant %s (%.0f %% of probes): %s", short(worstVariant.key), 100*worstVariant.share, contract.SanitizeText(worstVariant.report.OneLine()))
	}
	lr.Body().SetStr(body)
}

// fillAccepted describes an accept: who, when (the record's time) and which
// drift, for audit.
func fillAccepted(lr plog.LogRecord, t *target, e event) {
	d, a := e.accepted, e.accepted.Accepted
	lr.SetSeverityNumber(plog.SeverityNumberInfo)
	lr.SetSeverityText("info")
	attrs := lr.Attributes()
	attrs.PutStr(semconv.DriftID, d.DriftID)
	attrs.PutStr(semconv.DriftSeverity, d.Severity)
	attrs.PutStr(semconv.PreviousContract, d.PreviousContract)
	attrs.PutStr(semconv.ContractDigest, d.CurrentContract)
	attrs.PutStr(semconv.BaselineMode, e.mode)
	attrs.PutStr(semconv.AcceptBy, a.By)
	attrs.PutBool(semconv.AcceptAuthenticated, a.Authenticated)
	if a.Comment != nil {
		attrs.PutStr(semconv.AcceptComment, *a.Comment)
	}
	lr.Body().SetStr(fmt.Sprintf("%s accepted drift %s of %s (%s): %s", contract.SanitizeText(a.By), d.DriftID, t.name, d.Severity, d.Description))
}

// logSeverity maps a drift severity to an OpenTelemetry log severity.
func logSeverity(s contract.Severity) plog.SeverityNumber {
	switch s {
	case contract.Breaking:
		return plog.SeverityNumberError
	case contract.Warning:
		return plog.SeverityNumberWarn
	case contract.Compatible:
		return plog.SeverityNumberInfo2
	}
	return plog.SeverityNumberInfo
}

// driftID is stable for the same change of the same server, so the same
// drift observed again (after a restart) carries the same ID.
func driftID(server, previous, current string) string {
	sum := sha256.Sum256([]byte(server + "\n" + previous + "\n" + current))
	return hex.EncodeToString(sum[:8])
}

// putDigests writes name → digest. Attribute strings must be UTF-8, so a name
// with an unpaired surrogate is written as the recipe's UTF-8 form (U+FFFD).
func putDigests(m pcommon.Map, l contract.Listing) {
	m.EnsureCapacity(len(l))
	for _, d := range l {
		m.PutStr(canon.KeyUTF8(d.Key), d.Digest)
	}
}

func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}

// serverInfo reads name and version from the snapshot's serverInfo.
func serverInfo(s *contract.Snapshot) (name, version string) {
	var info struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if len(s.ServerInfo) > 0 {
		_ = json.Unmarshal(s.ServerInfo, &info)
	}
	return info.Name, info.Version
}
