package canon

import (
	"errors"
	"strconv"

	"github.com/mcpdrift/mcpdrift/contract/internal/safetext"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// Reasons a value has no canonical form. They are sentinel errors so callers
// can match them with errors.Is; messages follow the digest recipe's wording
// where it has one ("repeated member name").
var (
	ErrDuplicateName = errors.New("repeated member name")
	ErrInvalidUTF8   = errors.New("invalid UTF-8")
	ErrSyntax        = errors.New("invalid JSON")
	ErrNumberRange   = errors.New("number out of IEEE 754 double range")
	ErrTooLarge      = errors.New("document too large")
	// The limits jsonwire's scan enforces: the same sentinels.
	ErrTooDeep       = jsonwire.ErrTooDeep
	ErrStringTooLong = jsonwire.ErrStringTooLong
)

// positionError adds a byte offset and JSON pointer to a canonicalization error.
type positionError struct {
	Offset  int64
	Pointer string
	Err     error
}

func (e *positionError) Error() string {
	s := e.Err.Error()
	if e.Pointer != "" {
		s += " at " + safetext.Quote(e.Pointer)
	}
	return s + " (byte " + strconv.FormatInt(e.Offset, 10) + ")"
}

func (e *positionError) Unwrap() error { return e.Err }
