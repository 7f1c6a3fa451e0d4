package testservers

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestMarked: a process started with the mark is found until it is gone,
// also as a grandchild in a group of its own; an unmarked one never is.
func TestMarked(t *testing.T) {
	kv := markEnv + "=marked-" + strconv.Itoa(os.Getpid())
	marked := exec.Command("sh", "-c", "sleep 300 & echo $!; wait")
	marked.Env = append(os.Environ(), kv)
	out, err := marked.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	plain := exec.Command("sleep", "300")
	for _, c := range []*exec.Cmd{marked, plain} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	defer plain.Process.Kill()
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	grandchild, _ := strconv.Atoi(string(buf[:n-1]))
	// The shell prints the sleep's pid as soon as it forked it: until the
	// child has exec'd, it is another "sh" (or, mid-exec, unreadable).
	sleep := strconv.Itoa(grandchild) + " (sleep)"
	waitMarked(t, kv, "the shell and its sleep", func(got []string) bool { return len(got) == 2 && slices.Contains(got, sleep) })
	marked.Process.Kill() // the sleep is orphaned, still marked
	_ = marked.Wait()
	waitMarked(t, kv, "the orphaned sleep after the parent died", func(got []string) bool { return len(got) == 1 && got[0] == sleep })
	p, _ := os.FindProcess(grandchild)
	_ = p.Kill()
	waitMarked(t, kv, "nothing after the sleep was killed", func(got []string) bool { return len(got) == 0 })
}

// waitMarked waits (at most 30 s) until the marked processes are as ok says.
func waitMarked(t *testing.T, kv, want string, ok func([]string) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for got := Marked(kv); !ok(got); got = Marked(kv) {
		if time.Now().After(deadline) {
			t.Fatalf("marked processes %q, want %s", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
