package canon

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/dev/testkit/vectors"
)

func TestVectorsDefinitions(t *testing.T) {
	for _, v := range vectors.Load(t).Definitions {
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
