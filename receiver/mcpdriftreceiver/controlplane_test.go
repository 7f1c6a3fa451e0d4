package mcpdriftreceiver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/dev/storagetest"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// lastGauge is the newest value of an int gauge in the sink.
func lastGauge(t *testing.T, sink *consumertest.MetricsSink, name string) int64 {
	t.Helper()
	all := sink.AllMetrics()
	for i := len(all) - 1; i >= 0; i-- {
		rms := all[i].ResourceMetrics()
		for j := 0; j < rms.Len(); j++ {
			sms := rms.At(j).ScopeMetrics()
			for k := 0; k < sms.Len(); k++ {
				ms := sms.At(k).Metrics()
				for m := 0; m < ms.Len(); m++ {
					if ms.At(m).Name() == name && ms.At(m).Type() == pmetric.MetricTypeGauge {
						return ms.At(m).Gauge().DataPoints().At(0).IntValue()
					}
				}
			}
		}
	}
	t.Fatalf("no %s in the metrics", name)
	return 0
}

// serving is one target "srv" whose probes the test runs: a, then b.
type serving struct {
	r       *driftReceiver
	p       *fakeProber
	logs    *consumertest.LogsSink
	metrics *consumertest.MetricsSink
	view    driftView
	a, b, c *contract.Snapshot
}

func newServing(t *testing.T, baseline string, host component.Host, cfgs ...func(*Config)) *serving {
	t.Helper()
	cfg := testConfig("srv")
	cfg.ConfirmAfter = 1
	cfg.Baseline = baseline
	for _, f := range cfgs {
		f(cfg)
	}
	s := &serving{p: newFakeProber(),
		a: snap(t, map[string]string{"search": "Search the web"}),
		b: snap(t, map[string]string{"search": "Search the web", "fetch": "Fetch a page"}),
		c: snap(t, map[string]string{"fetch": "Fetch a page"}),
	}
	s.p.set("srv", s.a, nil)
	s.r, s.logs, s.metrics = startManualOn(t, cfg, s.p, host)
	s.view = driftView{s.r}
	return s
}

// serve makes the target serve snap and probes it once.
func (s *serving) serve(snap *contract.Snapshot, err error) {
	s.p.set("srv", snap, err)
	s.r.runProbe(context.Background(), s.r.targets[0])
}

func (s *serving) status(t *testing.T) apiwire.ServerStatus {
	t.Helper()
	all := s.view.Servers()
	if len(all) != 1 {
		t.Fatalf("%d servers", len(all))
	}
	return all[0]
}

func TestServerStatus(t *testing.T) {
	s := newServing(t, BaselineAdvance, &storageHost{})
	st := s.status(t)
	if st.Status != apiwire.StatusPending || st.Probe != nil || st.Contract != nil || st.Receiver != "mcpdrift/test" || st.URL != "stdio:fake-srv" {
		t.Errorf("before a probe: %+v", st)
	}
	s.serve(s.a, nil)
	st = s.status(t)
	if st.Status != apiwire.StatusUp || st.Probe == nil || st.Probe.ErrorClass != "none" || st.Probe.LastSuccess == nil || st.Probe.Count != 1 ||
		st.Contract.Digest != s.a.Digests.Contract || st.Contract.BaselineDigest != s.a.Digests.Contract || st.Contract.Definitions.Tools != 1 {
		t.Errorf("after a probe: %+v %+v %+v", st, st.Probe, st.Contract)
	}
	if st.Probe.FailingSince != nil {
		t.Errorf("up, yet failing since %v", st.Probe.FailingSince)
	}
	s.serve(nil, errors.New("connection refused"))
	if st = s.status(t); st.Status != apiwire.StatusDown || st.Probe.ErrorClass == "none" || st.Contract == nil || st.Probe.FailingSince == nil {
		t.Errorf("failing: %+v", st)
	}
	// Down since the first failure, not the last.
	since := *st.Probe.FailingSince
	s.serve(nil, errors.New("connection refused"))
	if st = s.status(t); st.Probe.FailingSince == nil || !st.Probe.FailingSince.Equal(since) || st.Probe.Last.Before(since) {
		t.Errorf("failing again: since %v, last %v (first failure %v)", st.Probe.FailingSince, st.Probe.Last, since)
	}
	s.serve(s.b, nil)
	st = s.status(t)
	if st.Probe.FailingSince != nil {
		t.Errorf("recovered, yet failing since %v", st.Probe.FailingSince)
	}
	if st.Status != apiwire.StatusDrifted || st.OpenDrift == nil || st.History.Drifts != 1 || st.History.Bytes == 0 {
		t.Errorf("drifted: %+v", st)
	}
	d, err := s.view.Server("srv")
	if err != nil || !strings.Contains(string(d.Snapshot), `"fetch"`) || d.Contract.Digest != s.b.Digests.Contract {
		t.Errorf("server detail: %v %s", err, d.Snapshot)
	}
	if _, err := s.view.Server("nope"); !errors.Is(err, controlplane.ErrUnknownServer) {
		t.Errorf("unknown server: %v", err)
	}
}

