package contract

import (
	"errors"
	"fmt"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// Limits bound what this package accepts from a server. Servers are untrusted:
// every document is checked against these before it is parsed, so a hostile
// listing costs one linear scan and a clear error, never a panic or an
// unbounded allocation.
type Limits struct {
	// MaxDocumentBytes bounds one JSON document (a listing page, a snapshot).
	MaxDocumentBytes int `mapstructure:"max_document_bytes" json:"max_document_bytes"`
	// MaxDepth bounds nesting of objects and arrays; at most
	// jsonwire.MaxDepth, the deepest text the listing walker reads (a larger
	// value counts as that).
	MaxDepth int `mapstructure:"max_depth" json:"max_depth"`
	// MaxDefinitions bounds the definitions of one kind in one listing.
	MaxDefinitions int `mapstructure:"max_definitions" json:"max_definitions"`
	// MaxStringBytes bounds one JSON string (member names included), as written.
	MaxStringBytes int `mapstructure:"max_string_bytes" json:"max_string_bytes"`
}

// Default limits: generous for real servers (the largest real listings we
// have seen are a few hundred KiB, a few hundred tools, depth under 20).
const (
	DefaultMaxDocumentBytes = 16 << 20
	DefaultMaxDepth         = 128
	DefaultMaxDefinitions   = 10_000
	DefaultMaxStringBytes   = 1 << 20
)

// DefaultLimits returns the limits used when none are configured.
func DefaultLimits() Limits {
	return Limits{
		MaxDocumentBytes: DefaultMaxDocumentBytes,
		MaxDepth:         DefaultMaxDepth,
		MaxDefinitions:   DefaultMaxDefinitions,
		MaxStringBytes:   DefaultMaxStringBytes,
	}
}

// withDefaults fills zero fields with defaults, so a partly set Limits works.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxDocumentBytes <= 0 {
		l.MaxDocumentBytes = d.MaxDocumentBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	l.MaxDepth = min(l.MaxDepth, jsonwire.MaxDepth)
	if l.MaxDefinitions <= 0 {
		l.MaxDefinitions = d.MaxDefinitions
	}
	if l.MaxStringBytes <= 0 {
		l.MaxStringBytes = d.MaxStringBytes
	}
	return l
}

// Canon is the part of l (defaults filled) that bounds one JSON value.
func (l Limits) Canon() canon.Limits {
	l = l.withDefaults()
	return canon.Limits{MaxDocumentBytes: l.MaxDocumentBytes, MaxDepth: l.MaxDepth, MaxStringBytes: l.MaxStringBytes}
}

// Complete returns l with its zero fields set to the defaults, as every
// method of Limits reads it.
func (l Limits) Complete() Limits { return l.withDefaults() }

// Validate reports limits that cannot be meant (negative values), naming
// each by its configuration key.
func (l Limits) Validate() error {
	var errs []error
	for _, f := range []struct {
		key   string
		value int
	}{
		{"max_document_bytes", l.MaxDocumentBytes},
		{"max_depth", l.MaxDepth},
		{"max_definitions", l.MaxDefinitions},
		{"max_string_bytes", l.MaxStringBytes},
	} {
		if f.value < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative (0 takes the default), got %d", f.key, f.value))
		}
	}
	return errors.Join(errs...)
}
