//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// built returns the path of a binary `make e2e` builds (rel to the
// repository root), failing the test when it is missing.
func built(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(testservers.RepoRoot(), rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s not built: run `make e2e` (it builds the distributions and the demo binaries)", rel)
	}
	return p
}

// waitUntil polls cond until it holds, failing the test after timeout or
// when ctx ends; cond's second result says what it saw, for the failure.
func waitUntil(t testing.TB, ctx context.Context, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, last)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// dumpLogsOnFailure prints the tail of every process log under dir (and its
// subdirectories) when the test has failed.
func dumpLogsOnFailure(t testing.TB, dir string) {
	if !t.Failed() {
		return
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	more, _ := filepath.Glob(filepath.Join(dir, "*", "*.log"))
	for _, l := range append(logs, more...) {
		data, _ := os.ReadFile(l)
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		t.Logf("--- %s (tail)\n%s", l, data)
	}
}
