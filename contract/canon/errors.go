package canon

import (
	"errors"
	"strconv"

	"github.com/mcpdrift/mcpdrift/contract/internal/safetext"
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
	ErrTooDeep       = errors.New("nesting too deep")
	ErrStringTooLong = errors.New("string too long")
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
