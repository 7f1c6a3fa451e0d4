package probe

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// A stdio server is a process the probe has just started: it may take
// seconds to load a runtime, install through npx, or read a model before it
// reads its first message. Its silence on server/discover means "legacy"
// (the spec's "does not respond within a reasonable timeout") only once it
// has read the request; before that it says nothing about its generation.

const (
	// inputPoll is how often the probe checks whether the server has read
	// the discover request.
	inputPoll = 20 * time.Millisecond
	// lateDiscoverGrace is how long, after the server answered the fallback
	// initialize, the probe still waits for its answer to server/discover:
	// an SDK that handles requests concurrently (go-sdk) may answer the
	// later request first.
	lateDiscoverGrace = 250 * time.Millisecond
)

// errSilent says the server read server/discover and did not answer it in
// DiscoverTimeout; late is the request, still pending.
type errSilent struct{ late *pending }

func (e *errSilent) Error() string { return "no answer to server/discover" }

// askDiscover sends server/discover and returns its result. Over HTTP the
// request has RequestTimeout. On stdio the wait for an answer is
// DiscoverTimeout counted from when the server has read the request (from
// sending it where that cannot be told); silence then returns *errSilent,
// leaving the request pending. A server that never reads it times out with
// the probe.
func (p *prober) askDiscover(ctx context.Context, s *session) (json.RawMessage, error) {
	sc, stdio := s.c.(*stdioConn)
	if !stdio {
		return s.request(ctx, string(StepDiscover), nil, p.rt.opts.RequestTimeout)
	}
	call := s.start(ctx, string(StepDiscover), nil)
	read := func() bool {
		r, known := sc.inputRead()
		return r || !known
	}
	poll := time.NewTicker(inputPoll)
	defer poll.Stop()
	var silence <-chan time.Time // nil until the server has read the request
	startSilence := func() {
		t := time.NewTimer(p.rt.opts.DiscoverTimeout)
		silence = t.C
		poll.Stop()
	}
	if read() {
		startSilence()
	}
	for {
		select {
		case <-call.done:
			if call.err != nil && silence == nil && ctx.Err() != nil && !read() {
				return nil, timeoutError(ctx, "the server did not read its input (it may still be starting)")
			}
			return call.result, call.err
		case <-poll.C:
			if silence == nil && read() {
				startSilence()
			}
		case <-silence:
			return nil, &errSilent{late: call}
		}
	}
}

// lateDiscover decides a stdio fallback once initialize has been answered
// (initErr is how): a server that was still starting reads server/discover
// and initialize together, and answers both. go-sdk answers discover and
// refuses initialize as a duplicate, in either order; mcp-go answers both,
// in order. A DiscoverResult means the server is modern, whatever
// initialize got; it returns that handshake, or nil to stay with
// initialize. The discover request ends here in every case.
func (p *prober) lateDiscover(ctx context.Context, s *session, legacy *errLegacy, initErr error) *handshake {
	late := legacy.late
	defer late.cancel()
	select {
	case <-late.done:
	default:
		if !answered(initErr) {
			return nil // no answer to either: nothing suggests a modern server
		}
		t := time.NewTimer(lateDiscoverGrace)
		defer t.Stop()
		select {
		case <-late.done:
		case <-t.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
	if late.err != nil {
		return nil
	}
	hs, err := p.discovered(late.result, legacy.version)
	if err != nil {
		return nil
	}
	p.rt.opts.Logger.Debug("probe: the server answered server/discover late: it is modern")
	s.modernVersion = legacy.version
	s.c.negotiated(legacy.version, true)
	return hs
}

// answered reports whether err, from a request, means the server answered
// it (with a result, an error, or something malformed).
func answered(err error) bool {
	var pe *Error
	return err == nil || !errors.As(err, &pe) || (pe.Class != ClassTimeout && pe.Class != ClassUnreachable)
}
