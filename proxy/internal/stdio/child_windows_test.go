package stdio

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

	"golang.org/x/sys/windows"
)

// These tests need Windows, or Wine (docs/deploy.md says how they run
// there). The test binary is re-executed as the processes of a tree: role
// names which.
const role = "MCPDRIFT_STDIO_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(role) {
	case "server":
		os.Exit(server(false))
	case "stubborn":
		os.Exit(server(true))
	case "grandchild":
		ignoreBreaks()
	case "holder":
		os.Exit(holder())
	}
	os.Exit(m.Run())
}

// server starts a grandchild, prints its pid and then, unless stubborn,
// exits when its input ends, leaving the grandchild running; a stubborn
// server ignores the end of its input and Ctrl+Break.
func server(stubborn bool) int {
	g := exec.Command(os.Args[0])
	g.Env = append(os.Environ(), role+"=grandchild")
	if err := g.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Printf("%d\n", g.Process.Pid)
	if stubborn {
		ignoreBreaks()
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// ignoreBreaks blocks for good, ignoring Ctrl+C and Ctrl+Break: only the
// end of its job ends it.
func ignoreBreaks() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	for range sigs {
	}
}

// holder is a proxy's stand-in: it starts a stubborn server's tree,
// prints the server's and the grandchild's pids and waits to be killed.
func holder() int {
	os.Setenv(role, "stubborn")
	c, err := startChild([]string{os.Args[0]}, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	line, err := bufio.NewReader(c.stdout).ReadString('\n')
	if err != nil {
		return 2
	}
	fmt.Printf("%d %s", c.cmd.Process.Pid, line)
	ignoreBreaks()
	return 0
}

// process is a handle to process pid for waiting on its end, opened while
// it runs so that its pid cannot be reused for another meanwhile.
func process(t *testing.T, pid int) windows.Handle {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		t.Fatalf("process %d: %v", pid, err)
	}
	t.Cleanup(func() { windows.CloseHandle(h) })
	return h
}

// running says whether the process is still running; gone waits for its
// end (a generous bound, for a loaded machine).
func running(h windows.Handle) bool {
	ev, _ := windows.WaitForSingleObject(h, 0)
	return ev == uint32(windows.WAIT_TIMEOUT)
}

func gone(t *testing.T, h windows.Handle, what string) bool {
	t.Helper()
	if ev, err := windows.WaitForSingleObject(h, 60_000); ev != windows.WAIT_OBJECT_0 {
		t.Errorf("%s is still running (%d, %v)", what, ev, err)
		return false
	}
	return true
}

// startServer starts the test binary as a server in the given role and
// returns it with a handle to its grandchild.
func startServer(t *testing.T, r string) (*child, windows.Handle) {
	t.Setenv(role, r)
	c, err := startChild([]string{os.Args[0]}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.signal(syscall.SIGKILL) })
	line, err := bufio.NewReader(c.stdout).ReadString('\n')
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid == 0 {
		t.Fatalf("the server's first line %q: %v", line, err)
	}
	return c, process(t, pid)
}

// TestTreeOutlivesServerUntilEnded: a server that exits when its input
// ends leaves its own child running (Windows has no process groups to
// signal) until the proxy ends the tree, as Run does after the server's
// exit.
func TestTreeOutlivesServerUntilEnded(t *testing.T) {
	c, grandchild := startServer(t, "server")
	c.closeInput()
	if code := c.wait(); code != 0 {
		t.Errorf("the server exited %d, want 0", code)
	}
	if !running(grandchild) {
		t.Fatal("the grandchild ended with the server: nothing left to test")
	}
	c.signal(syscall.SIGKILL)
	gone(t, grandchild, "the grandchild")
}

// TestStopEndsStubbornTree: a server that ignores the end of its input and
// Ctrl+Break is ended, with its child, after the grace periods.
func TestStopEndsStubbornTree(t *testing.T) {
	c, grandchild := startServer(t, "stubborn")
	server := process(t, c.cmd.Process.Pid)
	c.closeInput()
	code := make(chan int, 1)
	go func() { code <- c.wait() }()
	c.stop(50 * time.Millisecond)
	if !gone(t, server, "the server") {
		return
	}
	if got := <-code; got != 1 {
		t.Errorf("the server exited %d, want 1 (terminated)", got)
	}
	gone(t, grandchild, "the grandchild")
}

// TestTreeEndsWithProxy: a proxy that is killed outright, with no chance
// to end anything, takes the server and its child with it: the job's last
// handle closes with the proxy.
func TestTreeEndsWithProxy(t *testing.T) {
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
	var server, grandchild int
	if _, err := fmt.Fscan(out, &server, &grandchild); err != nil {
		t.Fatalf("the holder's pids: %v", err)
	}
	hs, hg := process(t, server), process(t, grandchild)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	gone(t, hs, "the server")
	gone(t, hg, "the grandchild")
}
