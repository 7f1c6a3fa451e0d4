package canon

import (
	"fmt"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// Limits bound one JSON value: its size, its nesting and each string as
// written. Every field must be positive (contract.Limits fills defaults).
type Limits struct {
	MaxDocumentBytes, MaxDepth, MaxStringBytes int
}

// Stats is what Scan learned about a document, for AppendScanned: a
// surrogate escape, or a number that may overflow a double (jsontext would
// clamp it, we refuse it), sends it to our own canonicalizer.
type Stats = jsonwire.Stats

// Scan checks size, depth and string length in one pass over raw (jsonwire's
// scan), without parsing; syntax is left to the canonicalizer that follows.
func (l Limits) Scan(raw []byte) (Stats, error) {
	if len(raw) > l.MaxDocumentBytes {
		return Stats{}, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(raw), l.MaxDocumentBytes)
	}
	st, lerr := jsonwire.Limits{MaxDepth: l.MaxDepth, MaxStringBytes: l.MaxStringBytes}.Scan(raw)
	if lerr != nil {
		return st, &positionError{Offset: int64(lerr.Offset), Err: lerr}
	}
	return st, nil
}
