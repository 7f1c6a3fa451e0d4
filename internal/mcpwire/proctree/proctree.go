// Package proctree starts a command as the root of a process tree that its
// caller owns: whatever the command starts in turn (npx → sh → node) is
// signalled and ended with it, and none of it outlives the caller's Wait.
// The probe and mcpdrift proxy start stdio servers through it.
//
// On unix the tree is a process group of the root's own; on Linux the root
// also dies with the process that started it (the kernel's parent-death
// signal), so a starter killed outright leaves no server running. On
// Windows it is a job object that every process the root starts joins,
// killed when its last handle closes, which only the starter holds.
package proctree

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// Tree is a started command and what it starts.
type Tree struct {
	cmd     *exec.Cmd
	sys     sysTree       // the group or the job
	release func()        // what Start holds for the root until it is reaped
	done    chan struct{} // closed when Wait has reaped the root and ended the rest
}

// Start starts cmd as the root of a tree. The tree sets cmd.SysProcAttr,
// which must be nil; the rest of cmd (its pipes, directory and
// environment) is the caller's. Call Wait to reap it.
func Start(cmd *exec.Cmd) (*Tree, error) {
	if cmd.SysProcAttr != nil {
		return nil, errors.New("proctree: the command has a SysProcAttr; the tree sets its own")
	}
	cmd.SysProcAttr = startAttr()
	release, err := start(cmd)
	if err != nil {
		return nil, err
	}
	t := &Tree{cmd: cmd, release: release, done: make(chan struct{})}
	if err := t.sys.adopt(cmd.Process); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		release()
		return nil, err
	}
	return t, nil
}

// Wait waits for the root to exit, then kills what it left running in the
// tree (its children outlive it otherwise, and may hold its pipes open),
// and returns cmd.Wait's error. Call it once.
func (t *Tree) Wait() error {
	err := t.cmd.Wait()
	t.sys.signal(t.cmd.Process, syscall.SIGKILL)
	t.release()
	close(t.done)
	return err
}

// Signal sends sig to every process of the tree, until Wait has returned.
// Windows has no signals to send: SIGKILL ends the tree, and any other is
// a Ctrl+Break to the root's process group, a console program's way to be
// asked to stop, or ends the tree when there is no console to send it on.
func (t *Tree) Signal(sig syscall.Signal) {
	select {
	case <-t.done: // the group may be gone and its id reused
	default:
		t.sys.signal(t.cmd.Process, sig)
	}
}

// Stop ends the tree after its root was asked to exit (its input closed,
// as the MCP stdio transport ends a session): grace to exit on its own,
// then SIGTERM, grace again, then SIGKILL. It returns once Wait, which must
// be running, has reaped the root.
func (t *Tree) Stop(grace time.Duration) {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case <-t.done:
			return
		case <-timer.C:
			t.Signal(sig)
			timer.Reset(grace)
		}
	}
	<-t.done // SIGKILL cannot be ignored
}
