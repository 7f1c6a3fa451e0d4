package mcpdriftreceiver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/internal/safestorage"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/receiver/mcpdriftreceiver/internal/metadata"
)

// driftReceiver is the one instance behind a component ID: it owns the
// targets, the scheduler, the storage client and both consumers.
type driftReceiver struct {
	set    receiver.Settings
	cfg    *Config
	prober prober
	policy *contract.Policy
	now    func() time.Time
	obs    *receiverhelper.ObsReport

	mu      sync.Mutex // guards logs, metrics
	logs    consumer.Logs
	metrics consumer.Metrics

	targets []*target
	store   *baselineStore
	storage *safestorage.Health
	tb      *metadata.TelemetryBuilder

	mbMu sync.Mutex // the metrics builder is not safe for concurrent use
	mb   *metadata.MetricsBuilder

	cancel context.CancelFunc
	done   chan struct{}
	// runCtx is the probes' context from Start to Shutdown; prompt probes
	// (ProbeNow) run in it, counted in prompts.
	runCtx  context.Context
	prompts sync.WaitGroup
	// unregister takes the receiver's view back from the control plane.
	unregister func()

	// onProbeStart, when set (benchmarks), is told when each probe starts.
	onProbeStart func(t *target, due, started time.Time)
	// manual, set by tests, starts no scheduler: the test calls runProbe.
	manual bool
	// beforeRelease, set by tests, is called when a probe loop has found no
	// request waiting, before it lets go of the target.
	beforeRelease func(t *target)
}

func newDriftReceiver(set receiver.Settings, cfg *Config, p prober) (*driftReceiver, error) {
	policy, err := contract.NewPolicy(cfg.Policy)
	if err != nil {
		return nil, fmt.Errorf("mcpdrift: policy: %w", err)
	}
	obs, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{ReceiverID: set.ID, Transport: "mcp", ReceiverCreateSettings: set})
	if err != nil {
		return nil, err
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	r := &driftReceiver{
		set:     set,
		cfg:     cfg,
		prober:  p,
		policy:  policy,
		now:     time.Now,
		obs:     obs,
		mb:      metadata.NewMetricsBuilder(cfg.MetricsBuilderConfig, set),
		storage: safestorage.NewHealth(set.Logger, "baselines are kept in memory only, so the next restart starts from fresh baselines"),
		tb:      tb,
	}
	err = tb.RegisterReceiverMcpdriftStorageAvailableCallback(func(_ context.Context, o metric.Int64Observer) error {
		if v, ok := r.storage.Available(); ok {
			o.Observe(v)
		}
		return nil
	})
	if err != nil {
		tb.Shutdown()
		return nil, err
	}
	for _, tc := range cfg.Targets {
		r.targets = append(r.targets, newTarget(tc, cfg, r.classify))
	}
	return r, nil
}

func (r *driftReceiver) setLogs(c consumer.Logs) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = c
}

func (r *driftReceiver) setMetrics(c consumer.Metrics) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.metrics = c
}

// classify diffs two snapshots under the configured policy.
func (r *driftReceiver) classify(old, new *contract.Snapshot) *contract.Report {
	return contract.Diff(old, new, r.policy)
}

