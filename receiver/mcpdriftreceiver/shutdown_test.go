package mcpdriftreceiver

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

// TestShutdownReapsHangingStdioServer: a stdio server that never answers is
// being probed when the collector shuts down; Shutdown returns (well before
// its deadline) and the child process is gone.
func TestShutdownReapsHangingStdioServer(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cfg := e2eConfig()
	cfg.Timeout = time.Minute
	cfg.Targets = []TargetConfig{{Name: "mute", Command: []string{"sh", "-c", "echo $$ > " + pidFile + "; exec sleep 600"}}}
	r, _, _ := runReceiver(t, cfg, newProber(cfg), &storageHost{})
	var pid int
	waitFor(t, "the child to start", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("shutdown waited for the probe timeout")
	}
	// The probe reaps its child; signal 0 fails once the process is gone.
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("stdio child %d still running after shutdown", pid)
	}
}
