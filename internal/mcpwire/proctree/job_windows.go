package proctree

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// startAttr starts the root in a process group of its own, so that a
// console's Ctrl+C is its starter's to relay (as Ctrl+Break, which a group
// can be sent), and suspended, so that nothing it starts runs before it is
// in its job (adopt).
func startAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_SUSPENDED}
}

// sysTree is a job object that every process the root starts joins too,
// which Windows ends as a whole when the job's last handle closes. Only
// the starter holds that handle, so a starter that dies, however it dies,
// takes the tree with it: what the parent-death signal and the process
// group do on Linux.
type sysTree struct {
	mu  sync.Mutex
	job windows.Handle // 0 once the tree is ended
}

// adopt puts the started, suspended root in a new job object and lets it
// run. On failure the root is left suspended for Start to kill.
func (s *sysTree) adopt(root *os.Process) error {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return fmt.Errorf("job object: %w", err)
	}
	limits := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	limits.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&limits)), uint32(unsafe.Sizeof(limits))); err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("job object limits: %w", err)
	}
	pid := uint32(root.Pid)
	if err := assign(job, pid); err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("job object: adding process %d: %w", pid, err)
	}
	s.job = job
	if err := resume(pid); err != nil {
		s.end()
		return fmt.Errorf("resuming process %d: %w", pid, err)
	}
	return nil
}

// assign adds process pid to job. The pid cannot name another process:
// cmd holds the root's handle and it has not run yet.
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

// end terminates every process of the job and closes it.
func (s *sysTree) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.job == 0 {
		return
	}
	_ = windows.TerminateJobObject(s.job, 1) // 1: what os.Process.Kill exits a process with
	windows.CloseHandle(s.job)
	s.job = 0
}

// signal stands in for sig (see Signal): SIGKILL ends the tree; any other
// is a Ctrl+Break to the root's process group, or ends the tree when there
// is no console to deliver it on.
func (s *sysTree) signal(root *os.Process, sig syscall.Signal) {
	if sig != syscall.SIGKILL && windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(root.Pid)) == nil {
		return
	}
	s.end()
}
