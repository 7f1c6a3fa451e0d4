package probe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/proctree"
)

// Grace periods of the stdio shutdown sequence the MCP spec describes:
// close stdin, wait, SIGTERM, wait, SIGKILL.
const (
	stdioGrace          = 500 * time.Millisecond
	stdioGraceCancelled = 50 * time.Millisecond
)

// stdioConn runs a server as a child process and speaks newline-delimited
// JSON-RPC over its stdin and stdout. The child runs in a tree of its own
// (proctree: its process group, a job object on Windows) so that
// everything it starts (npx, shells) is signalled and ended with it, and it
// is always reaped: on success, on error and on cancellation.
//
// Hand-written rather than the go-sdk's CommandTransport because a probe
// must end the server's process tree on timeout, keep a bounded stderr
// tail, and get a typed error when a line exceeds the message limit; the
// framing is the spec's (one message per line, no embedded newlines).
type stdioConn struct {
	rt      *probeRuntime
	tree    *proctree.Tree
	stdin   *os.File
	written atomic.Int64 // bytes written to stdin
	stdout  *os.File
	stderr  *tailBuffer
	messageStream

	stderrPipe *os.File
	stderrDone chan struct{}

	writeMu   sync.Mutex
	exited    chan struct{} // closed when Wait returned
	waitErr   error
	waitDone  chan struct{} // closed when the exit was handled
	readDone  chan struct{}
	closeOnce sync.Once
}

// startStdio spawns the command. A command that cannot start makes the
// server unreachable.
//
// The pipes are the probe's own (os.Pipe) rather than exec's, so that Wait
// returns when the child exits even while something it started still holds
// stdout or stderr: the probe then kills the rest of the tree at once
// instead of waiting for the pipes.
func startStdio(t *Target, rt *probeRuntime, in inbox) (*stdioConn, error) {
	cmd := exec.Command(t.Command, t.Args...)
	cmd.Dir = t.Dir
	cmd.Env = append(os.Environ(), t.Env...)
	c := &stdioConn{rt: rt, stderr: newTailBuffer(rt.opts.MaxStderrBytes),
		exited: make(chan struct{}), waitDone: make(chan struct{}), readDone: make(chan struct{}), stderrDone: make(chan struct{})}
	c.messageStream = messageStream{dm: newDemux(in), write: c.write}
	p, err := newPipes()
	if err != nil {
		return nil, failure(ClassUnreachable, "pipes: %v", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.childIn, p.childOut, p.childErr
	c.tree, err = proctree.Start(cmd)
	p.closeChildEnds()
	if err != nil {
		p.closeOurEnds()
		return nil, &Error{Class: ClassUnreachable, Err: rt.red.err(fmt.Errorf("starting %s: %w", contract.QuoteForDisplay(rt.red.text(t.Command)), err))}
	}
	c.stdin, c.stdout, c.stderrPipe = p.in, p.out, p.err
	go func() {
		defer close(c.waitDone)
		c.waitErr = c.tree.Wait() // the server is gone: so is whatever it started
		close(c.exited)
		c.reportExit()
	}()
	go func() {
		defer close(c.stderrDone)
		_, _ = io.Copy(c.stderr, p.err) // drained to the end, so the child never blocks on stderr
	}()
	go c.readLoop(&meteredReader{r: p.out, b: rt.budget})
	return c, nil
}

// pipes are the three pipes of a child: its ends and the probe's.
type pipes struct {
	childIn, childOut, childErr *os.File
	in                          *os.File // the probe writes the child's stdin
	out, err                    *os.File // the probe reads the child's stdout, stderr
}

func newPipes() (*pipes, error) {
	var p pipes
	var err error
	if p.childIn, p.in, err = os.Pipe(); err != nil {
		return nil, err
	}
	if p.out, p.childOut, err = os.Pipe(); err != nil {
		p.childIn.Close()
		p.in.Close()
		return nil, err
	}
	if p.err, p.childErr, err = os.Pipe(); err != nil {
		p.closeChildEnds()
		p.in.Close()
		p.out.Close()
		return nil, err
	}
	return &p, nil
}

func (p *pipes) closeChildEnds() {
	for _, f := range []*os.File{p.childIn, p.childOut, p.childErr} {
		if f != nil {
			f.Close()
		}
	}
}

func (p *pipes) closeOurEnds() {
	p.in.Close()
	p.out.Close()
	p.err.Close()
}

// readLoop reads one message per line until stdout ends.
func (c *stdioConn) readLoop(r io.Reader) {
	defer close(c.readDone)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLimitedLine(br, c.rt.opts.MaxMessageBytes)
		if len(bytes.TrimSpace(line)) > 0 {
			msg, derr := decodeMessage(line)
			if derr != nil {
				c.dm.fail(derr)
				return
			}
			c.dm.deliver(msg)
		}
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
				err = c.exitError()
			}
			c.dm.fail(err)
			return
		}
	}
}

