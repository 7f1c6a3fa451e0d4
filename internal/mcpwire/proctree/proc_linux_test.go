package proctree_test

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Only the root gets the parent-death signal: its children see their input
// end, or run on.
const grandchildDiesWithStarter = false

// proc is a pidfd of a process, opened while it runs: it names that process
// and no other (its pid may be reused once it is reaped), and polls
// readable once it has exited.
type proc int

func watch(t *testing.T, pid int) proc {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("process %d: %v", pid, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return proc(fd)
}

// exited waits up to d for the process to exit.
func (p proc) exited(d time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(p), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(d.Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		return n == 1
	}
}

func kill(t *testing.T, p proc) {
	if err := unix.PidfdSendSignal(int(p), unix.SIGKILL, nil, 0); err != nil && err != unix.ESRCH {
		t.Error(err)
	}
}
