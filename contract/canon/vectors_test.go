package canon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestVectorsDefinitions checks every definition of the published vectors
// (testdata/vectors at the repository root), read here with the standard
// library so that this module needs no test helper module; the sets,
// instructions and invalid inputs are checked through contract's API in
// dev/integration/contract.
func TestVectorsDefinitions(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors", "tool-definition-hash-vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vectors struct {
		Definitions []struct{ About, Input, Canonical, Hash string }
	}
	if err := json.Unmarshal(raw, &vectors); err != nil || len(vectors.Definitions) == 0 {
		t.Fatalf("the vector file has no definitions (%v)", err)
	}
	for _, v := range vectors.Definitions {
		t.Run(v.About, func(t *testing.T) {
			c, err := testLimits.Canonicalize(nil, []byte(v.Input))
			if err != nil {
				t.Fatalf("Canonicalize: %v", err)
			}
			if string(c) != v.Canonical {
				t.Errorf("canonical form\n got %s\nwant %s", c, v.Canonical)
			}
			d, err := testLimits.Digest([]byte(v.Input))
			if err != nil {
				t.Fatal(err)
			}
			if d != v.Hash {
				t.Errorf("digest %s, want %s", d, v.Hash)
			}
			// The surrogate-aware canonicalizer must agree on every vector too.
			c2, err := canonicalizeSurrogates(nil, []byte(v.Input), testLimits.MaxDepth)
			if err != nil || string(c2) != v.Canonical {
				t.Errorf("surrogate path: %s, %v", c2, err)
			}
		})
	}
}
