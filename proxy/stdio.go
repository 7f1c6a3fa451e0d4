package proxy

import (
	"bytes"
	"context"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/interceptor"
)

// Stdio is the agent's side of a stdio proxy: what the host writes to the
// proxy and reads from it. Signals are forwarded to the server (SIGINT and
// SIGTERM, as `mcpdrift proxy` subscribes to them).
type Stdio struct {
	In      io.Reader
	Out     io.Writer
	Err     io.Writer
	Signals <-chan os.Signal
}

// RunCommand runs stdio → stdio: it starts cfg.Command, relays until the
// agent or the server ends the session, and returns the exit code to exit
// with (the server's). The child and its process group are gone when it
// returns, whatever happened.
func RunCommand(ctx context.Context, cfg Config, tel Telemetry, io Stdio) (int, error) {
	if err := cfg.Validate(); err != nil {
		return 2, err
	}
	cfg.complete()
	g, err := newGate(&cfg)
	if err != nil {
		return 2, err
	}
	c, err := startChild(cfg.Command, io.Err)
	if err != nil {
		return 1, err
	}
	defer c.signal(syscall.SIGKILL) // whatever the child left running in its group
	r := newRelay(&cfg, tel, interceptor.Endpoint{Command: cfg.Command}, g)
	r.up = c
	r.agent = newLineWriter(io.Out)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go r.relistLoop(ctx)

	// Server → agent, until the server's output ends.
	serverDone := make(chan struct{})
	go func() {
		defer close(serverDone)
		r.readFrames(c.stdout, "server", r.fromServer, r.fromServerPiece)
	}()
	// Agent → server, until the agent's input ends; then the child's input
	// closes and it has ShutdownGrace to exit.
	go func() {
		r.readFrames(io.In, "agent", r.fromAgent, r.agentPieces(c.sendPiece))
		c.closeInput()
		c.stop(cfg.ShutdownGrace)
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
				c.signal(s)
			}
		}
	}
	// The child is gone: end its group, then let its last output reach the
	// agent (the pipe ends when no process holds it any more) within
	// ShutdownGrace, and once more after cutting the pipe. An agent that
	// stopped reading, or a signal, ends the wait: the proxy never outlives
	// its server for long.
	c.signal(syscall.SIGKILL)
	if !drained(serverDone, cfg.ShutdownGrace, io.Signals) {
		c.stdout.Close()
		drained(serverDone, cfg.ShutdownGrace, io.Signals)
	}
	r.sess.Close()
	return code, nil
}

// drained waits up to grace for done, and reports whether it came; a
// signal ends the wait.
func drained(done <-chan struct{}, grace time.Duration, signals <-chan os.Signal) bool {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
	case <-signals:
	}
	return false
}

// readFrames reads newline-delimited frames from in until it ends: whole
// frames to whole, the pieces of an oversized one to piece (after marking
// it), unparsed. The reading goroutine writes each frame on itself: no
// hand-off between goroutines. A frame's bytes are the reader's, valid
// until whole returns: whole copies what it keeps.
func (r *relay) readFrames(in io.Reader, from string, whole func([]byte), piece func([]byte, bool) error) {
	lr := newLineReader(in, r.cfg.Limits.MaxDocumentBytes)
	inOversized := false
	for {
		b, over, last, err := lr.next()
		if err != nil {
			return
		}
		switch {
		case over || inOversized:
			if !inOversized {
				r.oversized(from)
			}
			inOversized = !last
			if piece(b, last) != nil {
				return
			}
		case len(bytes.TrimSpace(b)) == 0:
		default:
			whole(b)
		}
	}
}
