package probe

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
)

// Result is a snapshot with what the probe learned while taking it.
type Result struct {
	Snapshot *contract.Snapshot
	// Settled reports that two consecutive listings agreed with no
	// list_changed between them. False when settling was disabled or the
	// server was still changing after MaxSettleRounds listings (the snapshot
	// is then the last listing).
	Settled bool
	// Listings is how many complete listing rounds were made.
	Listings int
	// ListChanged counts the list_changed notifications received.
	ListChanged int
	// Stderr is the redacted tail of a stdio server's stderr.
	Stderr string
	// Duration is the wall time of the probe.
	Duration time.Duration
}

// Probe takes a snapshot of one server. It is safe to call concurrently for
// any number of targets: it keeps no global state, and it releases
// everything it started (a stdio child is always reaped, HTTP streams and
// goroutines end) before it returns, whatever the outcome, including when
// ctx is cancelled.
//
// A probe failure is an *Error (use errors.As) with a Class and the Step
// that failed; any other error means the Target or Options are invalid.
func Probe(ctx context.Context, t Target, o Options) (*contract.Snapshot, error) {
	r, err := ProbeResult(ctx, t, o)
	if err != nil {
		return nil, err
	}
	return r.Snapshot, nil
}

// ProbeResult is Probe with diagnostics.
func ProbeResult(ctx context.Context, t Target, o Options) (*Result, error) {
	s, err := Open(ctx, t, o)
	if err != nil {
		return nil, err
	}
	res := s.Result()
	res.Stderr = s.Close()
	res.Duration = time.Since(s.start)
	return res, nil
}

// abortCause returns the error the probe was aborted with (probeRuntime.abort)
// in place of err, which is then only a consequence (a cancelled request),
// keeping err's step; else err.
func abortCause(ctx context.Context, err error) error {
	var cause *Error
	if !errors.As(context.Cause(ctx), &cause) {
		return err
	}
	if cause.Step == "" {
		cause.Step = asError(err).Step
	}
	return cause
}

// prober is one probe of one target.
type prober struct {
	t    *Target
	rt   *probeRuntime
	sess *session
}

func (p *prober) run(ctx context.Context) (*Result, error) {
	hs, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	kinds, err := advertisedKinds(hs.capabilities)
	if err != nil {
		if hs.generation == contract.SpecStateless2026 {
			return nil, at(StepDiscover, err)
		}
		return nil, at(StepInitialize, err)
	}
	s := p.sess
	if hs.generation == contract.SpecStateless2026 && p.rt.opts.Settle > 0 {
		if names, err := contract.CapabilityNames(hs.capabilities); err == nil {
			s.listen(names)
		}
	}
	lists, settled, rounds, err := p.settle(ctx, s, kinds)
	if err != nil {
		return nil, err
	}
	p.progress(StepSnapshot)
	snap := &contract.Snapshot{
		SchemaVersion:      contract.SchemaVersion,
		Server:             p.t.server(p.rt.red, s.c.transport()),
		ObservedAt:         p.rt.opts.Now().UTC(),
		ProtocolVersion:    hs.protocolVersion,
		SpecGeneration:     hs.generation,
		ServerInfo:         nullToNil(p.rt.red.jsonText(hs.serverInfo)),
		Capabilities:       nullToNil(p.rt.red.jsonText(hs.capabilities)),
		Instructions:       p.rt.red.textPtr(hs.instructions),
		ClientCapabilities: s.clientCaps,
	}
	for _, k := range contract.Kinds {
		if l, ok := lists[k]; ok {
			snap.SetListing(k, l.defs)
		}
	}
	if err := snap.Seal(); err != nil {
		return nil, at(StepSnapshot, err)
	}
	return &Result{Snapshot: snap, Settled: settled, Listings: rounds, ListChanged: int(s.changes.Load())}, nil
}

func nullToNil(raw []byte) []byte {
	if string(raw) == "null" {
		return nil
	}
	return raw
}

// connect opens the transport and runs the handshake of the server's
// generation. With transport auto it follows the spec's backwards
// compatibility procedure: POST server/discover; on a legacy answer POST
// initialize; when that POST is refused with 400, 404 or 405 (and no modern
// JSON-RPC error), GET for a legacy HTTP+SSE stream.
func (p *prober) connect(ctx context.Context) (*handshake, error) {
	p.progress(StepConnect)
	tr := p.t.transport()
	if tr == TransportStdio {
		s := p.newSession(ctx)
		c, err := startStdio(p.t, p.rt, s.receive)
		if err != nil {
			return nil, at(StepConnect, err)
		}
		s.c = c
		return p.handshake(ctx, s)
	}
	base, err := newHTTPBase(p.t, p.rt)
	if err != nil {
		return nil, at(StepConnect, err)
	}
	if tr == TransportSSE {
		return p.connectSSE(ctx, base)
	}
	s := p.newSession(ctx)
	sc := newStreamable(ctx, base, s.receive)
	s.c = sc
	hs, err := p.handshake(ctx, s)
	var se *statusError
	if err != nil && tr == TransportAuto && errors.As(err, &se) && !se.modern() &&
		(se.code == http.StatusBadRequest || se.code == http.StatusNotFound || se.code == http.StatusMethodNotAllowed) {
		p.rt.opts.Logger.Debug("probe: Streamable HTTP refused, trying the legacy HTTP+SSE transport", "status", se.code)
		s.close(false)
		p.sess = nil
		return p.connectSSE(ctx, base)
	}
	if err != nil {
		return nil, p.classify(StepConnect, err)
	}
	if hs.generation == contract.SpecStateful2025 {
		sc.listen()
	}
	return hs, nil
}

