package testservers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SkipsFileEnv names the file SkipLoudly appends a line to for every skip;
// `make test` sets it and prints what was skipped once every module ran
// (go test shows nothing of a package that passed).
const SkipsFileEnv = "MCPDRIFT_SKIPS_FILE"

// SkipLoudly is the one way a test skips for want of a tool (node and npm,
// promtool, Prometheus, Jaeger, a built distribution, a toolchain): it
// writes a banner on stderr and a line to $MCPDRIFT_SKIPS_FILE, then skips.
// Under CI it fails instead: CI installs every tool (.ci/run), so a missing
// one means the check did not run, which must not pass as green.
func SkipLoudly(t testing.TB, why string) {
	t.Helper()
	where := t.Name()
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(RepoRoot(), wd); err == nil && !strings.HasPrefix(rel, "..") {
			where = rel + " " + where
		}
	}
	if InCI() {
		t.Fatalf("%s: %s; CI=%s, so this is a failure, not a skip (.ci/run installs what the tests need)", where, why, os.Getenv("CI"))
		return
	}
	fmt.Fprintf(os.Stderr, "\n**********\n* SKIPPING %s: %s.\n**********\n", where, why)
	if path := os.Getenv(SkipsFileEnv); path != "" {
		if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(f, "%s: %s\n", where, why)
			f.Close()
		}
	}
	t.Skip(why)
}

// InCI reports whether the tests run under CI: CI set to anything but
// "", "0" or "false" (CI systems set CI=true; .ci/run sets it too).
func InCI() bool {
	switch strings.ToLower(os.Getenv("CI")) {
	case "", "0", "false":
		return false
	}
	return true
}