// Start connects storage, restores baselines (emitting one snapshot event per
// restored target), builds the HTTP clients and starts probing.
func (r *driftReceiver) Start(ctx context.Context, host component.Host) error {
	store, err := openBaselineStore(ctx, host, r.cfg.Storage, r.set, storageOwner(r.set, r.cfg), r.storage)
	if err != nil {
		return err
	}
	r.store = store
	for _, t := range r.targets {
		if t.cfg.Endpoint != "" {
			red := probe.NewRedactor(t.probeTarget())
			exts, tel := host.GetExtensions(), clientTelemetry(r.set.TelemetrySettings, red)
			newClient := func(ctx context.Context) (*http.Client, error) {
				return newTargetClient(ctx, t.cfg.ClientConfig, exts, tel) // a copy: ToClient writes defaults into its receiver
			}
			client, err := newClient(ctx)
			if err != nil { // a proxy_url that does not parse is quoted whole
				return fmt.Errorf("mcpdrift: target %q: %s", t.name, red.Text(err.Error()))
			}
			t.httpClient, t.sampleClient = client, newClient
		}
		t.probe = t.probeTarget()
	}
	restored := 0
	for _, t := range r.targets {
		r.restoreHistory(ctx, t)
		state, err := r.store.load(ctx, t.name)
		switch {
		case errors.Is(err, errNewerFormat):
			r.set.Logger.Warn("Keeping stored baseline of a newer version as it is; the next probe sets a new baseline, kept in memory only",
				zap.String("target", t.name), zap.Error(err))
			continue
		case err != nil:
			r.set.Logger.Warn("Discarding stored baseline that cannot be read; the next probe sets a new one",
				zap.String("target", t.name), zap.Error(err))
			continue
		}
		if state == nil {
			continue
		}
		// Announce the restored contract, so consumers (mcpimpact) know the
		// current digests before any drift.
		t.tracker.restore(state.baseline, state.current, state.volatile)
		if state.fleet != nil {
			if err := t.tracker.restoreFleet(state.fleet); err != nil {
				r.set.Logger.Warn("Discarding stored rollout evidence that cannot be used; the fleet's evidence starts over",
					zap.String("target", t.name), zap.Error(err))
			}
		}
		cur := t.tracker.current
		r.emitEvents(ctx, t, []event{{kind: eventSnapshot, at: cur.ObservedAt, current: cur}})
		restored++
	}
	r.set.Logger.Info("mcpdrift receiver started", zap.Int("targets", len(r.targets)), zap.Int("baselines_restored", restored))
	if err := r.registerControlPlane(host); err != nil {
		return err
	}

	runCtx, cancel := context.WithCancel(context.Background())
	r.runCtx, r.cancel = runCtx, cancel
	if r.manual {
		return nil
	}
	r.done = make(chan struct{})
	s := &scheduler{
		now:          r.now,
		maxInFlight:  r.cfg.MaxConcurrentProbes,
		timeout:      r.cfg.Timeout,
		initialDelay: r.cfg.InitialDelay,
		run:          r.probeAndAnswer,
		onStart:      r.onProbeStart,
	}
	go func() {
		defer close(r.done)
		s.loop(runCtx, r.targets)
	}()
	return nil
}

// Shutdown stops the scheduler and in-flight probes (stdio children are
// reaped by the probe), then closes storage, which flushes it.
func (r *driftReceiver) Shutdown(ctx context.Context) error {
	if r.unregister != nil {
		r.unregister() // the control plane answers no more from this receiver
	}
	if r.cancel != nil {
		r.cancel()
		stopped := make(chan struct{})
		go func() {
			if r.done != nil {
				<-r.done
			}
			r.prompts.Wait()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, t := range r.targets {
		if t.httpClient != nil {
			t.httpClient.CloseIdleConnections()
		}
	}
	r.tb.Shutdown()
	if r.store != nil {
		for _, t := range r.targets { // the probes have stopped: store the evidence they left unstored
			t.stateMu.Lock()
			if t.evidenceUnstored > 0 {
				r.persist(ctx, t, false)
			}
			t.stateMu.Unlock()
		}
		return r.store.close(ctx)
	}
	return nil
}

// runProbe probes one target once and acts on the result. The target's
// state is locked from the result on (not while probing): the control
// plane reads it, and accept changes it, from other goroutines. Events and
// metrics are built under the lock and sent after it.
func (r *driftReceiver) runProbe(ctx context.Context, t *target) {
	pctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	started := r.now()
	snap, err := r.prober.probe(pctx, t, false)
	finished := r.now()
	if ctx.Err() != nil {
		return // shutting down: the result is neither success nor failure
	}
	defer t.answer(started, observation(t.name, snap, finished, err))
	t.stateMu.Lock()
	t.recordProbe(started, finished, err)
	if err != nil {
		class, step := errorClass(err)
		if t.noteFailure() {
			r.set.Logger.Warn("MCP server probe failed", zap.String("target", t.name), zap.String("url", t.url),
				zap.String("error_class", class), zap.String("step", step), zap.Error(err))
		}
		md := r.buildMetrics(t, finished)
		t.stateMu.Unlock()
		r.sendMetrics(ctx, t, md)
		return
	}
	if t.noteSuccess() {
		r.set.Logger.Info("MCP server probe succeeds again", zap.String("target", t.name))
	}
	snap.Server.Name = t.name
	st := t.tracker.observe(snap, finished)
	if st.sample {
		t.stateMu.Unlock()
		samples := r.samples(ctx, t, st.sampleN)
		t.stateMu.Lock()
		more := t.tracker.sampled(samples, r.now())
		st.events = append(st.events, more.events...)
		st.persist = st.persist || more.persist
		st.evidence = st.evidence || more.evidence
		st.reverted = st.reverted || more.reverted
	}
	t.countEvents(st.events)
	historyChanged := t.recordHistory(st, r.now())
	if st.evidence && !st.persist {
		t.evidenceUnstored++
		st.persist = t.evidenceUnstored >= evidenceStoreEvery
	}
	if unsaved := r.store.isUnsaved(t.name); st.persist || historyChanged || unsaved {
		r.persist(ctx, t, historyChanged || unsaved)
	}
	var logs plog.Logs
	if len(st.events) > 0 {
		logs = buildLogs(t, st.events, r.now())
	}
	md := r.buildMetrics(t, finished)
	t.stateMu.Unlock()
	r.sendLogs(ctx, t, logs)
	r.sendMetrics(ctx, t, md)
}

// evidenceStoreEvery is how many probes a rollout's growing evidence (the
// fleet's window and shares) may go unstored: a restart loses fewer than
// that many probes of it, and a long rollout is not rewritten on every
// probe. What changes a decision (a mixed state opening, growing or
// resolving, a drift, the rollout starting or ending) is stored at once,
// and Shutdown stores what is left.
const evidenceStoreEvery = 10

// persist stores a target's baseline (with the fleet's evidence) and, with
// history, its drift history; the caller holds its stateMu.
func (r *driftReceiver) persist(ctx context.Context, t *target, history bool) {
	t.evidenceUnstored = 0
	err := r.store.save(ctx, t.name, t.tracker)
	if history {
		err = errors.Join(err, r.store.saveHistory(ctx, t.name, t.history))
	}
	r.store.noteSaved(t.name, err)
	if err != nil {
		// The store's health logs a failing store once; the state stays in memory.
		r.set.Logger.Debug("Could not store baseline", zap.String("target", t.name), zap.Error(err))
	}
}

// samples probes t again, at once, up to n times, in rounds of sampleRound
// (takeSamples): each is one more pick of a balancer in front of a fleet.
// A round probes in parallel: samples are meant to see the fleet as it is
// now, and settling makes each take at least settle, but each may hold a
// probe's worth of memory. Failed samples are left out (a failed probe is
// neither drift nor evidence against it).
func (r *driftReceiver) samples(ctx context.Context, t *target, n int) []*contract.Snapshot {
	out := takeSamples(n, t.tracker.agrees, func(k int) []*contract.Snapshot {
		results := make([]*contract.Snapshot, k)
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() {
				pctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
				defer cancel()
				if snap, err := r.prober.probe(pctx, t, true); err == nil {
					snap.Server.Name = t.name
					results[i] = snap
				}
			})
		}
		wg.Wait()
		if ctx.Err() != nil {
			return nil
		}
		return slices.DeleteFunc(results, func(s *contract.Snapshot) bool { return s == nil })
	})
	if ctx.Err() != nil {
		return nil // shutting down: no decision on part of the samples
	}
	return out
}

