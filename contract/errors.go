package contract

import (
	"errors"
	"fmt"
	"strconv"
)

// Reasons a definition or document has no digest, beside canon's (a value
// with no canonical form: canon.ErrSyntax, canon.ErrDuplicateName, canon.ErrTooDeep, ...). They
// are sentinel errors so callers can match them with errors.Is; messages
// follow the digest recipe's wording where it has one ("no string name").
var (
	ErrNoName        = errors.New("no string name")
	ErrTooMany       = errors.New("too many definitions")
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
