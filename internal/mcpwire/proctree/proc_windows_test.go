package proctree_test

import (
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// The job's last handle closes with the starter: all of the tree goes.
const grandchildDiesWithStarter = true

// proc is a handle to a process for waiting on its end, opened while it
// runs so that its pid cannot be reused for another meanwhile.
type proc windows.Handle

func watch(t *testing.T, pid int) proc {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		t.Fatalf("process %d: %v", pid, err)
	}
	t.Cleanup(func() { windows.CloseHandle(h) })
	return proc(h)
}

// exited waits up to d for the process to exit.
func (p proc) exited(d time.Duration) bool {
	ev, _ := windows.WaitForSingleObject(windows.Handle(p), uint32(d.Milliseconds()))
	return ev == windows.WAIT_OBJECT_0
}

func kill(t *testing.T, p proc) {
	if err := windows.TerminateProcess(windows.Handle(p), 1); err != nil {
		t.Error(err)
	}
}
