package procs

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Stop ends the whole process group: a child the process started (here a
// shell's background sleep) goes too, and even a process that ignores
// SIGTERM is killed after the grace period.
func TestStopEndsTheGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	p, err := Start("sh", "/bin/sh", []string{"-c", `trap "" TERM; sleep 300 & echo $! > ` + pidFile + `; wait`}, nil, filepath.Join(dir, "sh.log"))
	if err != nil {
		t.Fatal(err)
	}
	var child int
	for child == 0 {
		b, _ := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		select {
		case <-p.Exited():
			t.Fatal("shell exited early")
		case <-time.After(10 * time.Millisecond):
		}
	}
	p.Stop(200 * time.Millisecond)
	select {
	case <-p.Exited():
	default:
		t.Fatal("Stop returned before the process exited")
	}
	// The child was reparented when the shell died; it must be gone, not
	// merely orphaned. Signal 0 reports whether it still exists (a zombie
	// awaiting its new parent counts as gone once reaped; allow for that).
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(child, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("child %d still running after Stop", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Stop(time.Second) // a second Stop is harmless
}

// Waiting for an endpoint of a process that exits returns as soon as it
// exits, naming it.
func TestWaitHTTPReturnsWhenTheProcessExits(t *testing.T) {
	dir := t.TempDir()
	p, err := Start("quitter", "/bin/sh", []string{"-c", "exit 3"}, nil, filepath.Join(dir, "q.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	ports, err := FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	err = p.WaitHTTP(context.Background(), "http://127.0.0.1:"+strconv.Itoa(ports[0])+"/", time.Hour, StatusOK)
	if err == nil || !strings.Contains(err.Error(), "quitter exited") {
		t.Fatalf("WaitHTTP: %v", err)
	}
}

func TestStartWithoutBinary(t *testing.T) {
	if _, err := Start("nothing", "", nil, nil, filepath.Join(t.TempDir(), "x.log")); err == nil {
		t.Fatal("no error")
	}
}

// CPUTime reads the process's own CPU time: a busy loop's grows from zero.
func TestCPUTime(t *testing.T) {
	dir := t.TempDir()
	p, err := Start("busy", "/bin/sh", []string{"-c", "while :; do :; done"}, nil, filepath.Join(dir, "busy.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for {
		cpu, err := p.CPUTime()
		if err != nil {
			t.Fatal(err)
		}
		if cpu >= 50*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU time still %s after 30 s of a busy loop", cpu)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Stop(time.Second)
	if _, err := p.CPUTime(); err == nil {
		t.Error("CPUTime of an exited process: no error")
	}
}
