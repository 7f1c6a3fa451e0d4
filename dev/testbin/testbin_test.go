package testbin

import (
	"os"
	"testing"
)

// A second build of an unchanged package, as in the next test run (another
// process: the memo is reset here), leaves the binary as it was: go build
// found it up to date and did not link it again.
func TestBuildSkipsAnUpToDateBinary(t *testing.T) {
	const pkg = "./dev/testbin/testdata/hello"
	bin := Build(t, "testbin", pkg)
	if Build(t, "testbin", pkg) != bin {
		t.Fatal("a second Build in one process returned another path")
	}
	before, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	clear(builds)
	mu.Unlock()
	if again := Build(t, "testbin", pkg); again != bin {
		t.Fatalf("built %s, then %s", bin, again)
	}
	after, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	// A link writes a new file (go build removes or renames over the old
	// one); finding the binary up to date, it only touches it.
	if !os.SameFile(before, after) || after.Size() != before.Size() {
		t.Error("the up-to-date binary was linked again")
	}
}
