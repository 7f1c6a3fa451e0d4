// Package upstream is the stdio → HTTP proxy: a stdio MCP server for the
// host that speaks Streamable HTTP (or the deprecated HTTP+SSE) to the
// server, re-initializing on the agent's behalf when the server restarts.
package upstream

import (
	"context"
	"errors"
	"syscall"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/proxy/internal/config"
	"github.com/mcpdrift/mcpdrift/proxy/internal/relay"
	"github.com/mcpdrift/mcpdrift/proxy/internal/telemetry"
)

// Run runs stdio → HTTP: the proxy is a stdio MCP server for the
// host (frames on io.In and io.Out) and speaks Streamable HTTP to
// cfg.Upstream, until the agent's input ends or a signal arrives. It
// returns the exit code to exit with: 0, or 128+signal.
func Run(ctx context.Context, cfg config.Config, tel telemetry.Telemetry, io relay.Stdio) (int, error) {
	g, err := cfg.Ready()
	if err != nil {
		return 2, err
	}
	if cfg.Upstream == "" || cfg.Listen != "" {
		return 2, errors.New("stdio -> HTTP needs --upstream URL and no --listen")
	}
	r := relay.New(&cfg, tel, interceptor.Endpoint{URL: cfg.Upstream}, g, io.Out)
	u := newStreamable(ctx, &cfg, r)
	r.SetUpstream(u)
	relistCtx, stopRelist := context.WithCancel(ctx)
	u.bg.Add(1) // u.close waits for it with the streams
	go func() {
		defer u.bg.Done()
		r.RelistLoop(relistCtx)
	}()

	agentDone := make(chan struct{})
	go func() {
		defer close(agentDone)
		r.ServeAgent(io.In, u.SendPiece)
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
	r.Session().Close()
	return code, nil
}
