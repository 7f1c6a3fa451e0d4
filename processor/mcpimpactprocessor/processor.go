package mcpimpactprocessor

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/mcpdrift/mcpdrift/internal/safestorage"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// impactProcessor is the one instance behind a component ID's traces and
// logs pipelines.
type impactProcessor struct {
	cfg    *Config
	id     component.ID
	logger *zap.Logger
	tel    *telemetry
	now    func() time.Time

	mu      sync.Mutex // guards state
	state   *state
	entries atomic.Int64 // index size, for the gauge

	store       *store // nil without a storage extension, or while it cannot be used
	storage     *safestorage.Health
	stopPersist context.CancelFunc
	persisting  sync.WaitGroup
	// unregister takes the processor's view back from the control plane.
	unregister func()
	// probes asks the receiver for prompt probes (nil without control_plane).
	probes *promptProbes
}

func newImpactProcessor(set processor.Settings, cfg *Config, now func() time.Time) (*impactProcessor, error) {
	set.TelemetrySettings = withoutPipelineAttributes(set.TelemetrySettings)
	tel, err := newTelemetry(set.TelemetrySettings, cfg.MetricCardinalityLimit)
	if err != nil {
		return nil, err
	}
	p := &impactProcessor{
		cfg:    cfg,
		id:     set.ID,
		logger: set.Logger,
		tel:    tel,
		now:    now,
		state:  newState(cfg),
		storage: safestorage.NewHealth(set.Logger,
			"the impact index and the known contracts are kept in memory only, so the next restart starts them empty"),
	}
	err = errors.Join(
		tel.tb.RegisterProcessorMcpimpactIndexEntriesCallback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(p.entries.Load())
			return nil
		}),
		tel.tb.RegisterProcessorMcpimpactStorageAvailableCallback(func(_ context.Context, o metric.Int64Observer) error {
			if v, ok := p.storage.Available(); ok {
				o.Observe(v)
			}
			return nil
		}),
	)
	if err != nil {
		tel.shutdown()
		return nil, err
	}
	return p, nil
}

// Start restores the index from the storage extension, if one is
// configured, and starts writing it back periodically. A store that cannot
// be opened is not an error: the processor then runs on in-memory state, and
// the storage health has said so (log with the file and the remedy, status,
// gauge).
func (p *impactProcessor) Start(ctx context.Context, host component.Host) error {
	if p.cfg.Storage != nil {
		if err := p.startStorage(ctx, host); err != nil {
			return err
		}
	}
	return p.registerControlPlane(host)
}

func (p *impactProcessor) startStorage(ctx context.Context, host component.Host) error {
	client, err := p.storage.Open(ctx, host, *p.cfg.Storage, component.KindProcessor, p.id)
	if err != nil || client == nil {
		return err
	}
	p.store = &store{client: client}
	p.restore(ctx)
	if p.cfg.PersistInterval > 0 {
		loopCtx, cancel := context.WithCancel(context.Background())
		p.stopPersist = cancel
		p.persisting.Add(1)
		go p.persistLoop(loopCtx)
	}
	return nil
}

// Shutdown writes the index to storage and releases everything.
func (p *impactProcessor) Shutdown(ctx context.Context) error {
	if p.unregister != nil {
		p.unregister() // the control plane asks this index no more
	}
	if p.probes != nil {
		p.probes.stop()
	}
	var errs []error
	if p.stopPersist != nil {
		p.stopPersist()
		p.persisting.Wait()
	}
	if p.store != nil {
		errs = append(errs, p.save(ctx), p.store.close(ctx))
		p.store = nil
	}
	p.tel.shutdown()
	return errors.Join(errs...)
}

func (p *impactProcessor) persistLoop(ctx context.Context) {
	defer p.persisting.Done()
	t := time.NewTicker(p.cfg.PersistInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := p.save(ctx); err != nil && ctx.Err() == nil {
				// The storage health logs a failing store once; the state stays in memory.
				p.logger.Debug("Writing the impact index to storage failed", zap.Error(err))
			}
		}
	}
}

