// Package stdio is the stdio → stdio proxy: the server a child process,
// the agent on the proxy's own standard input and output.
package stdio

import (
	"context"
	"syscall"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/proxy/internal/config"
	"github.com/mcpdrift/mcpdrift/proxy/internal/relay"
	"github.com/mcpdrift/mcpdrift/proxy/internal/telemetry"
)

// Run runs stdio → stdio: it starts cfg.Command, relays until the
// agent or the server ends the session, and returns the exit code to exit
// with (the server's). The child and everything it started (its process
// group; its job object on Windows) are gone when it returns, whatever
// happened.
func Run(ctx context.Context, cfg config.Config, tel telemetry.Telemetry, io relay.Stdio) (int, error) {
	g, err := cfg.Ready()
	if err != nil {
		return 2, err
	}
	c, err := startChild(cfg.Command, io.Err)
	if err != nil {
		return 1, err
	}
	r := relay.New(&cfg, tel, interceptor.Endpoint{Command: cfg.Command}, g, io.Out)
	r.SetUpstream(c)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go r.RelistLoop(ctx)

	// Server → agent, until the server's output ends.
	serverDone := make(chan struct{})
	go func() {
		defer close(serverDone)
		r.ServeServer(c.stdout)
	}()
	// Agent → server, until the agent's input ends; then the child's input
	// closes and it has ShutdownGrace to exit.
	go func() {
		r.ServeAgent(io.In, c.SendPiece)
		c.closeInput()
		c.tree.Stop(cfg.ShutdownGrace)
	}()
	exited := make(chan int, 1)
	go func() { exited <- c.wait() }()
	var code int
wait:
	for {
		select {
		case code = <-exited:
			break wait
		case sig := <-io.Signals:
			if s, ok := sig.(syscall.Signal); ok {
				c.tree.Signal(s)
			}
		}
	}
	// The child is gone and wait ended its tree: let its last output reach
	// the agent (the pipe ends when no process holds it any more) within
	// ShutdownGrace, and once more after cutting the pipe. An agent that
	// stopped reading, or a signal, ends the wait: the proxy never outlives
	// its server for long.
	if !relay.Drained(serverDone, cfg.ShutdownGrace, io.Signals) {
		c.stdout.Close()
		relay.Drained(serverDone, cfg.ShutdownGrace, io.Signals)
	}
	r.Session().Close()
	return code, nil
}
