package testservers

import (
	"os"
	"os/exec"
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
	if got := Marked(kv); len(got) != 2 {
		t.Errorf("marked processes %q, want the shell and its sleep", got)
	}
	marked.Process.Kill() // the sleep is orphaned, still marked
	_ = marked.Wait()
	if got := Marked(kv); len(got) != 1 || got[0] != strconv.Itoa(grandchild)+" (sleep)" {
		t.Errorf("after the parent died: %q, want the orphaned sleep %d", got, grandchild)
	}
	p, _ := os.FindProcess(grandchild)
	_ = p.Kill()
	deadline := time.Now().Add(30 * time.Second)
	for len(Marked(kv)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("still marked after it was killed: %q", Marked(kv))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
