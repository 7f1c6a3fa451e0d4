package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// openPTY returns a pseudo-terminal: what is written to master is read
// from tty, which is a terminal to the command as a user's would be.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		testservers.SkipLoudly(t, "no /dev/ptmx, so approve's question on a terminal was not tested: "+err.Error())
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// approveOnTTY runs approve with a terminal for standard input on which
// the user types answer.
func approveOnTTY(t *testing.T, answer string, args ...string) (int, string, string) {
	t.Helper()
	master, tty := openPTY(t)
	if _, err := master.WriteString(answer + "\n"); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run(append([]string{"approve"}, args...), tty, &out, &errOut)
	return code, out.String(), errOut.String()
}

func readSnapshot(t *testing.T, path string) *contract.Snapshot {
	t.Helper()
	s, err := contract.DecodeSnapshot(readBytes(t, path))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The approve-once flow against the real npm server-everything: a first
// approval creates the lock with every tool shown as added; the next
// release's changes are printed and written only once approved on the
// terminal (or with --yes); without a terminal nothing is written.
func TestApproveReleases(t *testing.T) {
	t.Parallel()
	node := testservers.Node(t)
	v1 := testservers.Everything(t, "2025.9.25")
	v2 := testservers.Everything(t, "2025.11.25")
	lock := filepath.Join(t.TempDir(), "mcp.lock.json")
	// A --timeout longer than the default 30 s, which bounds node's
	// start-up (not what is tested), as in TestCheckReleaseGate.
	server := func(entry string) []string { return []string{"--timeout", "5m", "--stdio", "--", node, entry, "stdio"} }

	args := append([]string{"approve", "--lock", lock, "--yes", "--name", "everything"}, server(v1)...)
	code, out, errOut := cli(t, "", args...)
	if code != exitOK || !strings.Contains(out, "no lock at "+lock+" yet") || !strings.Contains(errOut, "approved: wrote "+lock) {
		t.Fatalf("first approval: exit %d\n%s%s", code, out, errOut)
	}
	first := readSnapshot(t, lock)
	if first.Server.Name != "everything" || len(first.Tools) == 0 {
		t.Fatalf("lock: %+v, %d tools", first.Server, len(first.Tools))
	}
	if n := strings.Count(out, "tool.added"); n != len(first.Tools) {
		t.Errorf("%d tools shown as added, the lock has %d:\n%s", n, len(first.Tools), out)
	}

	// Same release: nothing to approve, no question even without a terminal.
	code, _, errOut = cli(t, "", append([]string{"approve", "--lock", lock}, server(v1)...)...)
	if code != exitOK || !strings.Contains(errOut, "is up to date") {
		t.Fatalf("same release: exit %d\n%s", code, errOut)
	}

	// The next release, with no terminal and no --yes: the changes are
	// printed, the lock is not written.
	before := readBytes(t, lock)
	code, out, errOut = cli(t, "", append([]string{"approve", "--lock", lock}, server(v2)...)...)
	if code != exitUsage || !strings.Contains(out, "startElicitation") || !strings.Contains(errOut, "standard input is not a terminal") {
		t.Fatalf("no terminal: exit %d\n%s%s", code, out, errOut)
	}
	if !bytes.Equal(readBytes(t, lock), before) {
		t.Fatal("the lock was written without approval")
	}

	// On a terminal, declined, then approved.
	code, _, errOut = approveOnTTY(t, "n", append([]string{"--lock", lock}, server(v2)...)...)
	if code != exitDrift || !strings.Contains(errOut, "Approve this contract and write "+lock+"? [y/N]") || !strings.Contains(errOut, "not approved") {
		t.Fatalf("declined: exit %d\n%s", code, errOut)
	}
	if !bytes.Equal(readBytes(t, lock), before) {
		t.Fatal("the lock was written though the user declined")
	}
	code, out, errOut = approveOnTTY(t, "y", append([]string{"--lock", lock, "--format", "json"}, server(v2)...)...)
	if code != exitOK || !strings.Contains(out, `"rule":"tool.added"`) || !strings.Contains(errOut, "approved: wrote") {
		t.Fatalf("approved: exit %d\n%s%s", code, out, errOut)
	}
	second := readSnapshot(t, lock)
	if second.Server.Name != "everything" || second.Digests.Contract == first.Digests.Contract {
		t.Errorf("the lock after approval: %+v %s", second.Server, second.Digests.Contract)
	}
	// The approved lock is what check --lock reads: no drift left.
	if code, out, _ := cli(t, "", append([]string{"check", "--lock", lock, "--fail-on", "info"}, server(v2)...)...); code != exitOK {
		t.Errorf("check against the approved lock: exit %d\n%s", code, out)
	}
}

func TestApproveUsage(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.json", `{"schema_version":"mcpdrift.snapshot/v9"}`)
	for _, args := range [][]string{
		{"approve", "--url", "http://127.0.0.1:1/mcp"}, // no --lock
		{"approve", "--lock", bad},                     // no target
		{"approve", "--lock", bad, "--fail-on", "breaking", "--url", "http://x/mcp"},
	} {
		if code, _, errOut := cli(t, "", args...); code != exitUsage || errOut == "" {
			t.Errorf("%v: exit %d %q", args, code, errOut)
		}
	}
	if code, _, errOut := cli(t, "", "approve", "--lock", bad, "--url", "http://127.0.0.1:1/mcp"); code != exitInput || errOut == "" {
		t.Errorf("unreadable lock: exit %d %q", code, errOut)
	}
	lock := filepath.Join(dir, "new.json")
	if code, _, errOut := cli(t, "", "approve", "--lock", lock, "--yes", "--timeout", "2s", "--url", "http://127.0.0.1:1/mcp"); code != exitProbe || !strings.Contains(errOut, "unreachable") {
		t.Errorf("unreachable server: exit %d %s", code, errOut)
	}
	if _, err := os.Stat(lock); err == nil {
		t.Error("a failed probe must not write the lock")
	}
}
