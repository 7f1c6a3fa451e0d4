package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestVersionCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"version"}, strings.NewReader(""), &out, &errOut); code != exitOK {
		t.Fatalf("mcpdrift version exited %d: %s", code, errOut.String())
	}
	// A test binary is a development build: no module version.
	if got := out.String(); !strings.HasPrefix(got, "mcpdrift (devel) (commit ") {
		t.Errorf("mcpdrift version printed %q", got)
	}
	if code := run([]string{"version", "extra"}, strings.NewReader(""), &out, &errOut); code != exitUsage {
		t.Errorf("mcpdrift version extra exited %d, want %d (usage)", code, exitUsage)
	}
}
