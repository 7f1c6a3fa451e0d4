package contract

import (
	"errors"
	"fmt"
	"strconv"
)

// Reasons a definition or document has no digest. They are sentinel errors so
// callers can match them with errors.Is; messages follow the digest recipe's
// wording where it has one ("repeated member name", "no string name").
var (
	ErrDuplicateName = errors.New("repeated member name")
	ErrInvalidUTF8   = errors.New("invalid UTF-8")
	ErrNoName        = errors.New("no string name")
	ErrSyntax        = errors.New("invalid JSON")
	ErrNumberRange   = errors.New("number out of IEEE 754 double range")
	ErrTooLarge      = errors.New("document too large")
	ErrTooDeep       = errors.New("nesting too deep")
	ErrTooMany       = errors.New("too many definitions")
	ErrStringTooLong = errors.New("string too long")
	ErrUnknownSchema = errors.New("unknown snapshot schema version")
	ErrUnknownFormat = errors.New("not a listing, page array, definition array or snapshot")
	ErrNotAnObject   = errors.New("definition is not a JSON object")
)

// DefinitionError names the definition that could not be hashed and why.
type DefinitionError struct {
	Kind  Kind   // tool, prompt, resource, resource_template
	Index int    // position in the listing as received (across pages), -1 if unknown
	Key   string // name / uri / uriTemplate when it could be read, else ""
	Err   error
}

func (e *DefinitionError) Error() string {
	where := string(e.Kind)
	if e.Index >= 0 {
		where += "[" + strconv.Itoa(e.Index) + "]"
	}
	if e.Key != "" {
		where += " " + QuoteForDisplay(e.Key)
	}
	return fmt.Sprintf("%s: %v", where, e.Err)
}

func (e *DefinitionError) Unwrap() error { return e.Err }

// positionError adds a byte offset and JSON pointer to a canonicalization error.
type positionError struct {
	Offset  int64
	Pointer string
	Err     error
}

func (e *positionError) Error() string {
	s := e.Err.Error()
	if e.Pointer != "" {
		s += " at " + QuoteForDisplay(e.Pointer)
	}
	return s + " (byte " + strconv.FormatInt(e.Offset, 10) + ")"
}

func (e *positionError) Unwrap() error { return e.Err }
