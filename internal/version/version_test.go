package version

import (
	"testing"
)

func TestReleaseCommitWins(t *testing.T) {
	defer func(c string) { releaseCommit = c }(releaseCommit)
	releaseCommit = "0123456789abcdef0123456789abcdef01234567\n"
	if got := Commit(); got != "0123456789abcdef0123456789abcdef01234567" {
		t.Errorf("Commit() = %q, want the release commit", got)
	}
}

func TestLinkerFlagsWin(t *testing.T) {
	defer func(v, c, r string) { version, commit, releaseCommit = v, c, r }(version, commit, releaseCommit)
	version, commit, releaseCommit = "v9.9.9", "feedface", "0123"
	if Version() != "v9.9.9" || Commit() != "feedface" {
		t.Errorf("Version(), Commit() = %q, %q; want the -X values", Version(), Commit())
	}
}

func TestDevelopmentBuild(t *testing.T) {
	// A test binary records no module version; no release commit either,
	// as on the development branch.
	defer func(r string) { releaseCommit = r }(releaseCommit)
	releaseCommit = ""
	if got := Version(); got != "(devel)" {
		t.Errorf("Version() = %q, want (devel)", got)
	}
	if got := Commit(); got == "" {
		t.Error("Commit() is empty")
	}
}
