package mcpdriftreceiver

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/semconv"
)

func TestDriftEventShape(t *testing.T) {
	a := snap(t, map[string]string{"search": "Search", "gone": "bye"})
	b := snap(t, map[string]string{"search": "Search the web", "fresh": "hi"})
	cfg := testConfig()
	cfg.Targets = []TargetConfig{{Name: "web", Transport: "auto"}}
	cfg.Targets[0].Endpoint = "https://user:pw@search.example.com:8443/mcp?key=secret"
	tgt := newTarget(cfg.Targets[0], cfg, func(o, n *contract.Snapshot) *contract.Report { return contract.Diff(o, n, nil) })
	observeAgreed(tgt.tracker, a, time.Unix(100, 0))
	observeAgreed(tgt.tracker, b, time.Unix(200, 0))
	st := observeAgreed(tgt.tracker, b, time.Unix(300, 0))
	logs := buildLogs(tgt, st.events, time.Unix(301, 0))

	res := logs.ResourceLogs().At(0).Resource().Attributes()
	for k, want := range map[string]any{
		semconv.ServerName: "web", semconv.ServerURL: "https://search.example.com:8443/mcp",
		semconv.ServerAddress: "search.example.com", semconv.ServerPort: int64(8443), semconv.URLFull: "https://search.example.com:8443/mcp",
	} {
		v, ok := res.Get(k)
		if !ok || v.AsRaw() != want {
			t.Errorf("resource %s = %v, want %v", k, v.AsRaw(), want)
		}
	}
	lrs := logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	if lrs.Len() != 2 || lrs.At(0).EventName() != semconv.EventDrift || lrs.At(1).EventName() != semconv.EventSnapshot {
		t.Fatalf("want drift then snapshot, got %d records", lrs.Len())
	}
	d := lrs.At(0)
	if d.SeverityNumber() != plog.SeverityNumberError || d.SeverityText() != "breaking" || d.Body().Str() == "" {
		t.Errorf("severity %v %q body %q", d.SeverityNumber(), d.SeverityText(), d.Body().Str())
	}
	// The drift occurred when b was first observed (200), and was observed,
	// confirmed, by the probe at 300 and emitted at 301: calls between 200
	// and 300 with a's digests are stale, not "before the change".
	if !d.Timestamp().AsTime().Equal(time.Unix(200, 0)) || !d.ObservedTimestamp().AsTime().Equal(time.Unix(301, 0)) {
		t.Errorf("timestamp %v, observed %v: want b's first observation (200) and the emission (301)", d.Timestamp().AsTime(), d.ObservedTimestamp().AsTime())
	}
	attrs := d.Attributes()
	for _, k := range []string{semconv.DriftID, semconv.DriftSeverity, semconv.PreviousContract, semconv.ContractDigest, semconv.EventName} {
		if v, ok := attrs.Get(k); !ok || v.Str() == "" {
			t.Errorf("missing %s", k)
		}
	}
	changes, _ := attrs.Get(semconv.DriftChanges)
	if changes.Slice().Len() != 3 {
		t.Fatalf("changes: %v", changes.AsRaw())
	}
	first := changes.Slice().At(0).Map().AsRaw()
	for _, k := range []string{semconv.ChangeRule, semconv.ChangeSeverity, semconv.ChangeSubject, semconv.ChangeName, semconv.ChangePath, semconv.ChangeBefore, semconv.ChangeAfter, semconv.ChangeMessage} {
		if _, ok := first[k]; !ok {
			t.Errorf("change map lacks %s: %v", k, first)
		}
	}
	prevDigests, _ := attrs.Get(semconv.PreviousToolDigests)
	curDigests, _ := attrs.Get(semconv.ToolDigests)
	if _, ok := prevDigests.Map().Get("gone"); !ok {
		t.Error("previous digests lack the removed tool")
	}
	if _, ok := curDigests.Map().Get("fresh"); !ok {
		t.Error("current digests lack the added tool")
	}
	// The same drift observed again has the same ID.
	id, _ := attrs.Get(semconv.DriftID)
	if id.Str() != driftID("web", a.Digests.Contract, b.Digests.Contract) || len(id.Str()) != 16 {
		t.Errorf("drift id %s", id.Str())
	}
}

