// Package golden checks a committed generated file against what its
// generator makes now, and rewrites it under go test -update (the way the
// repository's go:generate lines regenerate such files).
package golden

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite generated files instead of checking them")

// Check fails t when the file at path is not want; with -update it writes
// want first. regenerate is the command that fixes a stale file.
func Check(t testing.TB, path string, want []byte, regenerate string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s disagrees with its source; run: %s", path, regenerate)
	}
}
