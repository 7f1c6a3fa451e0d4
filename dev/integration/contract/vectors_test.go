package contract_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"github.com/mcpdrift/mcpdrift/dev/testkit/vectors"
)

func TestVectorsSets(t *testing.T) {
	for _, v := range vectors.Load(t).Sets {
		t.Run(v.About, func(t *testing.T) {
			l, err := contract.DefaultLimits().HashDefinitions(contract.KindTool, vectorPages(t, v.Pages))
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, d := range l {
				lines = append(lines, d.Key+":"+d.Digest)
			}
			if strings.Join(lines, "\n") != strings.Join(v.Lines, "\n") {
				t.Errorf("lines\n got %q\nwant %q", lines, v.Lines)
			}
			if got := l.SetDigest(); got != v.SetHash {
				t.Errorf("set digest %s, want %s", got, v.SetHash)
			}
		})
	}
}

func TestVectorsInstructions(t *testing.T) {
	for _, v := range vectors.Load(t).Instructions {
		t.Run(v.About, func(t *testing.T) {
			s := &contract.Snapshot{Instructions: v.Instructions}
			if err := s.Seal(); err != nil {
				t.Fatal(err)
			}
			switch {
			case v.Hash == nil && s.Digests.Instructions != nil:
				t.Errorf("got digest %s for no instructions", *s.Digests.Instructions)
			case v.Hash != nil && (s.Digests.Instructions == nil || *s.Digests.Instructions != *v.Hash):
				t.Errorf("got %v, want %s", s.Digests.Instructions, *v.Hash)
			}
		})
	}
}

func TestVectorsInvalid(t *testing.T) {
	for _, v := range vectors.Load(t).Invalid {
		t.Run(v.About, func(t *testing.T) {
			want := map[string]error{"repeated member name": canon.ErrDuplicateName, "no string name": contract.ErrNoName}[v.Reason]
			if want == nil {
				t.Fatalf("unknown reason %q", v.Reason)
			}
			var err error
			if v.Input != "" {
				_, err = contract.DefaultLimits().Canon().Digest([]byte(v.Input))
				if !errors.Is(err, want) {
					t.Errorf("Digest error %v, want %v", err, want)
				}
				// As a listing entry the error names the definition.
				_, err = contract.DefaultLimits().HashDefinitions(contract.KindTool, []json.RawMessage{json.RawMessage(v.Input)})
			} else {
				_, err = contract.DefaultLimits().HashDefinitions(contract.KindTool, vectorPages(t, v.Pages))
			}
			var de *contract.DefinitionError
			if !errors.As(err, &de) || !errors.Is(err, want) {
				t.Fatalf("HashDefinitions error %v, want a DefinitionError wrapping %v", err, want)
			}
			if de.Index != 0 || !strings.Contains(err.Error(), v.Reason) {
				t.Errorf("message %q should name tool[0] and say %q", err, v.Reason)
			}
		})
	}
}

// vectorPages concatenates the definitions of a vector's pages (each a JSON array).
func vectorPages(t *testing.T, pages []string) []json.RawMessage {
	t.Helper()
	var defs []json.RawMessage
	for _, p := range pages {
		var page []json.RawMessage
		if err := json.Unmarshal([]byte(p), &page); err != nil {
			t.Fatal(err)
		}
		defs = append(defs, page...)
	}
	return defs
}