func TestMetricsAfterDrift(t *testing.T) {
	a := snap(t, map[string]string{"search": "v1"})
	b := snap(t, map[string]string{"search": "v1", "x": "new"})
	p := newFakeProber()
	p.set("srv", a, nil)
	r, logs, metrics := runReceiver(t, testConfig("srv"), p, &storageHost{})
	defer func() { _ = r.Shutdown(context.Background()) }()
	waitFor(t, "baseline", func() bool { return len(eventsNamed(logs, semconv.EventSnapshot)) == 1 })
	p.set("srv", b, nil)
	waitFor(t, "drift", func() bool { return len(eventsNamed(logs, semconv.EventDrift)) == 1 })
	n := p.count("srv")
	waitFor(t, "metrics after the drift", func() bool { return p.count("srv") > n+1 })
	all := metrics.AllMetrics()
	last := all[len(all)-1]
	got := map[string]bool{}
	rm := last.ResourceMetrics().At(0)
	if v, _ := rm.Resource().Attributes().Get(semconv.ServerName); v.Str() != "srv" {
		t.Errorf("resource %v", rm.Resource().Attributes().AsRaw())
	}
	ms := rm.ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		got[m.Name()] = true
		if m.Name() == "mcpdrift.drift.changes" {
			dp := m.Sum().DataPoints().At(0)
			sev, _ := dp.Attributes().Get("mcpdrift.drift.severity")
			if dp.IntValue() != 1 || sev.Str() != "compatible" || m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
				t.Errorf("drift changes: %v %v", dp.IntValue(), dp.Attributes().AsRaw())
			}
		}
		if m.Name() == "mcpdrift.probe.up" {
			if v := m.Gauge().DataPoints().At(0).IntValue(); v != 1 {
				t.Errorf("probe up %d", v)
			}
		}
	}
	for _, name := range []string{"mcpdrift.probe.up", "mcpdrift.probe.duration", "mcpdrift.definitions", "mcpdrift.drift.changes", "mcpdrift.drift.count", "mcpdrift.contract.mixed", "mcpdrift.probe.last_success"} {
		if !got[name] {
			t.Errorf("missing metric %s", name)
		}
	}
}

// Before any drift, drift.count is exported at 0 for every severity, so a
// backend sees the counter rise from 0 (Prometheus' increase() cannot see a
// series that starts at 1).
func TestDriftCountStartsAtZero(t *testing.T) {
	p := newFakeProber()
	p.set("srv", snap(t, map[string]string{"search": "v1"}), nil)
	r, logs, metrics := runReceiver(t, testConfig("srv"), p, &storageHost{})
	defer func() { _ = r.Shutdown(context.Background()) }()
	waitFor(t, "baseline", func() bool { return len(eventsNamed(logs, semconv.EventSnapshot)) == 1 })
	n := p.count("srv")
	waitFor(t, "metrics after the baseline", func() bool { return p.count("srv") > n+1 })
	all := metrics.AllMetrics()
	ms := all[len(all)-1].ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	got := map[string]int64{}
	for i := 0; i < ms.Len(); i++ {
		if m := ms.At(i); m.Name() == "mcpdrift.drift.count" {
			for j := 0; j < m.Sum().DataPoints().Len(); j++ {
				dp := m.Sum().DataPoints().At(j)
				sev, _ := dp.Attributes().Get("mcpdrift.drift.severity")
				got[sev.Str()] = dp.IntValue()
			}
		}
	}
	want := map[string]int64{"breaking": 0, "warning": 0, "compatible": 0, "info": 0}
	if !maps.Equal(got, want) {
		t.Errorf("drift.count before any drift: %v, want %v", got, want)
	}
}

