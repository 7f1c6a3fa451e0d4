package probe

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// A Collector killed outright (SIGKILL: no chance to stop its probes) takes
// the stdio servers it was probing with it, even one that ignores the end
// of its input and SIGTERM: the kernel's parent-death signal.
func TestStdioServerDiesWithProber(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	prober := exec.Command(os.Args[0], "-test.run=^$")
	prober.Env = append(os.Environ(), proberEnv+"="+pidFile)
	prober.Stderr = os.Stderr
	if err := prober.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = prober.Process.Kill(); _ = prober.Wait() }()
	server := waitPID(t, pidFile)
	if err := prober.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = prober.Wait()
	if !waitKilled(server) {
		t.Errorf("the server %d outlived the prober", server)
		_ = syscall.Kill(server, syscall.SIGKILL)
	}
}
