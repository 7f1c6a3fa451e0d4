package proctree_test

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestRootOutlivesStartingThread: a tree started from a goroutine locked
// to its thread, which ends with the goroutine, keeps its root: the
// parent-death signal fires when the thread that started a child ends, so
// roots are started from a thread of the package's own.
func TestRootOutlivesStartingThread(t *testing.T) {
	t.Setenv(role, "server")
	var r *root
	for attempt := 0; r == nil; attempt++ {
		type started struct {
			r      *root
			tid    int
			err    error
			onMain bool
		}
		ch := make(chan started, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			tid := syscall.Gettid()
			if tid == os.Getpid() { // Go parks the main thread instead of ending it
				ch <- started{onMain: true}
				return
			}
			r, err := start()
			ch <- started{r, tid, err, false}
		}()
		s := <-ch
		if s.onMain && attempt < 10 {
			continue
		}
		if s.err != nil || s.onMain {
			t.Fatalf("starting the tree: %v (on the main thread: %v)", s.err, s.onMain)
		}
		r = s.r
		t.Cleanup(r.end)
		threadEnded(t, s.tid)
	}
	if _, err := r.in.WriteString("still there?\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := r.out.ReadString('\n'); line != "still there?\n" {
		t.Errorf("the server answered %q (%v): it died with the thread that started it", line, err)
	}
}

// threadEnded waits for thread tid of this process to end.
func threadEnded(t *testing.T, tid int) {
	task := "/proc/self/task/" + strconv.Itoa(tid)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(time.Minute); ; <-tick.C {
		if _, err := os.Stat(task); errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %d did not end with its locked goroutine", tid)
		}
	}
}
