package stdio

import (
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// childAttr starts the server in a process group of its own, so that a
// console's Ctrl+C is the proxy's to relay (as Ctrl+Break, which a group
// can be sent), and suspended, so that nothing it starts runs before it is
// in its job (adopt).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_SUSPENDED}
}

// tree is the child and what it starts: a job object that every process
// it starts joins too (npx → cmd → node), which Windows ends as a whole
// when the job's last handle closes. Only the proxy holds that handle, so
// a proxy that dies, however it dies, takes the tree with it: what
// Pdeathsig and the process group do on Linux.
type tree struct {
	mu  sync.Mutex
	job windows.Handle // 0 once the tree is ended
}

// adopt puts the started, suspended child in a new job object and lets it
// run. On failure the child is left suspended for the caller to kill.
func adopt(cmd *exec.Cmd) (*tree, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("job object: %w", err)
	}
	limits := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	limits.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&limits)), uint32(unsafe.Sizeof(limits))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("job object limits: %w", err)
	}
	pid := uint32(cmd.Process.Pid)
	if err := assign(job, pid); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("job object: adding process %d: %w", pid, err)
	}
	t := &tree{job: job}
	if err := resume(pid); err != nil {
		t.end()
		return nil, fmt.Errorf("resuming process %d: %w", pid, err)
	}
	return t, nil
}

// assign adds process pid to job. The pid cannot name another process:
// cmd holds the child's handle and it has not run yet.
func assign(job windows.Handle, pid uint32) error {
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(p)
	return windows.AssignProcessToJobObject(job, p)
}

// resume starts the threads of suspended process pid (CREATE_SUSPENDED
// leaves its one thread suspended; os/exec keeps no handle to it).
func resume(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return err
		}
		resumed++
	}
	if resumed == 0 {
		return fmt.Errorf("no thread found")
	}
	return nil
}

// end terminates every process of the tree and closes the job.
func (t *tree) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.job == 0 {
		return
	}
	_ = windows.TerminateJobObject(t.job, 1) // 1: what os.Process.Kill exits a process with
	windows.CloseHandle(t.job)
	t.job = 0
}

// signal stands in for sig, which Windows cannot send: SIGKILL ends the
// whole tree; any other (the proxy's SIGTERM after the grace period, a
// Ctrl+C or close the proxy relays) is a Ctrl+Break to the child's process
// group, a console program's way to be asked to stop, and ends the tree
// when there is no console to deliver it on.
func (c *child) signal(sig syscall.Signal) {
	if sig != syscall.SIGKILL && windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(c.cmd.Process.Pid)) == nil {
		return
	}
	c.tree.end()
}
