package mcpdriftreceiver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/dev/storagetest"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// fakeProber serves a snapshot (or an error) per target name; tests change
// what a target serves while the receiver runs.
type fakeProber struct {
	mu     sync.Mutex
	serve  map[string]*contract.Snapshot
	errs   map[string]error
	probes map[string]int
}

func newFakeProber() *fakeProber {
	return &fakeProber{serve: map[string]*contract.Snapshot{}, errs: map[string]error{}, probes: map[string]int{}}
}

func (f *fakeProber) set(name string, s *contract.Snapshot, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.serve[name], f.errs[name] = s, err
}

func (f *fakeProber) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.probes[name]
}

func (f *fakeProber) probe(_ context.Context, t *target, _ bool) (*contract.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.probes[t.name]++
	if err := f.errs[t.name]; err != nil {
		return nil, err
	}
	s := *f.serve[t.name] // a fresh copy per probe, as a real probe returns
	return &s, nil
}

// storageHost is a host with extensions that records component status;
// &storageHost{} has none.
type storageHost = storagetest.Host

var storageID = component.MustNewID("file_storage")

// newStorageHost is a host with one real file_storage extension on dir.
func newStorageHost(t *testing.T, dir string, tweak func(*filestorage.Config)) *storageHost {
	t.Helper()
	return storagetest.NewHost(map[component.ID]component.Component{storageID: storagetest.FileStorage(t, dir, tweak)})
}

// hostWith is a host holding one real extension, started under id and
// shut down when the test ends.
func hostWith(t *testing.T, id component.ID, f extension.Factory, cfg component.Config) *storageHost {
	t.Helper()
	return storagetest.NewHost(map[component.ID]component.Component{id: storagetest.Extension(t, f, cfg)})
}

func testConfig(targets ...string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.CollectionInterval = 10 * time.Millisecond
	cfg.Timeout = time.Second
	cfg.ConfirmAfter = 2
	for _, name := range targets {
		cfg.Targets = append(cfg.Targets, TargetConfig{Name: name, Command: []string{"fake-" + name}})
	}
	return cfg
}

// receiverSettings are nop settings with a pinned ID: storage keys depend on it.
func receiverSettings() receiver.Settings {
	set := receivertest.NewNopSettings(NewFactory().Type())
	set.ID = component.MustNewIDWithName("mcpdrift", "test")
	return set
}

// countingLogs and countingMetrics are consumers that keep counts, not data
// (a long benchmark would otherwise hold every batch).
type countingLogs struct {
	mu     sync.Mutex
	events map[string]int
}

func (c *countingLogs) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *countingLogs) ConsumeLogs(_ context.Context, l plog.Logs) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.events == nil {
		c.events = map[string]int{}
	}
	rls := l.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				c.events[lrs.At(k).EventName()]++
			}
		}
	}
	return nil
}

func (c *countingLogs) drifts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.events[semconv.EventDrift]
}

type countingMetrics struct{ points atomic.Int64 }

func (c *countingMetrics) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *countingMetrics) ConsumeMetrics(_ context.Context, m pmetric.Metrics) error {
	c.points.Add(int64(m.DataPointCount()))
	return nil
}

// runReceiver starts a receiver in both pipelines and returns its sinks.
func runReceiver(t *testing.T, cfg *Config, p prober, host component.Host) (*driftReceiver, *consumertest.LogsSink, *consumertest.MetricsSink) {
	t.Helper()
	return runReceiverWith(t, receiverSettings(), cfg, p, host)
}

func runReceiverWith(t *testing.T, set receiver.Settings, cfg *Config, p prober, host component.Host) (*driftReceiver, *consumertest.LogsSink, *consumertest.MetricsSink) {
	t.Helper()
	r, err := newDriftReceiver(set, cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	logs, metrics := new(consumertest.LogsSink), new(consumertest.MetricsSink)
	r.setLogs(logs)
	r.setMetrics(metrics)
	if err := r.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	return r, logs, metrics
}

func eventsNamed(sink *consumertest.LogsSink, name string) []plog.LogRecord {
	var out []plog.LogRecord
	for _, l := range sink.AllLogs() {
		for i := 0; i < l.ResourceLogs().Len(); i++ {
			sls := l.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					if lrs.At(k).EventName() == name {
						out = append(out, lrs.At(k))
					}
				}
			}
		}
	}
	return out
}

// waitFor polls cond until it holds; the deadline only bounds a broken test
// (20 s was not enough for TestE2EManyTargetsSomeFailing's 200 targets
// with the package's tests looping under a load average of 30-46).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// storedServer is one target "srv" with storage, served contract a by p;
// b is a later contract of it.
func storedServer(t *testing.T) (cfg *Config, p *fakeProber, a, b *contract.Snapshot) {
	a = snap(t, map[string]string{"search": "Search the web"})
	b = snap(t, map[string]string{"search": "Search the web", "fetch": "Fetch a page"})
	cfg = testConfig("srv")
	cfg.Storage = &storageID
	p = newFakeProber()
	p.set("srv", a, nil)
	return cfg, p, a, b
}

