package testservers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTB records what SkipLoudly asks of a test instead of ending it.
type fakeTB struct {
	testing.TB
	fatal, skipped string
}

func (f *fakeTB) Helper()                           {}
func (f *fakeTB) Name() string                      { return "TestNeedsATool" }
func (f *fakeTB) Fatalf(format string, args ...any) { f.fatal = fmt.Sprintf(format, args...) }
func (f *fakeTB) Skip(args ...any)                  { f.skipped = fmt.Sprint(args...) }

func TestSkipLoudly(t *testing.T) {
	for _, c := range []struct {
		ci   string
		fail bool
	}{{"", false}, {"false", false}, {"0", false}, {"true", true}, {"1", true}} {
		t.Run("CI="+c.ci, func(t *testing.T) {
			t.Setenv("CI", c.ci)
			skips := filepath.Join(t.TempDir(), "skips")
			t.Setenv(SkipsFileEnv, skips)
			f := &fakeTB{}
			SkipLoudly(f, "promtool is not installed")
			logged, _ := os.ReadFile(skips)
			if c.fail {
				if f.fatal == "" || f.skipped != "" || len(logged) != 0 {
					t.Errorf("under CI: fatal %q, skipped %q, logged %q; want a failure only", f.fatal, f.skipped, logged)
				}
				return
			}
			want := "dev/testkit/testservers TestNeedsATool: promtool is not installed\n"
			if f.fatal != "" || f.skipped == "" || string(logged) != want {
				t.Errorf("fatal %q, skipped %q, logged %q; want a skip logged as %q", f.fatal, f.skipped, logged, want)
			}
			if !strings.Contains(f.skipped, "promtool") {
				t.Errorf("skip message %q", f.skipped)
			}
		})
	}
}