// processTraces indexes tool-call spans and marks the stale ones.
func (p *impactProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	now := p.now()
	calls := collectCalls(td, now.UnixNano(), nil)
	if len(calls) == 0 {
		return td, nil
	}
	p.mu.Lock()
	judged := p.state.observe(calls, now, make([]judgement, 0, len(calls)))
	removed := p.state.index.takeRemovals()
	p.entries.Store(int64(p.state.index.size))
	p.mu.Unlock()

	var byDialect [dialects]int64
	stale := map[staleKey]int64{}
	var ahead []string
	byDigest := map[digestKey]int64{}
	for i := range calls {
		c, j := &calls[i], &judged[i]
		byDialect[c.dialect]++
		if j.target != nil && (!c.serverSide || p.cfg.IndexServerSpans) {
			byDigest[p.tel.digestKey(ctx, j.server, c.key.tool, c.key.digest)]++
		}
		if j.state == unjudged || (!j.known && j.state != judgedStale) {
			continue
		}
		attrs := c.span.Attributes()
		if j.known {
			attrs.PutStr(semconv.ToolCurrentDigest, j.current)
		}
		attrs.PutBool(semconv.ToolStale, j.state == judgedStale)
		attrs.PutStr(semconv.ToolStaleness, j.state.String())
		switch j.state {
		case judgedStale:
			stale[p.tel.staleKey(ctx, j.server, c.key.tool, c.key.agent)]++
		case judgedAhead:
			ahead = append(ahead, j.server)
		}
	}
	if p.probes != nil {
		for _, server := range ahead {
			p.probes.ask(server, now)
		}
	}
	p.tel.toolCalls(ctx, &byDialect)
	p.tel.staleCalls(ctx, stale)
	p.tel.callsByDigest(ctx, byDigest)
	p.tel.removals(ctx, removed)
	return td, nil
}

// processLogs learns current digests from snapshot events and answers drift
// events with their impact. Other records pass through untouched.
func (p *impactProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	now := p.now()
	byRisk := map[string]int64{}
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := rl.Resource().Attributes()
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			recs := sls.At(j).LogRecords()
			var at []int
			var extra []plog.LogRecordSlice
			for k := 0; k < recs.Len(); k++ {
				rec := recs.At(k)
				switch eventName(rec) {
				case semconv.EventSnapshot:
					if l := readListing(res, rec, now.UnixNano()); l != nil {
						p.applyListing(ctx, l, now)
					}
				case semconv.EventDrift:
					l := readListing(res, rec, now.UnixNano())
					if l == nil {
						p.logger.Debug("Drift event without a server name; passed through without impact")
						continue
					}
					l.driftID, l.changed = strAttr(rec.Attributes(), semconv.DriftID), readToolSeverities(rec.Attributes())
					imp, ok := p.driftImpact(ctx, l, readToolChanges(rec.Attributes()), now)
					if !ok {
						continue
					}
					enrichDrift(rec, &imp)
					records := plog.NewLogRecordSlice()
					for risk, n := range appendImpactRecords(records, rec, l, &imp, p.cfg.Window, pcommon.NewTimestampFromTime(now)) {
						byRisk[risk] += n
					}
					at = append(at, k)
					extra = append(extra, records)
				case semconv.EventMixedContract:
					records := plog.NewLogRecordSlice()
					for risk, n := range p.mixedImpact(res, rec, records, now) {
						byRisk[risk] += n
					}
					if records.Len() > 0 {
						at = append(at, k)
						extra = append(extra, records)
					}
				}
			}
			if len(at) > 0 {
				insertAfter(recs, at, extra)
			}
		}
	}
	p.tel.impactRecords(ctx, byRisk)
	return ld, nil
}

