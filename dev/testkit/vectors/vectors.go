// Package vectors loads the published test vectors of "Tool definition
// hash, version 1" (testdata/vectors/tool-definition-hash-vectors.json) for
// every test that checks digests against them: one loader, one schema.
package vectors

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// File is the vector file.
type File struct {
	Definitions []Definition `json:"definitions"`
	Sets        []Set        `json:"sets"`
	// Instructions hash the raw string; a nil Instructions has no hash.
	Instructions []Instructions `json:"instructions"`
	Invalid      []Invalid      `json:"invalid"`
}

// Definition is one definition, its canonical form and its digest.
type Definition struct {
	About     string `json:"about"`
	Input     string `json:"input"`
	Canonical string `json:"canonical"`
	Hash      string `json:"hash"`
}

// Set is a listing (one or more pages), its name:hash lines and set digest.
type Set struct {
	About   string   `json:"about"`
	Pages   []string `json:"pages"`
	Lines   []string `json:"lines"`
	SetHash string   `json:"setHash"`
}

// Instructions is a server's instructions and their digest.
type Instructions struct {
	About        string  `json:"about"`
	Instructions *string `json:"instructions"`
	Hash         *string `json:"hash"`
}

// Invalid is a definition (Input) or a listing (Pages) that has no digest.
type Invalid struct {
	About  string   `json:"about"`
	Input  string   `json:"input"`
	Pages  []string `json:"pages"`
	Reason string   `json:"reason"`
}

// Path is the vector file in this checkout.
func Path() string {
	return filepath.Join(testservers.RepoRoot(), "testdata", "vectors", "tool-definition-hash-vectors.json")
}

// Load reads the vector file and fails the test if it is missing or has an
// empty section.
func Load(tb testing.TB) File {
	tb.Helper()
	b, err := os.ReadFile(Path())
	if err != nil {
		tb.Fatal(err)
	}
	var v File
	if err := json.Unmarshal(b, &v); err != nil {
		tb.Fatal(err)
	}
	if len(v.Definitions) == 0 || len(v.Sets) == 0 || len(v.Instructions) == 0 || len(v.Invalid) == 0 {
		tb.Fatal("the vector file is missing a section")
	}
	return v
}
