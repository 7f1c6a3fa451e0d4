package staleness

import (
	"encoding/json"
	"errors"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpdrift/mcpdrift/contract/witness"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// Definition is one tool definition as a judge reads it.
type Definition struct {
	Digest string
	// Raw is the definition as the server sent it; its inputSchema is
	// compiled on first use, and the rule of a witness is read from the
	// difference of two of them.
	Raw json.RawMessage
	// InputSchema, when set, is the definition's inputSchema, for a judge
	// that keeps only that (Raw may then be nil).
	InputSchema json.RawMessage
}

// inputSchema is the definition's inputSchema (nil when it has none).
func (d Definition) inputSchema() json.RawMessage {
	if d.InputSchema != nil {
		return d.InputSchema
	}
	return jsonwire.Lookup(d.Raw, "inputSchema")
}

// Schemas compiles definitions' inputSchemas once per digest and keeps
// them, up to a bound: past it, the entries not used since the last sweep
// go. Safe for concurrent use; share one between the sessions of a process.
type Schemas struct {
	max     int
	onError func(digest string, err error)

	mu      sync.Mutex
	entries map[string]*schemaEntry
}

type schemaEntry struct {
	once sync.Once
	sch  *jsonschema.Schema
	err  error
	used bool // since the last sweep; under Schemas.mu
}

// DefaultMaxSchemas bounds a Schemas made with a max of 0 or less.
const DefaultMaxSchemas = 1024

// NewSchemas returns a cache of at most max compiled schemas (0 or less:
// DefaultMaxSchemas). onError, when not nil, hears once per digest why a
// definition's inputSchema could not be compiled.
func NewSchemas(max int, onError func(digest string, err error)) *Schemas {
	if max <= 0 {
		max = DefaultMaxSchemas
	}
	return &Schemas{max: max, onError: onError, entries: map[string]*schemaEntry{}}
}

// errNoSchema: the definition has no inputSchema.
var errNoSchema = errors.New("no inputSchema")

// Get returns d's compiled inputSchema, compiling it on first use. A
// definition without a digest is not cached (nor compiled: nil, error).
// Compilation is witness.Compile's: draft 2020-12 unless the schema names
// another, and no reference outside the schema is ever loaded.
func (s *Schemas) Get(d Definition) (*jsonschema.Schema, error) {
	if d.Digest == "" {
		return nil, errors.New("a definition without a digest")
	}
	s.mu.Lock()
	e := s.entries[d.Digest]
	if e == nil {
		if len(s.entries) >= s.max {
			s.sweep()
		}
		e = &schemaEntry{}
		s.entries[d.Digest] = e
	}
	e.used = true
	s.mu.Unlock()
	e.once.Do(func() {
		e.sch, e.err = compile(d)
		if e.err != nil && s.onError != nil {
			s.onError(d.Digest, e.err)
		}
	})
	return e.sch, e.err
}

// sweep drops the entries not used since the last sweep, or, when every
// one was, half of them. Under s.mu.
func (s *Schemas) sweep() {
	for k, e := range s.entries {
		if !e.used {
			delete(s.entries, k)
		}
		e.used = false
	}
	for k := range s.entries {
		if len(s.entries) < s.max/2+1 {
			break
		}
		delete(s.entries, k)
	}
}

func compile(d Definition) (*jsonschema.Schema, error) {
	raw := d.inputSchema()
	if raw == nil {
		return nil, errNoSchema
	}
	return witness.Compile(raw, "urn:mcpdrift:tool:"+d.Digest, witness.CompileOptions{})
}

// Len is how many compiled schemas the cache holds.
func (s *Schemas) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}
