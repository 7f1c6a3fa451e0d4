package mcpwire

import (
	"crypto/sha256"
	"encoding/hex"
)

// MaxSessionIDBytes is the longest Mcp-Session-Id kept and recorded as it
// is. Servers issue UUIDs and the like, but nothing in the specification
// bounds an id: a server (or a client) could name sessions megabytes
// long, thousands of times, and each would be kept as a map key and a span
// attribute.
const MaxSessionIDBytes = 1 << 10

// SessionKey is the form a session id is kept (as a key) and recorded
// (as mcp.session.id) in: the id itself, or for one longer than
// MaxSessionIDBytes "sha256:" and the hex digest of it.
func SessionKey(id string) string {
	if len(id) <= MaxSessionIDBytes {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:])
}
