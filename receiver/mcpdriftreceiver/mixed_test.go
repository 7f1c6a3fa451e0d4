package mcpdriftreceiver

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/receiver/mcpdriftreceiver/internal/metadata"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestMixedVariantsClassified: while a fleet is mixed, the open event says
// what the variant breaks (the drift's classification, against the
// baseline), an update names a variant that appears later, and the variant
// share metric carries the variant's worst severity.
func TestMixedVariantsClassified(t *testing.T) {
	a := requiredSnap(t, "query")
	b := requiredSnap(t, "query", "filters")                              // breaking: a new required parameter
	c := snap(t, map[string]string{"search": "Search", "fetch": "Fetch"}) // a tool added, search's schema loosened
	cfg := testConfig()
	cfg.Targets = []TargetConfig{{Name: "svc", Transport: "auto"}}
	cfg.Targets[0].Endpoint = "http://svc.example:8080/mcp"
	tgt := newTarget(cfg.Targets[0], cfg, func(o, n *contract.Snapshot) *contract.Report { return contract.Diff(o, n, nil) })
	tgt.tracker.cfg.samples = 0
	tgt.tracker.fleet = newFleet(newFleetParams(2, 0))
	tr := tgt.tracker

	at := time.Unix(1000, 0)
	var events []event
	observe := func(s *contract.Snapshot) {
		at = at.Add(time.Second)
		events = append(events, tr.observe(s, at).events...)
	}
	observe(a)
	for i := range 12 {
		observe([]*contract.Snapshot{a, b}[i%2])
	}
	if len(events) != 2 || events[1].kind != eventMixedOpen {
		t.Fatalf("events %v, want snapshot and mixed open", eventKinds(events))
	}
	open := events[1]
	var vb *mixedVariant
	for i, v := range open.variants {
		if v.key == a.Digests.Contract != v.baseline {
			t.Errorf("variant %s: baseline %v", short(v.key), v.baseline)
		}
		if v.key == b.Digests.Contract {
			vb = &open.variants[i]
		}
	}
	if vb == nil || vb.report == nil {
		t.Fatalf("open event has no classified variant b: %+v", open.variants)
	}
	want := contract.Diff(a, b, nil)
	if vb.report.Worst() != contract.Breaking || vb.report.OneLine() != want.OneLine() || len(vb.report.Changes) != len(want.Changes) {
		t.Errorf("variant b classified %s %q, want the drift's %s %q", vb.report.Worst(), vb.report.OneLine(), want.Worst(), want.OneLine())
	}

	lr := buildLogs(tgt, []event{open}, at).ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	if lr.SeverityNumber() != plog.SeverityNumberError || !strings.Contains(lr.Body().Str(), short(b.Digests.Contract)) {
		t.Errorf("open record: severity %v, body %q; want ERROR naming variant b", lr.SeverityNumber(), lr.Body().Str())
	}
	if v, _ := lr.Attributes().Get(semconv.DriftSeverity); v.Str() != "breaking" {
		t.Errorf("record %s = %q", semconv.DriftSeverity, v.Str())
	}
	vs, _ := lr.Attributes().Get(semconv.MixedVariants)
	found := false
	for i := range vs.Slice().Len() {
		m := vs.Slice().At(i).Map()
		if d, _ := m.Get(semconv.MixedVariantDigest); d.Str() != b.Digests.Contract {
			continue
		}
		found = true
		sev, _ := m.Get(semconv.DriftSeverity)
		sum, _ := m.Get(semconv.MixedVariantSummary)
		ch, _ := m.Get(semconv.DriftChanges)
		if sev.Str() != "breaking" || sum.Str() != want.OneLine() || ch.Slice().Len() != len(want.Changes) {
			t.Errorf("variant b: severity %q summary %q changes %d", sev.Str(), sum.Str(), ch.Slice().Len())
		}
		// mcpimpact reads which calls the variant served by its tool digests.
		td, _ := m.Get(semconv.ToolDigests)
		if d, _ := td.Map().Get("search"); d.Str() != b.Tools[0].Digest {
			t.Errorf("variant b's search digest %q, want %q", d.Str(), b.Tools[0].Digest)
		}
		rule, _ := ch.Slice().At(0).Map().Get(semconv.ChangeRule)
		name, _ := ch.Slice().At(0).Map().Get(semconv.ChangeName)
		if rule.Str() != string(want.Changes[0].Rule) || name.Str() != "search" {
			t.Errorf("variant b's first change: rule %q tool %q", rule.Str(), name.Str())
		}
	}
	if !found {
		t.Fatal("variant b missing from the record")
	}
	if pd, _ := lr.Attributes().Get(semconv.PreviousToolDigests); pd.Map().Len() != 1 {
		t.Errorf("the record's baseline tool digests: %v", pd.AsRaw())
	}

	// A third contract appears while the fleet is mixed: one update, once.
	events = nil
	for i := range 12 {
		observe([]*contract.Snapshot{a, b, c}[i%3])
	}
	if len(events) != 1 || events[0].kind != eventMixedUpdated {
		t.Fatalf("events after a third contract %v, want one update", eventKinds(events))
	}
	for _, v := range events[0].variants {
		if v.key == c.Digests.Contract && (v.report == nil || v.report.Worst() != contract.Diff(a, c, nil).Worst()) {
			t.Errorf("variant c classified %v, want the drift's", v.report)
		}
	}

	// The share metric: one point per variant other than the baseline.
	md := tgt.recordMetrics(metadata.NewMetricsBuilder(cfg.MetricsBuilderConfig, receivertest.NewNopSettings(metadata.Type)), at)
	shares := map[string]float64{}
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := range ms.Len() {
		if ms.At(i).Name() != "mcpdrift.contract.variant.share" {
			continue
		}
		dps := ms.At(i).Gauge().DataPoints()
		for j := range dps.Len() {
			sev, _ := dps.At(j).Attributes().Get(semconv.DriftSeverity)
			shares[sev.Str()] = dps.At(j).DoubleValue()
		}
	}
	wantShares := map[string]float64{}
	for _, v := range tr.mixedVariants() {
		if v.key != a.Digests.Contract {
			wantShares[contract.Diff(a, tr.seen[v.key], nil).Worst().String()] += v.share
		}
	}
	if len(shares) != 2 || shares["breaking"] != wantShares["breaking"] || shares["breaking"] <= 0.2 || len(wantShares) != 2 {
		t.Errorf("variant shares by severity %v, want %v", shares, wantShares)
	}
}

func eventKinds(es []event) []eventKind {
	return kinds(step{events: es})
}
