package proxy

import (
	"context"
	"errors"
	"syscall"

	"github.com/mcpdrift/mcpdrift/interceptor"
)

// RunUpstream runs stdio → HTTP: the proxy is a stdio MCP server for the
// host (frames on io.In and io.Out) and speaks Streamable HTTP to
// cfg.Upstream, until the agent's input ends or a signal arrives. It
// returns the exit code to exit with: 0, or 128+signal.
func RunUpstream(ctx context.Context, cfg Config, tel Telemetry, io Stdio) (int, error) {
	if err := cfg.Validate(); err != nil {
		return 2, err
	}
	if cfg.Upstream == "" || cfg.Listen != "" {
		return 2, errors.New("stdio -> HTTP needs --upstream URL and no --listen")
	}
	cfg.complete()
	g, err := newGate(&cfg)
	if err != nil {
		return 2, err
	}
	r := newRelay(&cfg, tel, interceptor.Endpoint{URL: cfg.Upstream}, g)
	r.agent = newLineWriter(io.Out)
	u := newStreamable(ctx, &cfg, r)
	r.up = u
	relistCtx, stopRelist := context.WithCancel(ctx)
	u.bg.Add(1) // u.close waits for it with the streams
	go func() {
		defer u.bg.Done()
		r.relistLoop(relistCtx)
	}()

	agentDone := make(chan struct{})
	go func() {
		defer close(agentDone)
		r.readFrames(io.In, "agent", r.fromAgent, r.agentPieces(u.sendPiece))
	}()
	code := 0
	select {
	case <-agentDone:
	case sig := <-io.Signals:
		if s, ok := sig.(syscall.Signal); ok {
			code = 128 + int(s)
		}
	case <-ctx.Done():
	}
	stopRelist()
	select {
	case <-agentDone:
		u.close(cfg.ShutdownGrace, code == 0 && ctx.Err() == nil)
	default:
		u.close(cfg.ShutdownGrace, false) // the host wants the proxy gone
	}
	r.sess.Close()
	return code, nil
}
