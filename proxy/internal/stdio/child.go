package stdio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/proctree"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
	"github.com/mcpdrift/mcpdrift/proxy/internal/jsonrpc"
)

// child is a stdio server the proxy started: the upstream of stdio → stdio.
// It runs in a tree of its own (proctree: a process group; a job object on
// Windows), so the proxy can signal and end whatever it starts in turn.
type child struct {
	cmd    *exec.Cmd
	tree   *proctree.Tree
	argv   []string
	stdin  *os.File   // the write end of the child's standard input
	stdout *os.File   // the read end of its standard output
	mu     sync.Mutex // one frame at a time into stdin
	buf    []byte
}

// startChild starts argv with its standard error passed through to stderr.
// The pipes are plain files, so waiting for the child never waits for the
// proxy's reads and writes.
func startChild(argv []string, stderr io.Writer) (*child, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, stderr
	t, err := proctree.Start(cmd)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	return &child{cmd: cmd, tree: t, argv: argv, stdin: inW, stdout: outR}, nil
}

func (c *child) Send(_ context.Context, frame []byte, _ jsonrpc.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(append(c.buf[:0], frame...), '\n')
	_, err := c.stdin.Write(c.buf)
	if cap(c.buf) > 1<<20 {
		c.buf = nil
	}
	return err
}

func (c *child) SendPiece(b []byte, last bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.stdin.Write(b); err != nil {
		return err
	}
	if last && (len(b) == 0 || b[len(b)-1] != '\n') {
		_, err := c.stdin.Write([]byte{'\n'})
		return err
	}
	return nil
}

func (c *child) Describe() string { return serverid.Stdio(c.argv) }

// closeInput closes the child's standard input: end of the session, as the
// MCP stdio transport spells it.
func (c *child) closeInput() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stdin.Close()
}

// wait waits for the child to exit, ends what it left running in its
// tree, and returns the exit code the proxy exits with: the child's own,
// or 128+signal when a signal ended it.
func (c *child) wait() int {
	err := c.tree.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 1
	}
	st := c.cmd.ProcessState
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}
