package testservers

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// SpawnSelf re-runs the test binary with env key=n, for a test package whose
// init (or TestMain) serves n servers when it sees key, prints one URL per
// line and exits when its stdin closes. Benchmarks run servers this way so
// that their own process's CPU time and allocations are the client's alone.
func SpawnSelf(tb testing.TB, key string, n int) []string {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", key, n))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	var urls []string
	sc := bufio.NewScanner(stdout)
	for len(urls) < n && sc.Scan() {
		urls = append(urls, sc.Text())
	}
	if len(urls) < n {
		tb.Fatalf("the server process printed %d URLs, want %d", len(urls), n)
	}
	return urls
}