// exitDrain is how long stdout may stay open after the child exited: long
// enough to read what the child wrote before exiting.
const exitDrain = 100 * time.Millisecond

// reportExit fails every waiting and later call once the child has exited,
// also when stdout never ends: a process the child started outside its
// process group (setsid) can hold stdout open indefinitely, and the probe
// must not wait for it.
func (c *stdioConn) reportExit() {
	t := time.NewTimer(exitDrain)
	defer t.Stop()
	select {
	case <-c.readDone: // stdout ended; readLoop reported why
	case <-t.C:
		c.dm.fail(c.exitedError(" (a process it started still holds its stdout)"))
	}
}

// exitedError reports the child's exit and status; call once exited is closed.
func (c *stdioConn) exitedError(note string) error {
	if c.waitErr != nil {
		return failure(ClassUnreachable, "the server exited%s: %v", note, c.waitErr)
	}
	return failure(ClassUnreachable, "the server exited%s", note)
}

// exitReap is how long exitError waits for the child's exit. A dying
// process's pipes close before it can be reaped: on a loaded machine (load
// 45) the exit came more than 100 ms after stdout ended, and the error
// lost the exit status. Only a child that closed stdout and runs on waits
// it out.
const exitReap = 2 * time.Second

// exitError says why stdout (or stdin) ended: the child exited (with what
// status), or closed stdout.
func (c *stdioConn) exitError() error {
	t := time.NewTimer(exitReap)
	defer t.Stop()
	select {
	case <-c.exited:
		return c.exitedError("")
	case <-t.C:
		return failure(ClassUnreachable, "the server closed stdout")
	}
}

// readLimitedLine reads one line (without its end), refusing lines over max.
func readLimitedLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max+1 { // +1: the newline itself
			return nil, failure(ClassTooLarge, "a message from the server exceeded the limit of %d bytes", max)
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

func (c *stdioConn) transport() string { return contract.TransportStdio }

// inputRead reports whether the child has read everything the probe wrote
// to its stdin (false before the first write); known is false where the
// platform cannot tell.
func (c *stdioConn) inputRead() (read, known bool) {
	unread, ok := unreadBytes(c.stdin)
	if !ok {
		return false, false
	}
	return c.written.Load() > 0 && unread == 0, true
}

func (c *stdioConn) negotiated(string, bool) {}

func (c *stdioConn) write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return failure(ClassProtocolError, "encoding message: %v", err)
	}
	data = append(data, '\n')
	// A child that stops reading stdin blocks the write; the write runs
	// aside so the request's deadline still applies (close unblocks it).
	done := make(chan error, 1)
	go func() {
		c.writeMu.Lock()
		defer c.writeMu.Unlock()
		n, err := c.stdin.Write(data)
		c.written.Add(int64(n))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return c.exitError()
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close shuts the child down as the spec asks (close stdin, wait, SIGTERM,
// wait, SIGKILL) and reaps it.
func (c *stdioConn) close(hurry bool) {
	c.closeOnce.Do(func() {
		grace := stdioGrace
		if hurry {
			grace = stdioGraceCancelled
		}
		_ = c.stdin.Close()
		c.tree.Stop(grace)
		// The child is reaped and the rest of its tree ended. Anything that
		// escaped the tree (setsid) may still hold the pipes: stop reading.
		c.stdout.Close()
		c.stderrPipe.Close()
		<-c.readDone
		<-c.stderrDone
		<-c.waitDone
		c.dm.fail(&Error{Class: ClassUnreachable, Err: errClosed})
	})
}

// stderrTail returns the redacted stderr tail.
func (c *stdioConn) stderrTail() string { return c.rt.red.text(c.stderr.String()) }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped bool
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		p = p[len(p)-t.max:]
		t.buf = t.buf[:0]
		t.dropped = true
	} else if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.dropped = true
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped {
		return "…" + string(t.buf)
	}
	return string(t.buf)
}