// emitEvents builds and sends events (Start: restored snapshots).
func (r *driftReceiver) emitEvents(ctx context.Context, t *target, events []event) {
	if len(events) == 0 {
		return
	}
	r.sendLogs(ctx, t, buildLogs(t, events, r.now()))
}

// sendLogs hands records to the logs pipeline; a zero plog.Logs is nothing.
func (r *driftReceiver) sendLogs(ctx context.Context, t *target, logs plog.Logs) {
	if logs == (plog.Logs{}) || logs.LogRecordCount() == 0 {
		return
	}
	r.mu.Lock()
	next := r.logs
	r.mu.Unlock()
	if next == nil {
		return
	}
	n := logs.LogRecordCount()
	obsCtx := r.obs.StartLogsOp(ctx)
	err := next.ConsumeLogs(ctx, logs)
	r.obs.EndLogsOp(obsCtx, metadata.Type.String(), n, err)
	if err != nil {
		r.set.Logger.Warn("Dropping mcpdrift events: the next consumer refused them", zap.String("target", t.name), zap.Error(err))
	}
}

// buildMetrics records the target's metrics; the caller holds its stateMu.
// A zero pmetric.Metrics means no metrics pipeline.
func (r *driftReceiver) buildMetrics(t *target, now time.Time) pmetric.Metrics {
	r.mu.Lock()
	wanted := r.metrics != nil
	r.mu.Unlock()
	if !wanted {
		return pmetric.Metrics{}
	}
	r.mbMu.Lock()
	defer r.mbMu.Unlock()
	return t.recordMetrics(r.mb, now)
}

func (r *driftReceiver) sendMetrics(ctx context.Context, t *target, md pmetric.Metrics) {
	if md == (pmetric.Metrics{}) {
		return
	}
	r.mu.Lock()
	next := r.metrics
	r.mu.Unlock()
	n := md.DataPointCount()
	obsCtx := r.obs.StartMetricsOp(ctx)
	err := next.ConsumeMetrics(ctx, md)
	r.obs.EndMetricsOp(obsCtx, metadata.Type.String(), n, err)
	if err != nil {
		r.set.Logger.Warn("Dropping mcpdrift metrics: the next consumer refused them", zap.String("target", t.name), zap.Error(err))
	}
}
