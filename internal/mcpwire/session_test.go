package mcpwire

import (
	"strings"
	"testing"
)

// TestSessionKey: ids up to the bound are kept as they are; a longer one
// becomes a digest, the same for the same id and another for another.
func TestSessionKey(t *testing.T) {
	short := strings.Repeat("a", MaxSessionIDBytes)
	if got := SessionKey(short); got != short {
		t.Errorf("an id of %d bytes became %q", len(short), got)
	}
	long, other := short+"b", short+"c"
	k := SessionKey(long)
	if !strings.HasPrefix(k, "sha256:") || len(k) != len("sha256:")+64 || SessionKey(long) != k || SessionKey(other) == k {
		t.Errorf("keys of overlong ids: %q, %q", k, SessionKey(other))
	}
}
