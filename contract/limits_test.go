package contract

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/contract/canon"
)

func TestLimits(t *testing.T) {
	l := Limits{MaxDocumentBytes: 100, MaxDepth: 3, MaxStringBytes: 5, MaxDefinitions: 2}
	defs := []json.RawMessage{json.RawMessage(`{"name":"a"}`), json.RawMessage(`{"name":"b"}`), json.RawMessage(`{"name":"c"}`)}
	if _, err := l.HashDefinitions(KindTool, defs); !errors.Is(err, ErrTooMany) {
		t.Errorf("definitions: %v", err)
	}
	// Deeper than the walker reads is refused, not split wrongly.
	deep := []byte(`{"tools":[{"name":"t","x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}]}`)
	if _, err := (Limits{MaxDepth: 1000}).ParsePage(deep); !errors.Is(err, canon.ErrTooDeep) {
		t.Errorf("page deeper than the walker: %v", err)
	}
	if err := (Limits{MaxDepth: -1}).Validate(); err == nil {
		t.Error("negative limit accepted")
	}
}

// digest is a definition's digest under the default limits.
func digest(raw []byte) (string, error) { return DefaultLimits().Canon().Digest(raw) }