func TestReceiverRestartPersistence(t *testing.T) {
	dir := t.TempDir()
	cfg, p, a, b := storedServer(t)

	// First run: baseline stored, one snapshot event, no drift.
	host := newStorageHost(t, dir, nil)
	r, logs, _ := runReceiver(t, cfg, p, host)
	waitFor(t, "first snapshot", func() bool { return len(eventsNamed(logs, semconv.EventSnapshot)) == 1 })
	waitFor(t, "more probes", func() bool { return p.count("srv") >= 5 })
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = host.Extensions[storageID].Shutdown(context.Background())
	if n := len(eventsNamed(logs, semconv.EventDrift)); n != 0 {
		t.Fatalf("drift on an unchanged server: %d", n)
	}

	// Restart against the unchanged server: the restored baseline is
	// announced, and nothing drifts.
	host = newStorageHost(t, dir, nil)
	before := p.count("srv")
	r, logs, _ = runReceiver(t, cfg, p, host)
	waitFor(t, "probes after restart", func() bool { return p.count("srv") >= before+5 })
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = host.Extensions[storageID].Shutdown(context.Background())
	if n := len(eventsNamed(logs, semconv.EventSnapshot)); n != 1 {
		t.Errorf("restart should announce the restored baseline once, got %d snapshots", n)
	}
	if n := len(eventsNamed(logs, semconv.EventDrift)); n != 0 {
		t.Fatalf("restart against an unchanged server emitted %d drifts", n)
	}

	// Restart against a changed server: exactly one drift.
	p.set("srv", b, nil)
	host = newStorageHost(t, dir, nil)
	before = p.count("srv")
	r, logs, _ = runReceiver(t, cfg, p, host)
	waitFor(t, "drift", func() bool { return len(eventsNamed(logs, semconv.EventDrift)) >= 1 })
	waitFor(t, "probes after the drift", func() bool { return p.count("srv") >= before+8 })
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	drifts := eventsNamed(logs, semconv.EventDrift)
	if len(drifts) != 1 {
		t.Fatalf("restart against a changed server: %d drifts, want 1", len(drifts))
	}
	d := drifts[0]
	prev, _ := d.Attributes().Get(semconv.PreviousContract)
	cur, _ := d.Attributes().Get(semconv.ContractDigest)
	if prev.Str() != a.Digests.Contract || cur.Str() != b.Digests.Contract {
		t.Errorf("drift digests %s -> %s", prev.Str(), cur.Str())
	}
}

func TestReceiverCorruptStorageIsReplaced(t *testing.T) {
	dir := t.TempDir()
	host := newStorageHost(t, dir, nil)
	client, err := host.Extensions[storageID].(storage.Extension).GetClient(context.Background(), component.KindReceiver, component.MustNewIDWithName("mcpdrift", "test"), "")
	if err != nil {
		t.Fatal(err)
	}
	// A baseline whose stored digest does not match its definition.
	corrupt := `{"version":1,"target":"srv","baseline":{"schema_version":"mcpdrift.snapshot/v1","tools":[{"key":"x","digest":"00","definition":{"name":"x"}}]}}`
	if err := client.Set(context.Background(), storageKey("srv"), []byte(corrupt)); err != nil {
		t.Fatal(err)
	}
	_ = client.Close(context.Background())
	cfg := testConfig("srv")
	cfg.Storage = &storageID
	p := newFakeProber()
	p.set("srv", snap(t, map[string]string{"a": "b"}), nil)
	r, logs, _ := runReceiver(t, cfg, p, host)
	waitFor(t, "a fresh baseline", func() bool { return len(eventsNamed(logs, semconv.EventSnapshot)) == 1 })
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestReceiverFailedProbeIsNeverDrift(t *testing.T) {
	a := snap(t, map[string]string{"search": "v1"})
	p := newFakeProber()
	p.set("srv", a, nil)
	r, logs, metrics := runReceiver(t, testConfig("srv"), p, &storageHost{})
	defer func() { _ = r.Shutdown(context.Background()) }()
	waitFor(t, "baseline", func() bool { return len(eventsNamed(logs, semconv.EventSnapshot)) == 1 })
	p.set("srv", nil, errors.New("connection refused"))
	n := p.count("srv")
	waitFor(t, "failed probes", func() bool { return p.count("srv") >= n+5 })
	p.set("srv", a, nil)
	n = p.count("srv")
	waitFor(t, "recovery", func() bool { return p.count("srv") >= n+3 })
	if d := len(eventsNamed(logs, semconv.EventDrift)); d != 0 {
		t.Fatalf("failed probes produced %d drifts", d)
	}
	if metrics.DataPointCount() == 0 {
		t.Fatal("no metrics")
	}
}
