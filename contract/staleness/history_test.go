package staleness_test

import (
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract/staleness"
)

// at is a time t seconds into a test's history.
func at(t int) time.Time { return time.Unix(1_700_000_000+int64(t), 0).UTC() }

func run(digest string, first, last int) staleness.Version {
	v := staleness.Version{Digest: digest, First: at(first)}
	if last >= 0 {
		v.Last = at(last)
	}
	return v
}

func TestJudgeDigest(t *testing.T) {
	v1v2 := staleness.History{run("v1", 0, 10), run("v2", 20, 30)}
	back := staleness.History{run("v1", 0, 10), run("v2", 20, 30), run("v1", 40, 50)}
	twice := staleness.History{run("v1", 0, 10), run("v2", 20, 30), run("v3", 40, 50)}
	begins := staleness.History{run("v1", 0, -1), run("v2", 20, -1)} // only when runs began
	removed := staleness.History{run("v1", 0, 10), run("", 20, 30)}
	for _, c := range []struct {
		name    string
		planned string
		h       staleness.History
		at      int
		state   staleness.State
		current string
	}{
		{"no planned digest", "", v1v2, 25, staleness.Unknown, ""},
		{"tool never seen", "v1", nil, 25, staleness.Ahead, ""},
		{"one run, same digest", "v1", staleness.History{run("v1", 0, 10)}, 5, staleness.Current, "v1"},
		{"one run, unseen digest", "vX", staleness.History{run("v1", 0, 10)}, 15, staleness.Ahead, "v1"},

		{"after a change, old digest", "v1", v1v2, 25, staleness.Stale, "v2"},
		{"after a change, new digest", "v2", v1v2, 25, staleness.Current, "v2"},
		{"after the last probe, old digest", "v1", v1v2, 90, staleness.Stale, "v2"},
		{"after the last probe, unseen digest", "v3", v1v2, 90, staleness.Ahead, "v2"},
		{"change window, old digest", "v1", v1v2, 15, staleness.Unknown, ""},
		{"change window, new digest (listed before the probe saw it)", "v2", v1v2, 15, staleness.Current, "v2"},
		{"change window, unseen digest", "vX", v1v2, 15, staleness.Unknown, ""},
		{"before the change, new digest", "v2", v1v2, 5, staleness.Unknown, "v1"},
		{"before the first probe, first digest", "v1", v1v2, -5, staleness.Current, "v1"},
		{"before the first probe, later digest", "v2", v1v2, -5, staleness.Unknown, ""},

		{"changed back: v1 while v2 was served", "v1", back, 25, staleness.Stale, "v2"},
		{"changed back: v2 after the return", "v2", back, 45, staleness.Stale, "v1"},
		{"changed back: v1 after the return", "v1", back, 45, staleness.Current, "v1"},
		{"changed back: window before the return, v1", "v1", back, 35, staleness.Unknown, ""},
		{"changed back: window before the return, v2", "v2", back, 35, staleness.Unknown, ""},

		{"two changes: planned on v1", "v1", twice, 45, staleness.Stale, "v3"},
		{"two changes: planned on v2", "v2", twice, 45, staleness.Stale, "v3"},
		{"two changes: on v3", "v3", twice, 45, staleness.Current, "v3"},
		{"two changes: window v2→v3, planned on v1", "v1", twice, 35, staleness.Stale, ""},
		{"two changes: window v2→v3, planned on v2", "v2", twice, 35, staleness.Unknown, ""},
		{"two changes: window v2→v3, planned on v3", "v3", twice, 35, staleness.Current, "v3"},

		{"begins only: new digest before the change was seen", "v2", begins, 15, staleness.Current, "v2"},
		{"begins only: old digest after", "v1", begins, 25, staleness.Stale, "v2"},
		{"begins only: old digest before", "v1", begins, 15, staleness.Current, "v1"},

		{"tool removed", "v1", removed, 25, staleness.Stale, ""},
		{"unsorted history", "v1", staleness.History{run("v2", 20, 30), run("v1", 0, 10)}, 25, staleness.Stale, "v2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := staleness.JudgeDigest(c.planned, c.h, at(c.at))
			if v.State != c.state || v.Current != c.current {
				t.Fatalf("got %s (current %q), want %s (current %q)", v.State, v.Current, c.state, c.current)
			}
			want := staleness.BasisDigest
			if c.state == staleness.Unknown {
				want = staleness.BasisNone
			}
			if v.Basis != want || v.Witness != nil || v.Planned != c.planned {
				t.Fatalf("basis %s planned %q witness %v", v.Basis, v.Planned, v.Witness)
			}
		})
	}
}