// Keys keep unpaired surrogates apart (contract/key.go), but OTLP strings
// must be UTF-8: drift events write such names in the recipe's UTF-8 form.
func TestDriftEventNamesAreUTF8(t *testing.T) {
	listing := func(defs ...string) *contract.Snapshot {
		raws := make([]json.RawMessage, len(defs))
		for i, d := range defs {
			raws[i] = json.RawMessage(d)
		}
		l, err := contract.DefaultLimits().HashDefinitions(contract.KindTool, raws)
		if err != nil {
			t.Fatal(err)
		}
		s := &contract.Snapshot{ProtocolVersion: "2025-11-25", Tools: l}
		if err := s.Seal(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := listing(`{"name":"a\ud800","description":"Look up a record"}`)
	b := listing(`{"name":"a\udfff","description":"Look up a record"}`)
	cfg := testConfig()
	cfg.Targets = []TargetConfig{{Name: "odd", Transport: "auto"}}
	tgt := newTarget(cfg.Targets[0], cfg, func(o, n *contract.Snapshot) *contract.Report { return contract.Diff(o, n, nil) })
	observeAgreed(tgt.tracker, a, time.Unix(100, 0))
	observeAgreed(tgt.tracker, b, time.Unix(200, 0))
	st := observeAgreed(tgt.tracker, b, time.Unix(300, 0))
	logs := buildLogs(tgt, st.events, time.Unix(301, 0))
	d := logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	var walk func(v pcommon.Value)
	walk = func(v pcommon.Value) {
		switch v.Type() {
		case pcommon.ValueTypeStr:
			if !utf8.ValidString(v.Str()) {
				t.Errorf("attribute value %q is not UTF-8", v.Str())
			}
		case pcommon.ValueTypeSlice:
			for i := range v.Slice().Len() {
				walk(v.Slice().At(i))
			}
		case pcommon.ValueTypeMap:
			for k, mv := range v.Map().All() {
				if !utf8.ValidString(k) {
					t.Errorf("attribute key %q is not UTF-8", k)
				}
				walk(mv)
			}
		}
	}
	attrs := pcommon.NewValueMap()
	d.Attributes().CopyTo(attrs.Map())
	walk(attrs)
	changes, _ := d.Attributes().Get(semconv.DriftChanges)
	if changes.Slice().Len() != 1 || changes.Slice().At(0).Map().AsRaw()[semconv.ChangeRule] != "tool.renamed" || changes.Slice().At(0).Map().AsRaw()[semconv.ChangeName] != "a\uFFFD" {
		t.Errorf("changes %v", changes.AsRaw())
	}
}

// lastMetricInts reads the data points of one metric in the last batch, by
// the value of one attribute ("" for none).
func lastMetricInts(metrics *consumertest.MetricsSink, name, attr string) map[string]int64 {
	all := metrics.AllMetrics()
	ms := all[len(all)-1].ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	got := map[string]int64{}
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		if m.Name() != name {
			continue
		}
		var dps pmetric.NumberDataPointSlice
		if m.Type() == pmetric.MetricTypeSum {
			dps = m.Sum().DataPoints()
		} else {
			dps = m.Gauge().DataPoints()
		}
		for j := 0; j < dps.Len(); j++ {
			key := ""
			if v, ok := dps.At(j).Attributes().Get(attr); ok {
				key = v.AsString()
			}
			got[key] = dps.At(j).IntValue()
		}
	}
	return got
}

// TestPinnedDriftCountedOnce: with baseline pinned, nine probes of one change
// are one drift for drift.count and one drift event; drift.open holds the
// state until the baseline is back.
func TestPinnedDriftCountedOnce(t *testing.T) {
	a := snap(t, map[string]string{"search": "v1"})
	b := snap(t, map[string]string{"search": "v1", "x": "new"})
	cfg := testConfig("srv")
	cfg.Baseline = BaselinePinned
	p := newFakeProber()
	r, logs, metrics := startManual(t, cfg, p)
	tgt := r.targets[0]
	p.set("srv", a, nil)
	r.runProbe(context.Background(), tgt)
	p.set("srv", b, nil)
	for range 10 {
		r.runProbe(context.Background(), tgt)
	}
	if n := len(eventsNamed(logs, semconv.EventDrift)); n != 1 {
		t.Errorf("%d drift events for one open drift, want 1", n)
	}
	count := lastMetricInts(metrics, "mcpdrift.drift.count", "mcpdrift.drift.severity")
	if total := count["breaking"] + count["warning"] + count["compatible"] + count["info"]; total != 1 {
		t.Errorf("drift.count %v after nine probes of one pinned drift, want 1 in all", count)
	}
	if open := lastMetricInts(metrics, "mcpdrift.drift.open", ""); open[""] != 1 {
		t.Errorf("drift.open %v, want 1", open)
	}
	p.set("srv", a, nil)
	for range 3 {
		r.runProbe(context.Background(), tgt)
	}
	if open := lastMetricInts(metrics, "mcpdrift.drift.open", ""); open[""] != 0 {
		t.Errorf("drift.open %v back on the baseline, want 0", open)
	}
}

// The volatile_field event says what happens to the field next, which
// volatile.ignore decides.
func TestVolatileEventSaysWhatIgnoreDoes(t *testing.T) {
	for _, ignore := range []bool{true, false} {
		cfg := testConfig()
		cfg.Volatile.Ignore = ignore
		cfg.Targets = []TargetConfig{NewTargetConfig("web")}
		cfg.Targets[0].Endpoint = "https://search.example.com/mcp"
		tgt := newTarget(cfg.Targets[0], cfg, func(o, n *contract.Snapshot) *contract.Report { return contract.Diff(o, n, nil) })
		e := event{kind: eventVolatile, at: time.Unix(100, 0), field: fieldKey{Subject: "tool", Name: "search", Path: "/description"}}
		body := buildLogs(tgt, []event{e}, time.Unix(101, 0)).ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Str()
		masked := strings.Contains(body, "left out of drift reports")
		if masked != ignore || !strings.Contains(body, "web: tool search field /description changes on every probe") ||
			!strings.Contains(body, "alone is not drift") {
			t.Errorf("volatile.ignore %v: %q", ignore, body)
		}
		if !ignore && !strings.Contains(body, "volatile.ignore: false") {
			t.Errorf("volatile.ignore false: the body does not say why drift reports still show the field: %q", body)
		}
	}
}