// mixedImpact answers an open (or updated) mixed fleet: for each variant
// other than the baseline, who called the tools it changes, split by the
// digest each call was made with: the variant's (those sessions are hurt
// now) and the baseline's (at risk once the fleet converges), as
// variantsImpact says, for all the variants in one pass. The variant's map
// gets the totals of the sessions it served and dst one impact record per
// (tool, agent, side), naming the variant's contract. The server's current
// digests are left alone: the fleet has not converged.
func (p *impactProcessor) mixedImpact(res pcommon.Map, rec plog.LogRecord, dst plog.LogRecordSlice, now time.Time) map[string]int64 {
	attrs := rec.Attributes()
	if state := strAttr(attrs, semconv.MixedState); state != "open" && state != "updated" {
		return nil
	}
	l := &listing{
		name: first(strAttr(attrs, semconv.ServerName), strAttr(res, semconv.ServerName)),
		url:  first(strAttr(attrs, semconv.ServerURL), strAttr(res, semconv.ServerURL)),
	}
	vs, ok := attrs.Get(semconv.MixedVariants)
	if l.name == "" || !ok || vs.Type() != pcommon.ValueTypeSlice {
		return nil
	}
	var maps []pcommon.Map
	var variants []variantChanges
	for _, v := range vs.Slice().All() {
		if v.Type() != pcommon.ValueTypeMap {
			continue
		}
		m := v.Map()
		if b, ok := m.Get(semconv.MixedVariantBaseline); ok && b.Bool() {
			continue
		}
		if changes := readToolChanges(m); len(changes) > 0 {
			maps = append(maps, m)
			variants = append(variants, variantChanges{changes: changes, current: readDigests(m, semconv.ToolDigests)})
		}
	}
	if len(variants) == 0 {
		return nil
	}
	p.mu.Lock()
	target := p.state.contracts.servers[l.name]
	var results []variantResult
	if target != nil {
		results = p.state.variantsImpact(target, readDigests(attrs, semconv.PreviousToolDigests), variants, now, p.cfg.Window)
	}
	p.mu.Unlock()
	if target == nil {
		return nil // no snapshot of the server yet: nobody's calls are known against it
	}
	byRisk := map[string]int64{}
	for i, m := range maps {
		r := &results[i]
		m.PutInt(semconv.ImpactAgents, int64(r.hurt.agents))
		m.PutInt(semconv.ImpactSessions, int64(r.hurt.sessions))
		m.PutInt(semconv.ImpactCalls, r.hurt.calls)
		from := dst.Len()
		for risk, n := range appendImpactRecords(dst, rec, l, &r.all, p.cfg.Window, pcommon.NewTimestampFromTime(now)) {
			byRisk[risk] += n
		}
		digest := strAttr(m, semconv.MixedVariantDigest)
		for i := from; i < dst.Len(); i++ {
			dst.At(i).Attributes().PutStr(semconv.ContractDigest, digest)
		}
	}
	return byRisk
}

func (p *impactProcessor) applyListing(ctx context.Context, l *listing, now time.Time) {
	p.mu.Lock()
	changed, ok := p.state.contracts.apply(l)
	var late []rejudged
	if ok {
		late = p.state.learned(p.state.contracts.servers[l.name], changed, now)
	}
	p.mu.Unlock()
	if !ok {
		p.logger.Warn("Too many servers in snapshot events; ignoring a new one", zap.Int("max_servers", maxServers))
	}
	p.countRejudged(ctx, l.name, late)
}

// driftImpact records the drift's listings and computes its impact; false
// when the server cannot be tracked (the table of servers is full).
func (p *impactProcessor) driftImpact(ctx context.Context, l *listing, changes []toolChange, now time.Time) (driftImpact, bool) {
	p.mu.Lock()
	changed, ok := p.state.contracts.apply(l)
	if !ok {
		p.mu.Unlock()
		p.logger.Warn("Too many servers in drift events; impact of a new one not computed", zap.Int("max_servers", maxServers))
		return driftImpact{}, false
	}
	target := p.state.contracts.servers[l.name]
	late := p.state.learned(target, changed, now)
	imp := p.state.impact(target, changes, l.previous, l.digests, now, p.cfg.Window, 0, allCalls)
	p.mu.Unlock()
	p.countRejudged(ctx, l.name, late)
	return imp, true
}

// countRejudged adds the calls a listing showed to be stale, after their
// spans had left as current, to the stale-call counter: it then counts
// what the index, the impact and the control plane count.
func (p *impactProcessor) countRejudged(ctx context.Context, server string, late []rejudged) {
	if len(late) == 0 {
		return
	}
	counts := map[staleKey]int64{}
	var n int64
	for _, r := range late {
		counts[p.tel.staleKey(ctx, server, r.tool, r.agent)] += r.calls
		n += r.calls
	}
	p.tel.staleCalls(ctx, counts)
	p.logger.Debug("Calls made after a change the processor learned of late are stale",
		zap.String("server", server), zap.Int64("calls", n))
}
