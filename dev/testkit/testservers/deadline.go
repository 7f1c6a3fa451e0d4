package testservers

import (
	"testing"
	"time"
)

// reportMargin is the part of a test's time (-timeout) that WaitDeadline
// leaves for reporting a wait that never ended, and cleaning up.
const reportMargin = time.Minute

// WaitDeadline is when a test's wait for something whose pace depends on
// the machine (a server starting, a page rendering, a probe of a real
// server) gives up: reportMargin before the test's deadline; false when the
// test has none (-timeout 0). Fixed bounds such waits had (30 s, 60 s)
// failed under load, where a niced test beside other work on two cores ran
// many times slower; how long the wait takes depends on the machine,
// whether it ends does not.
func WaitDeadline(t testing.TB) (time.Time, bool) {
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dt.Deadline(); ok {
			return d.Add(-reportMargin), true
		}
	}
	return time.Time{}, false
}
