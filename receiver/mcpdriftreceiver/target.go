package mcpdriftreceiver

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/receiver/mcpdriftreceiver/internal/metadata"
)

// target is one configured MCP server and everything the receiver keeps
// about it between probes.
type target struct {
	cfg      TargetConfig
	name     string
	url      string // redacted endpoint, or stdio:<command>
	interval time.Duration

	httpClient *http.Client // built at Start for endpoint targets
	// sampleClient builds a client of the target's configuration with a
	// connection pool of its own, for one sample: samples run at once, and
	// each must open its own connection (one balancer pick).
	sampleClient       func(context.Context) (*http.Client, error)
	clientCapabilities json.RawMessage
	probe              probe.Target // what the probe is told; set at Start
	hint               handshakeHint
	// changesOnConnect is set once a probe saw the server's listings
	// change after it connected (changedOnConnect): its samples then wait
	// out settle as scheduled probes do.
	changesOnConnect atomic.Bool

	// stateMu guards the tracker, the history and the probe state below
	// once a probe has a result: the control plane reads them, and accept
	// changes them, from other goroutines.
	stateMu sync.Mutex
	tracker *tracker
	history *history
	// evidenceUnstored counts the probes since a rollout's growing
	// evidence was last stored (evidenceStoreEvery).
	evidenceUnstored int

	running  atomic.Bool // a probe of this target is in flight
	prompt   promptWaiters
	skipped  atomic.Int64 // ticks skipped because the previous probe still ran
	overtime atomic.Int64 // probes that outran their slot budget (see scheduler)
	probes   atomic.Int64 // probes completed

	// Probe and drift state for metrics: written and read by the goroutine
	// that probes the target (one at a time). up and errorClass are also read
	// by tests, under statusMu.
	start       pcommon.Timestamp
	statusMu    sync.Mutex
	up          bool
	errorClass  string
	down        bool // the last probe failed (for log-on-change)
	duration    time.Duration
	lastProbe   time.Time
	lastSuccess time.Time
	// failingSince is when the current run of failed probes began (under
	// statusMu); zero while the last probe succeeded.
	failingSince time.Time
	changes      map[changeKey]int64
	drifts       map[string]int64 // worst severity -> confirmed drifts
}

type changeKey struct{ severity, rule string }

func newTarget(tc TargetConfig, cfg *Config, classify func(old, new *contract.Snapshot) *contract.Report) *target {
	t := &target{
		cfg:      tc,
		name:     tc.Name,
		interval: cfg.CollectionInterval,
		start:    pcommon.NewTimestampFromTime(time.Now()),
		changes:  map[changeKey]int64{},
		drifts:   map[string]int64{},
	}
	// Every severity's drift count starts at 0 and is exported from the
	// first probe: Prometheus' increase() needs a sample before the first
	// drift (a series that appears at 1 has no increase), and a counter that
	// goes back to 0 after a restart reads as a reset rather than as nothing.
	for _, sev := range [...]contract.Severity{contract.Breaking, contract.Warning, contract.Compatible, contract.Info} {
		t.drifts[sev.String()] = 0
	}
	if tc.CollectionInterval > 0 {
		t.interval = tc.CollectionInterval
	}
	caps := cfg.ClientCapabilities
	if tc.ClientCapabilities != nil {
		caps = tc.ClientCapabilities
	}
	t.clientCapabilities = clientCapabilitiesJSON(caps)
	t.url = serverid.URL(tc.Endpoint, tc.Command)
	samples := cfg.ConfirmSamples
	if len(tc.Command) > 0 {
		samples = 0 // one child process is never a fleet
	}
	t.tracker = newTracker(trackerConfig{
		limits:         cfg.Limits,
		confirmAfter:   cfg.ConfirmAfter,
		samples:        samples,
		pinned:         cfg.Baseline == BaselinePinned,
		volatileAfter:  cfg.Volatile.After,
		ignoreVolatile: cfg.Volatile.Ignore,
	}, classify)
	t.history = newHistory(tc.Name, cfg.DriftHistory)
	return t
}

// recordHistory keeps a step's drifts in the history and closes what the
// step closed; it reports whether the history changed. The caller holds
// stateMu.
func (t *target) recordHistory(st step, now time.Time) bool {
	changed := false
	if st.reverted {
		changed = len(t.history.close(driftReverted, now, nil)) > 0
	}
	for _, e := range st.events {
		if e.kind != eventDrift {
			continue
		}
		if t.tracker.cfg.pinned { // a pinned target serves one drift at a time
			changed = len(t.history.close(driftSuperseded, now, nil)) > 0 || changed
		}
		changed = t.history.record(e) != nil || changed
	}
	return changed
}

