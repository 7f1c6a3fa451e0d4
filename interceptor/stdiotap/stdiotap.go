// Package stdiotap is the interceptor's front-end for MCP over stdio when the
// client is not one the other front-ends wrap: a tap over the pipes between
// a client and a child server process. The client writes newline-delimited
// JSON-RPC into Stdin and reads from Stdout as it would from the child's
// own pipes; the tap records each frame as it passes.
//
//	cmd := exec.Command("node", "server.js", "stdio")
//	tap, err := stdiotap.Command(ctx, cmd, interceptor.WithServerName("files"))
//	// ... cmd.Start(), then speak MCP over tap.Stdin() and tap.Stdout()
//
// Pipes carry no context, so every call is attributed to the context given
// to the tap (agent identity, parent span). The stale-tool hook cannot run
// here: there is no caller to refuse or refresh for.
package stdiotap

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"sync"

	"github.com/mcpdrift/mcpdrift/interceptor"
)

// Tap observes one client connection over a pair of pipes.
type Tap struct {
	ic     *interceptor.Interceptor
	sess   *interceptor.Session
	stdin  *writer
	stdout *reader
}

// New taps the pipes to a server: stdin is the server's standard input (the
// client writes into it), stdout its standard output (the client reads from
// it). command is the server's argv, for mcpdrift.server.url.
func New(ctx context.Context, stdin io.WriteCloser, stdout io.ReadCloser, command []string, opts ...interceptor.Option) *Tap {
	return NewWith(ctx, stdin, stdout, command, interceptor.New(opts...))
}

// NewWith is New with an existing Interceptor.
func NewWith(ctx context.Context, stdin io.WriteCloser, stdout io.ReadCloser, command []string, ic *interceptor.Interceptor) *Tap {
	ep := interceptor.Endpoint{Command: command}
	if len(command) == 0 {
		ep.Pipe = true
	}
	sess := ic.NewSession(ep)
	max := ic.Limits().MaxDocumentBytes
	t := &Tap{ic: ic, sess: sess}
	t.stdin = &writer{w: stdin, max: max, send: func(line []byte) []byte {
		out := line
		ic.Protect(func() { out = sess.SendFrame(ctx, line) })
		return out
	}}
	t.stdout = &reader{r: stdout, lines: lineSplitter{max: max, line: func(line []byte) {
		ic.Protect(func() { sess.ReceiveFrame(line) })
	}}, done: sess.Close}
	return t
}

// Command taps a command's standard input and output: it creates the pipes
// (cmd.StdinPipe, cmd.StdoutPipe), so call it before cmd.Start and speak MCP
// over the tap's Stdin and Stdout.
func Command(ctx context.Context, cmd *exec.Cmd, opts ...interceptor.Option) (*Tap, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		in.Close()
		return nil, err
	}
	return New(ctx, in, out, cmd.Args, opts...), nil
}

// Stdin is the pipe the client writes requests into.
func (t *Tap) Stdin() io.WriteCloser { return t.stdin }

// Stdout is the pipe the client reads responses from. When it ends (EOF,
// error or Close) the session ends: requests still waiting end as
// connection_closed.
func (t *Tap) Stdout() io.ReadCloser { return t.stdout }

// Session is the interceptor session of this connection.
func (t *Tap) Session() *interceptor.Session { return t.sess }

// writer forwards the client's writes line by line: each complete line is
// one frame, recorded (and given trace context) before it is written on.
// A partial line waits for its newline: a stdio server cannot act on it
// before that anyway.
type writer struct {
	mu   sync.Mutex
	w    io.WriteCloser
	max  int
	buf  []byte
	skip bool // the current line exceeded max: forward it unobserved
	send func(line []byte) []byte
}

func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if w.skip {
			end := len(p)
			if i >= 0 {
				end = i + 1
			}
			if _, err := w.w.Write(p[:end]); err != nil {
				return n, err
			}
			n, p, w.skip = n+end, p[end:], i < 0
			continue
		}
		if i < 0 {
			if len(w.buf)+len(p) > w.max {
				// Too long to observe: pass it on as it comes.
				if _, err := w.w.Write(append(w.buf, p...)); err != nil {
					return n, err
				}
				w.buf, w.skip = w.buf[:0], true
				return n + len(p), nil
			}
			w.buf = append(w.buf, p...)
			return n + len(p), nil
		}
		line := p[:i+1] // with its newline
		if len(w.buf) > 0 {
			line = append(w.buf, line...)
		}
		if frame := line[:len(line)-1]; len(bytes.TrimSpace(frame)) > 0 {
			if out := w.send(frame); len(out) != len(frame) || &out[0] != &frame[0] {
				line = append(out, '\n') // out is a fresh copy: safe to extend
			}
		}
		if _, err := w.w.Write(line); err != nil {
			return n, err
		}
		w.buf = w.buf[:0]
		n, p = n+i+1, p[i+1:]
	}
	return n, nil
}

// Close writes out any unterminated line, then closes the pipe.
func (w *writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	if len(w.buf) > 0 {
		_, err = w.w.Write(w.buf)
		w.buf = nil
	}
	return errors.Join(err, w.w.Close())
}

// reader passes the server's output through, recording each line as the
// client reads it.
type reader struct {
	r     io.ReadCloser
	lines lineSplitter
	once  sync.Once
	done  func()
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.lines.feed(p[:n])
	}
	if err != nil {
		r.once.Do(r.done)
	}
	return n, err
}

func (r *reader) Close() error {
	err := r.r.Close()
	r.once.Do(r.done)
	return err
}

// lineSplitter cuts a byte stream into lines, keeping at most max bytes of
// a line; longer lines are not observed. Reads happen on one goroutine (the
// client's reader), so it needs no lock.
type lineSplitter struct {
	max  int
	buf  []byte
	over bool
	line func([]byte)
}

func (s *lineSplitter) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if !s.over {
			if len(s.buf)+len(chunk) > s.max {
				s.over, s.buf = true, s.buf[:0]
			} else {
				s.buf = append(s.buf, chunk...)
			}
		}
		if i < 0 {
			return
		}
		if !s.over && len(bytes.TrimSpace(s.buf)) > 0 {
			s.line(bytes.Clone(s.buf)) // the session may keep it
		}
		s.buf, s.over, b = s.buf[:0], false, b[i+1:]
	}
}
