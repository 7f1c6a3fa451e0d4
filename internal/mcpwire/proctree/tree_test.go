//go:build linux || windows

package proctree_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/proctree"
)

// On Windows these tests need Windows, or Wine (docs/deploy.md says how
// they run there). The test binary is re-executed as the processes of a
// tree: role names which.
const role = "MCPDRIFT_PROCTREE_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(role) {
	case "server":
		os.Exit(server(false))
	case "stubborn":
		os.Exit(server(true))
	case "grandchild":
		ignoreStops()
	case "holder":
		os.Exit(holder())
	}
	os.Exit(m.Run())
}

// server starts a grandchild, prints its pid and echoes its input's lines
// until the input ends; then, unless stubborn, it exits, leaving the
// grandchild running. A stubborn server ignores the end of its input, and
// SIGTERM and Ctrl+Break.
func server(stubborn bool) int {
	g := exec.Command(os.Args[0])
	g.Env = append(os.Environ(), role+"=grandchild")
	if err := g.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Printf("%d\n", g.Process.Pid)
	if stubborn {
		signal.Ignore(syscall.SIGTERM, os.Interrupt)
	}
	_, _ = io.Copy(os.Stdout, os.Stdin)
	if stubborn {
		ignoreStops()
	}
	return 0
}

// ignoreStops blocks for good, ignoring SIGTERM, Ctrl+C and Ctrl+Break:
// only SIGKILL or the end of its job ends it.
func ignoreStops() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	for range sigs {
	}
}

// holder is a starter's stand-in (the probe's Collector, a proxy): it
// starts a stubborn server's tree, prints the server's and the
// grandchild's pids and waits to be killed.
func holder() int {
	os.Setenv(role, "stubborn")
	r, err := start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Printf("%d %d\n", r.cmd.Process.Pid, r.grandchild)
	ignoreStops()
	return 0
}

// root is a started server: its tree, its input and output, the
// grandchild it started, and Wait's answer once exited is closed.
type root struct {
	tree       *proctree.Tree
	cmd        *exec.Cmd
	in         *os.File
	out        *bufio.Reader
	grandchild int
	exited     chan struct{}
	err        error
}

// start starts the test binary as the root of a tree, in the role the
// environment names, and reads its grandchild's pid.
func start() (*root, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(os.Args[0])
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
	tree, err := proctree.Start(cmd)
	inR.Close()
	outW.Close()
	if err != nil {
		return nil, err
	}
	r := &root{tree: tree, cmd: cmd, in: inW, out: bufio.NewReader(outR), exited: make(chan struct{})}
	go func() {
		r.err = tree.Wait()
		close(r.exited)
	}()
	line, err := r.out.ReadString('\n')
	if r.grandchild, _ = strconv.Atoi(strings.TrimSpace(line)); err != nil || r.grandchild == 0 {
		r.end()
		return nil, fmt.Errorf("the server's first line %q: %v", line, err)
	}
	return r, nil
}

// end kills the tree and waits for Wait.
func (r *root) end() {
	r.tree.Signal(syscall.SIGKILL)
	<-r.exited
	r.in.Close()
}

// startRoot starts a root in role r, ended when the test ends.
func startRoot(t *testing.T, r string) *root {
	t.Helper()
	t.Setenv(role, r)
	rt, err := start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.end)
	return rt
}

// TestWaitEndsWhatTheRootLeft: a server that exits when its input ends
// leaves its own child running, until Wait ends the rest of its tree.
func TestWaitEndsWhatTheRootLeft(t *testing.T) {
	r := startRoot(t, "server")
	grandchild := watch(t, r.grandchild)
	if !running(grandchild) {
		t.Fatal("the grandchild is not running")
	}
	r.in.Close()
	if <-r.exited; r.err != nil {
		t.Errorf("the server exited with %v, want 0", r.err)
	}
	gone(t, grandchild, "the grandchild")
}

// TestStopEndsStubbornTree: a server that ignores the end of its input,
// SIGTERM and Ctrl+Break is ended, with its child, after the grace periods.
func TestStopEndsStubbornTree(t *testing.T) {
	r := startRoot(t, "stubborn")
	server, grandchild := watch(t, r.cmd.Process.Pid), watch(t, r.grandchild)
	r.in.Close()
	r.tree.Stop(50 * time.Millisecond)
	if !gone(t, server, "the server") {
		return
	}
	if <-r.exited; r.err == nil {
		t.Error("the stubborn server exited 0, want killed")
	}
	gone(t, grandchild, "the grandchild")
}

// TestTreeEndsWithStarter: a starter that is killed outright, with no
// chance to end anything, takes the server with it: on Linux the server
// alone (its parent-death signal), on Windows the whole tree (the job's
// last handle closes with the starter).
func TestTreeEndsWithStarter(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), role+"=holder")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var serverPID, grandchildPID int
	if _, err := fmt.Fscan(out, &serverPID, &grandchildPID); err != nil {
		t.Fatalf("the holder's pids: %v", err)
	}
	server, grandchild := watch(t, serverPID), watch(t, grandchildPID)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	gone(t, server, "the server")
	if grandchildDiesWithStarter {
		gone(t, grandchild, "the grandchild")
	} else {
		kill(t, grandchild)
	}
}

// TestSysProcAttrRefused: a command with attributes of its own cannot be
// started as a tree, which sets them.
func TestSysProcAttrRefused(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if _, err := proctree.Start(cmd); err == nil || cmd.Process != nil {
		t.Errorf("Start of a command with a SysProcAttr: %v, started %v", err, cmd.Process != nil)
	}
}

func running(p proc) bool { return !p.exited(0) }

// gone waits for the process's end (a generous bound, for a loaded
// machine); a process that outlives it is killed, so that a failing test
// leaves nothing running.
func gone(t *testing.T, p proc, what string) bool {
	t.Helper()
	if !p.exited(time.Minute) {
		t.Errorf("%s is still running", what)
		kill(t, p)
		return false
	}
	return true
}