// hostPort returns server.address and server.port of an endpoint target.
func (t *target) hostPort() (string, int) { return serverid.HostPort(t.cfg.Endpoint) }

func (t *target) recordProbe(started, finished time.Time, err error) {
	t.probes.Add(1)
	t.duration = finished.Sub(started)
	t.lastProbe = finished
	t.statusMu.Lock()
	defer t.statusMu.Unlock()
	t.up = err == nil
	t.errorClass = "none"
	if err != nil {
		t.errorClass, _ = errorClass(err)
		if t.failingSince.IsZero() {
			t.failingSince = finished
		}
	} else {
		t.lastSuccess, t.failingSince = finished, time.Time{}
	}
}

// failure is the last probe's error class ("none" on success) and, when
// it failed, since when the target has been failing.
func (t *target) failure() (string, *time.Time) {
	t.statusMu.Lock()
	defer t.statusMu.Unlock()
	if t.failingSince.IsZero() {
		return t.errorClass, nil
	}
	since := t.failingSince.UTC()
	return t.errorClass, &since
}

// lastErrorClass is the error class of the last probe ("none" on success).
func (t *target) lastErrorClass() string {
	t.statusMu.Lock()
	defer t.statusMu.Unlock()
	return t.errorClass
}

// noteFailure records a failure and reports whether it is news (the
// previous probe succeeded), so a target that stays down logs once.
func (t *target) noteFailure() bool {
	news := !t.down
	t.down = true
	return news
}

// noteSuccess reports whether the target just came back.
func (t *target) noteSuccess() bool {
	back := t.down
	t.down = false
	return back
}

// countEvents adds confirmed drifts to the cumulative drift counters.
func (t *target) countEvents(events []event) {
	for _, e := range events {
		if e.kind != eventDrift {
			continue
		}
		t.drifts[e.report.Worst().String()]++
		for _, c := range e.report.Changes {
			t.changes[changeKey{c.Severity.String(), string(c.Rule)}]++
		}
	}
}

// recordMetrics writes the target's current metrics into mb and emits them
// as one resource.
func (t *target) recordMetrics(mb *metadata.MetricsBuilder, now time.Time) pmetric.Metrics {
	ts := pcommon.NewTimestampFromTime(now)
	t.statusMu.Lock()
	up, class := boolInt(t.up), t.errorClass
	t.statusMu.Unlock()
	mb.RecordMcpdriftProbeUpDataPoint(ts, up, errorClassAttr(class))
	mb.RecordMcpdriftProbeDurationDataPoint(ts, t.duration.Seconds())
	if !t.lastSuccess.IsZero() {
		mb.RecordMcpdriftProbeLastSuccessDataPoint(ts, t.lastSuccess.Unix())
	}
	if b := t.tracker.baseline; b != nil {
		for _, k := range contract.Kinds {
			mb.RecordMcpdriftDefinitionsDataPoint(ts, int64(len(b.Listing(k))), metadata.MapAttributeDefinitionKind[string(k)])
		}
	}
	for k, n := range t.changes {
		mb.RecordMcpdriftDriftChangesDataPoint(ts, n, severityAttr(k.severity), k.rule)
	}
	for sev, n := range t.drifts {
		mb.RecordMcpdriftDriftCountDataPoint(ts, n, severityAttr(sev))
	}
	mb.RecordMcpdriftContractMixedDataPoint(ts, boolInt(t.tracker.mixedOpen()))
	for sev, share := range t.tracker.variantShares() {
		mb.RecordMcpdriftContractVariantShareDataPoint(ts, share, severityAttr(sev.String()))
	}
	mb.RecordMcpdriftDriftOpenDataPoint(ts, boolInt(!t.tracker.openDrift.Empty()))
	mb.RecordMcpdriftDriftHistorySizeDataPoint(ts, t.history.bytes)

	rb := mb.NewResourceBuilder()
	rb.SetMcpdriftServerName(t.name)
	rb.SetMcpdriftServerURL(t.url)
	if host, port := t.hostPort(); host != "" {
		rb.SetServerAddress(host)
		rb.SetServerPort(int64(port))
		rb.SetURLFull(t.url)
	}
	return mb.Emit(metadata.WithResource(rb.Emit()), metadata.WithStartTimeOverride(t.start))
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func errorClassAttr(class string) metadata.AttributeErrorClass {
	if v, ok := metadata.MapAttributeErrorClass[class]; ok {
		return v
	}
	return metadata.AttributeErrorClassInternal
}

func severityAttr(s string) metadata.AttributeSeverity {
	if v, ok := metadata.MapAttributeSeverity[s]; ok {
		return v
	}
	return metadata.AttributeSeverityInfo
}