// handshake decides the server's generation, in this one place: it tries
// server/discover and falls back to initialize on a legacy answer. On stdio
// a discover request the server left unanswered stays pending through the
// fallback, and a DiscoverResult that arrives by the initialize answer
// still makes the server modern (see lateDiscover). A caller that knows the
// server is initialize-era (Options.Known) skips the discover attempt that
// cannot succeed. Errors are returned unclassified, so connect can inspect
// them.
func (p *prober) handshake(ctx context.Context, s *session) (*handshake, error) {
	var hs *handshake
	var err error
	if k := p.rt.opts.Known; k.Generation == contract.SpecStateful2025 {
		err = &errLegacy{preferred: k.ProtocolVersion, why: "an earlier probe found an initialize-era server"}
	} else {
		hs, err = p.discover(ctx, s)
	}
	var legacy *errLegacy
	if !errors.As(err, &legacy) {
		if err != nil {
			return nil, p.stepped(StepDiscover, err)
		}
		return hs, nil
	}
	p.rt.opts.Logger.Debug("probe: falling back to initialize", "why", p.rt.red.text(legacy.why))
	hs, err = p.initialize(ctx, s, legacy.preferred)
	if legacy.late != nil {
		if modern := p.lateDiscover(ctx, s, legacy, err); modern != nil {
			return modern, nil
		}
	}
	if err != nil {
		return nil, p.stepped(StepInitialize, err)
	}
	if err := p.initialized(ctx, s, hs); err != nil {
		return nil, p.classify(StepInitialized, err)
	}
	return hs, nil
}

// stepped records the step on a probe error, leaving status errors as they
// are for connect to inspect.
func (p *prober) stepped(step Step, err error) error {
	var se *statusError
	if errors.As(err, &se) {
		return &steppedStatus{statusError: se, step: step}
	}
	return p.classify(step, err)
}

// steppedStatus is a status error that remembers its step.
type steppedStatus struct {
	*statusError
	step Step
}

func (e *steppedStatus) Unwrap() error { return e.statusError }

// connectSSE uses the legacy HTTP+SSE transport (initialize era only).
func (p *prober) connectSSE(ctx context.Context, base *httpBase) (*handshake, error) {
	s := p.newSession(ctx)
	c, err := dialSSE(ctx, base, s.receive)
	if err != nil {
		return nil, p.classify(StepConnect, err)
	}
	s.c = c
	hs, err := p.initialize(ctx, s, "")
	if err != nil {
		return nil, p.classify(StepInitialize, err)
	}
	if err := p.initialized(ctx, s, hs); err != nil {
		return nil, p.classify(StepInitialized, err)
	}
	return hs, nil
}

func (p *prober) newSession(ctx context.Context) *session {
	s := newSession(ctx, p.rt, p.t.clientCapabilities())
	p.sess = s
	return s
}

// classify turns any error into an *Error with a step.
func (p *prober) classify(step Step, err error) *Error {
	var pe *Error
	var ss *steppedStatus
	var se *statusError
	var re *rpcError
	switch {
	case errors.As(err, &pe):
	case errors.As(err, &ss):
		pe = ss.asProbeError(p.rt.red)
		pe.Step = ss.step
	case errors.As(err, &se):
		pe = se.asProbeError(p.rt.red)
	case errors.As(err, &re):
		pe = &Error{Class: ClassProtocolError, RPCCode: re.Code, Err: re}
	default:
		pe = asError(err)
	}
	if pe.Step == "" {
		pe.Step = step
	}
	return pe
}

// release closes the session (and with it the transport, the child, the
// streams) within a bounded time.
func (p *prober) release(hurry bool) {
	if p.sess != nil {
		p.sess.close(hurry)
	}
}

// finish completes an error for the caller: transport, stderr, and a last
// redaction pass over text that may have come from the server.
func (p *prober) finish(err error) error {
	pe := p.classify(StepConnect, err)
	switch {
	case pe.Transport != "":
	case p.sess != nil && p.sess.c != nil:
		pe.Transport = p.sess.c.transport()
	case p.t.transport() != TransportAuto:
		pe.Transport = string(p.t.transport())
	}
	pe.Stderr = p.stderr()
	pe.Err = p.rt.red.err(pe.Err)
	p.rt.opts.Logger.Debug("probe failed", "class", pe.Class, "step", pe.Step, "error", pe.Error())
	return pe
}

func (p *prober) stderr() string {
	if p.sess == nil {
		return ""
	}
	if c, ok := p.sess.c.(*stdioConn); ok {
		return c.stderrTail()
	}
	return ""
}

func (p *prober) progress(step Step) {
	p.rt.opts.Logger.Debug("probe step", "step", step)
	if p.rt.opts.Progress != nil {
		p.rt.opts.Progress(step)
	}
}
