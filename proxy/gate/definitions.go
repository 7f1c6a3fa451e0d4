package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// Definition is one tool definition as the gate knows it.
type Definition struct {
	Digest string // contract's digest of the whole definition
	// Schema is the definition's inputSchema as served (raw JSON), kept
	// where a listing is read with schemas (Read): what a call's arguments
	// can be judged against. nil where only digests are kept.
	Schema json.RawMessage
}

func (d Definition) sameDigest(e Definition) bool { return d.Digest == e.Digest }

// Definitions are tool definitions by tool name: the server's current ones
// (Gate.Learn), or the ones a session was served.
type Definitions map[string]Definition

// Read is the definitions of a listing page (interceptor.ToolDefinitions),
// added to into when it is not nil. withSchema keeps each inputSchema (a
// copy: the listing's bytes are the caller's); without, digests only, so a
// proxy that keeps a session's definitions for many sessions keeps little.
func Read(into Definitions, defs []contract.Definition, withSchema bool) Definitions {
	if into == nil {
		into = make(Definitions, len(defs))
	}
	for _, d := range defs {
		def := Definition{Digest: d.Digest}
		if withSchema {
			def.Schema = bytes.Clone(jsonwire.Lookup(d.Raw, "inputSchema"))
		}
		into[d.Key] = def
	}
	return into
}

// maxPages bounds the pages of one listing the proxy reads.
const maxPages = 100

// ListTools reads the server's whole tool listing through call (a request on
// the proxy's own ids, whose result the caller may keep).
func ListTools(ctx context.Context, limits contract.Limits, withSchema bool, call func(context.Context, string, []byte) (json.RawMessage, error)) (Definitions, error) {
	current := Definitions{}
	cursor := ""
	for range maxPages {
		params := []byte(`{}`)
		if cursor != "" {
			params = jsonwire.AppendString([]byte(`{"cursor":`), cursor)
			params = append(params, '}')
		}
		res, err := call(ctx, mcpwire.MethodToolsList, params)
		if err != nil {
			return nil, err
		}
		defs, readable, err := interceptor.ToolDefinitions(limits, res)
		if !readable {
			return nil, err
		}
		Read(current, defs, withSchema)
		if cursor, _ = jsonwire.String(jsonwire.Lookup(res, "nextCursor")); cursor == "" {
			return current, nil
		}
	}
	return nil, errors.New("tools/list has more pages than the proxy reads")
}
