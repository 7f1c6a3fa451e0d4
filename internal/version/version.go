// Package version says which release and commit a binary was built from, for
// `mcpdrift version` and the SARIF report's tool version.
package version

import (
	_ "embed"
	"runtime/debug"
	"strings"
)

// Set with -ldflags -X by make build and make dist; empty in a `go install`
// or `go build` of a module, which fall back to what Go records.
var (
	version string
	commit  string
)

// releaseCommit is empty on the development branch. The release tool
// (dev/release) writes into it the commit a release was cut from, so
// that `go install …@vX`, whose build records no VCS information, still
// names it.
//
//go:embed release_commit.txt
var releaseCommit string

// Version is the release ("v0.1.0"), "(devel)" for a build from a checkout
// that was not given one.
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// Commit is the source commit: the one a release was cut from, else the one
// the checkout was built at (with "-dirty" for uncommitted changes), else
// "unknown".
func Commit() string {
	if commit != "" {
		return commit
	}
	if c := strings.TrimSpace(releaseCommit); c != "" {
		return c
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
