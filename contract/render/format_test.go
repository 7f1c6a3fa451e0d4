package render

import (
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/contract"
)

func TestNewEveryFormat(t *testing.T) {
	r := diffTools(t, `{"name":"a","inputSchema":{"type":"object"}}`, `{"name":"b","inputSchema":{"type":"object"}}`)
	for _, name := range Formats {
		f, err := New(name, noFiles{}, "v0.0.0-test")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b strings.Builder
		if err := f.Format(&b, r); err != nil || b.Len() == 0 {
			t.Errorf("%s: %q, %v", name, b.String(), err)
		}
	}
	if _, err := New("yaml", nil, ""); err == nil || !strings.Contains(err.Error(), "sarif") {
		t.Errorf("unknown format: %v", err)
	}
}

// noFiles places no change in a file (a report read from standard input).
type noFiles struct{}

func (noFiles) Locate(contract.Change) (string, int) { return "", 0 }
