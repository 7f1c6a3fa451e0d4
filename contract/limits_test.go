package contract

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestLimits(t *testing.T) {
	l := Limits{MaxDocumentBytes: 100, MaxDepth: 3, MaxStringBytes: 5, MaxDefinitions: 2}
	defs := []json.RawMessage{json.RawMessage(`{"name":"a"}`), json.RawMessage(`{"name":"b"}`), json.RawMessage(`{"name":"c"}`)}
	if _, err := l.HashDefinitions(KindTool, defs); !errors.Is(err, ErrTooMany) {
		t.Errorf("definitions: %v", err)
	}
	if err := (Limits{MaxDepth: -1}).Validate(); err == nil {
		t.Error("negative limit accepted")
	}
}

// digest is a definition's digest under the default limits.
func digest(raw []byte) (string, error) { return DefaultLimits().Canon().Digest(raw) }