// TestAcceptAdvance: the baseline already moved; accept acknowledges the
// drifts (status back to UP), keeps them, and says so in the logs.
func TestAcceptAdvance(t *testing.T) {
	s := newServing(t, BaselineAdvance, &storageHost{})
	ctx := context.Background()
	s.serve(s.a, nil)
	if _, err := s.view.Accept(ctx, "srv", apiwire.AcceptRequest{}, controlplane.Principal{Name: "alice"}); !errors.Is(err, controlplane.ErrNoOpenDrift) {
		t.Fatalf("accept without a drift: %v", err)
	}
	s.serve(s.b, nil)
	s.serve(s.c, nil)
	page, _ := s.view.Drifts("srv", controlplane.DriftQuery{Limit: 10})
	if len(page.Drifts) != 2 || page.Drifts[0].CurrentContract != s.c.Digests.Contract || page.Next != "" {
		t.Fatalf("history %+v", page)
	}
	// Paged one at a time, to the oldest.
	first, _ := s.view.Drifts("srv", controlplane.DriftQuery{Limit: 1})
	second, err := s.view.Drifts("srv", controlplane.DriftQuery{Limit: 1, Before: first.Next})
	if err != nil || first.Next != page.Drifts[0].ID || len(second.Drifts) != 1 || second.Drifts[0].ID != page.Drifts[1].ID || second.Next != "" {
		t.Errorf("pages %+v then %+v (%v)", first, second, err)
	}
	if _, err := s.view.Drifts("srv", controlplane.DriftQuery{Limit: 1, Before: "gone"}); !errors.Is(err, controlplane.ErrUnknownDrift) {
		t.Errorf("an unknown cursor: %v", err)
	}
	if _, err := s.view.Accept(ctx, "srv", apiwire.AcceptRequest{Drift: page.Drifts[1].ID}, controlplane.Principal{Name: "alice"}); !errors.Is(err, controlplane.ErrDriftMismatch) {
		t.Errorf("accepting an older drift than the newest: %v", err)
	}
	res, err := s.view.Accept(ctx, "srv", apiwire.AcceptRequest{Drift: page.Drifts[0].ID, Comment: "rolled out"}, controlplane.Principal{Name: "alice", Authenticated: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Accepted) != 2 || res.Status != apiwire.StatusUp || res.BaselineDigest != s.c.Digests.Contract || res.By != "alice" {
		t.Errorf("result %+v", res)
	}
	page, _ = s.view.Drifts("srv", controlplane.DriftQuery{Limit: 10})
	for _, d := range page.Drifts {
		if d.State != apiwire.DriftAccepted || d.Accepted == nil || d.Accepted.Comment == nil || *d.Accepted.Comment != "rolled out" || !d.Accepted.Authenticated {
			t.Errorf("kept drift %+v", d)
		}
	}
	events := eventsNamed(s.logs, semconv.EventDriftAccepted)
	if len(events) != 2 {
		t.Fatalf("%d drift_accepted events, want one per drift", len(events))
	}
	if attr(events[0], semconv.AcceptBy) != "alice" || attr(events[0], semconv.DriftID) != page.Drifts[0].DriftID ||
		attr(events[0], semconv.BaselineMode) != BaselineAdvance || attr(events[0], semconv.AcceptComment) != "rolled out" {
		t.Errorf("event %v", events[0].Attributes().AsRaw())
	}
	if _, err := s.view.Accept(ctx, "srv", apiwire.AcceptRequest{}, controlplane.Principal{Name: "alice"}); !errors.Is(err, controlplane.ErrNoOpenDrift) {
		t.Errorf("second accept: %v", err)
	}
	if _, err := s.view.Accept(ctx, "nope", apiwire.AcceptRequest{}, controlplane.Principal{}); !errors.Is(err, controlplane.ErrUnknownServer) {
		t.Errorf("unknown server: %v", err)
	}
}

// TestAcceptPinned: accepting makes the served contract the baseline:
// drift.open goes back to 0 and serving it on is not drift.
func TestAcceptPinned(t *testing.T) {
	s := newServing(t, BaselinePinned, &storageHost{})
	ctx := context.Background()
	s.serve(s.a, nil)
	s.serve(s.b, nil)
	if lastGauge(t, s.metrics, "mcpdrift.drift.open") != 1 || s.status(t).Status != apiwire.StatusDrifted {
		t.Fatal("pinned drift not open")
	}
	res, err := s.view.Accept(ctx, "srv", apiwire.AcceptRequest{}, controlplane.Principal{Name: "anonymous"})
	if err != nil {
		t.Fatal(err)
	}
	if res.BaselineDigest != s.b.Digests.Contract || res.Status != apiwire.StatusUp || len(res.Accepted) != 1 {
		t.Errorf("result %+v", res)
	}
	if lastGauge(t, s.metrics, "mcpdrift.drift.open") != 0 {
		t.Error("drift.open still 1 after accept")
	}
	if ev := eventsNamed(s.logs, semconv.EventDriftAccepted); len(ev) != 1 || attr(ev[0], semconv.BaselineMode) != BaselinePinned {
		t.Errorf("accepted events %d", len(ev))
	}
	for range 3 {
		s.serve(s.b, nil)
	}
	if n := len(eventsNamed(s.logs, semconv.EventDrift)); n != 1 || s.status(t).Status != apiwire.StatusUp {
		t.Errorf("after accept: %d drifts, status %s", n, s.status(t).Status)
	}
	// The accepted contract is the baseline now: going back to a drifts.
	s.serve(s.a, nil)
	if n := len(eventsNamed(s.logs, semconv.EventDrift)); n != 2 {
		t.Errorf("back to the old contract: %d drifts, want 2", n)
	}
}

// TestAcceptPinnedWithoutHistory: with max_drifts 0 the pinned drift is
// still accepted, and its event still says which drift it was.
func TestAcceptPinnedWithoutHistory(t *testing.T) {
	s := newServing(t, BaselinePinned, &storageHost{}, func(c *Config) { c.DriftHistory.MaxDrifts = 0 })
	s.serve(s.a, nil)
	s.serve(s.b, nil)
	if st := s.status(t); st.Status != apiwire.StatusDrifted || st.OpenDrift != nil || st.History.Drifts != 0 {
		t.Fatalf("status %+v", st)
	}
	res, err := s.view.Accept(context.Background(), "srv", apiwire.AcceptRequest{}, controlplane.Principal{Name: "alice"})
	if err != nil || res.BaselineDigest != s.b.Digests.Contract || len(res.Accepted) != 0 {
		t.Fatalf("accept: %v %+v", err, res)
	}
	ev := eventsNamed(s.logs, semconv.EventDriftAccepted)
	if len(ev) != 1 || attr(ev[0], semconv.DriftID) != driftID("srv", s.a.Digests.Contract, s.b.Digests.Contract) ||
		attr(ev[0], semconv.DriftSeverity) != "compatible" || !strings.Contains(ev[0].Body().Str(), "added") {
		t.Errorf("event %v %q", ev[0].Attributes().AsRaw(), ev[0].Body().Str())
	}
}

// TestPinnedHistoryStates: a pinned drift the server reverts closes by
// itself; one a further contract replaces is superseded.
func TestPinnedHistoryStates(t *testing.T) {
	s := newServing(t, BaselinePinned, &storageHost{})
	s.serve(s.a, nil)
	s.serve(s.b, nil)
	s.serve(s.c, nil)
	page, _ := s.view.Drifts("srv", controlplane.DriftQuery{Limit: 10})
	if len(page.Drifts) != 2 || page.Drifts[0].State != apiwire.DriftOpen || page.Drifts[1].State != apiwire.DriftSuperseded || page.Drifts[1].ClosedAt == nil {
		t.Fatalf("a->b->c: %+v", page.Drifts)
	}
	s.serve(s.a, nil)
	page, _ = s.view.Drifts("srv", controlplane.DriftQuery{Limit: 10})
	if page.Drifts[0].State != apiwire.DriftReverted || s.status(t).Status != apiwire.StatusUp {
		t.Errorf("back on the baseline: %s, status %s", page.Drifts[0].State, s.status(t).Status)
	}
	if _, err := s.view.Accept(context.Background(), "srv", apiwire.AcceptRequest{}, controlplane.Principal{Name: "x"}); !errors.Is(err, controlplane.ErrNoOpenDrift) {
		t.Errorf("accept after revert: %v", err)
	}
	d, err := s.view.Drift(page.Drifts[1].ID)
	if err != nil || d.ID != page.Drifts[1].ID || len(d.Definitions) == 0 {
		t.Errorf("drift by id: %v %+v", err, d)
	}
	if _, err := s.view.Drift("nope"); !errors.Is(err, controlplane.ErrUnknownDrift) {
		t.Errorf("unknown drift: %v", err)
	}
}

// TestHistoryRestoredAfterRestart: the history, its accepted state and a
// pinned target's open drift come back from storage; the open drift is not
// confirmed and reported again.
func TestHistoryRestoredAfterRestart(t *testing.T) {
	dir := t.TempDir()
	withStorage := func(cfg *Config) { cfg.Storage = &storageID }
	host := newStorageHost(t, dir, nil)
	s := newServing(t, BaselinePinned, host, withStorage)
	s.serve(s.a, nil)
	s.serve(s.b, nil)
	s.serve(s.c, nil) // b superseded, c open
	before, _ := s.view.Drifts("srv", controlplane.DriftQuery{Limit: 10})
	stop(t, s.r, host)

	host = newStorageHost(t, dir, nil)
	s2 := newServing(t, BaselinePinned, host, withStorage)
	after, _ := s2.view.Drifts("srv", controlplane.DriftQuery{Limit: 10})
	if len(after.Drifts) != 2 || after.Drifts[0].ID != before.Drifts[0].ID || after.Drifts[1].State != apiwire.DriftSuperseded ||
		after.Drifts[0].State != apiwire.DriftOpen {
		t.Fatalf("restored %+v", after.Drifts)
	}
	if st := s2.status(t); st.Contract.Digest != s.c.Digests.Contract || st.Contract.BaselineDigest != s.a.Digests.Contract || st.History != s.status(t).History {
		t.Errorf("restored status %+v %+v", st.Contract, st.History)
	}
	// The restart announces what is served, and serving it on is no news.
	if snaps := eventsNamed(s2.logs, semconv.EventSnapshot); len(snaps) != 1 || attr(snaps[0], semconv.ContractDigest) != s.c.Digests.Contract {
		t.Errorf("restart snapshot events %d", len(snaps))
	}
	for range 3 {
		s2.serve(s.c, nil)
	}
	if n := len(eventsNamed(s2.logs, semconv.EventDrift)); n != 0 {
		t.Errorf("the open drift was reported again after the restart: %d drift events", n)
	}
	if lastGauge(t, s2.metrics, "mcpdrift.drift.open") != 1 {
		t.Error("drift.open lost across the restart")
	}
	if _, err := s2.view.Accept(context.Background(), "srv", apiwire.AcceptRequest{Drift: before.Drifts[0].ID}, controlplane.Principal{Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	stop(t, s2.r, host)

	host = newStorageHost(t, dir, nil)
	s3 := newServing(t, BaselinePinned, host, withStorage)
	if page, _ := s3.view.Drifts("srv", controlplane.DriftQuery{Limit: 10}); page.Drifts[0].State != apiwire.DriftAccepted || page.Drifts[0].Accepted.By != "alice" {
		t.Errorf("accept not restored: %+v", page.Drifts[0])
	}
	s3.serve(s.c, nil)
	if st := s3.status(t); st.Status != apiwire.StatusUp || st.Contract.BaselineDigest != s.c.Digests.Contract {
		t.Errorf("after accept and restart: %s, baseline %s", st.Status, st.Contract.BaselineDigest)
	}
	stop(t, s3.r, host)
}

// TestControlPlaneRegistration: the receiver finds the extension by ID and
// its targets are served; a wrong ID fails the start, as storage does.
func TestControlPlaneRegistration(t *testing.T) {
	f := mcpdriftapiextension.NewFactory()
	cfg := f.CreateDefaultConfig().(*mcpdriftapiextension.Config)
	cfg.NetAddr.Endpoint = "127.0.0.1:0"
	id := component.MustNewID("mcpdrift_api")
	host := storagetest.NewHost(map[component.ID]component.Component{id: storagetest.Extension(t, f, cfg), storageID: storagetest.FileStorage(t, t.TempDir(), nil)})
	s := newServing(t, BaselineAdvance, host, func(c *Config) { c.ControlPlane = &id })
	if s.r.unregister == nil {
		t.Fatal("not registered")
	}
	for _, bad := range []component.ID{component.MustNewID("nope"), storageID} {
		r, err := newDriftReceiver(receiverSettings(), func() *Config { c := testConfig("x"); c.ControlPlane = &bad; return c }(), newFakeProber())
		if err != nil {
			t.Fatal(err)
		}
		r.manual = true
		if err := r.Start(context.Background(), host); err == nil || !strings.Contains(err.Error(), "control_plane") {
			t.Errorf("control_plane: %s: %v", bad, err)
		}
		_ = r.Shutdown(context.Background())
	}
}
