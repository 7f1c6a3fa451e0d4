package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGeneratedIsCurrent fails when wrap_gen.go is not what the generator
// writes now (run go generate ./interceptor/mcpgo).
func TestGeneratedIsCurrent(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../wrap_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("wrap_gen.go is stale: run go generate ./interceptor/mcpgo")
	}
}
