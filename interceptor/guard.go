package interceptor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/witness"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// ErrRefused wraps the error a StaleToolHook returned to refuse a call.
var ErrRefused = errors.New("mcpdrift interceptor: call refused by the stale-tool hook")

type plannedKey struct{}

// plannedCall is the definition a call was planned with, before the
// stale-tool hook had the agent refresh.
type plannedCall struct{ tool, digest string }

// BeforeToolCall runs the guard's stale-definition check for a tools/call
// about to be sent with ctx. Front-ends that sit above the wire call it
// before sending. When the cached listing is stale and a StaleToolHook is
// installed, the hook runs (the agent may refresh its listing there); if it
// returns an error the call must not be sent, and the error (wrapping
// ErrRefused) is returned. The returned context carries the definition the
// call was planned with, so the request's span can say whether the refresh
// changed it. Without a hook, or when the listing is not stale, it returns
// ctx unchanged and nil: the guard never blocks by default.
func (s *Session) BeforeToolCall(ctx context.Context, tool string) (context.Context, error) {
	hook := s.ic.cfg.staleHook
	if hook == nil {
		return ctx, nil
	}
	l := s.tools.Load()
	if !s.listingStale(l) {
		return ctx, nil
	}
	var planned string
	if l != nil {
		planned = l.tools[tool].digest
	}
	if err := hook(ctx, StaleToolCall{Tool: tool, Digest: planned, ServerName: s.ServerName()}); err != nil {
		return ctx, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return context.WithValue(ctx, plannedKey{}, plannedCall{tool: tool, digest: planned}), nil
}

// guardArguments validates a tools/call's arguments against the cached
// inputSchema. When they fail it and the tool's previous definition (before
// the last refresh) accepts them, the call was planned against that stale
// definition.
func (s *Session) guardArguments(c *call, l *listing, def toolDef, p reqParams, attrs []attribute.KeyValue) []attribute.KeyValue {
	args := p.arguments
	if jsonwire.IsNull(args) {
		args = []byte("{}")
	}
	sch := s.schemas.get(s, def)
	if sch == nil {
		return attrs
	}
	violation, ok := validate(sch, args)
	if ok {
		return append(attrs, attribute.Bool(semconv.GuardArgumentsValid, true))
	}
	attrs = append(attrs,
		attribute.Bool(semconv.GuardArgumentsValid, false),
		attribute.String(semconv.GuardViolation, violation))
	if prev, had := l.prev[def.name]; had && prev.digest != def.digest {
		if old := s.schemas.get(s, prev); old != nil {
			if _, okOld := validate(old, args); okOld {
				c.staleDefinition = true
			}
		}
	}
	return attrs
}

// validate reports whether args satisfy sch and, if not, where: the
// instance location and keyword of the first leaf error, never a value.
func validate(sch *jsonschema.Schema, args []byte) (string, bool) {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return "arguments are not JSON", false
	}
	err = sch.Validate(inst)
	if err == nil {
		return "", true
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return "invalid", false
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	kw := "invalid"
	if ve.ErrorKind != nil {
		if p := ve.ErrorKind.KeywordPath(); len(p) > 0 {
			kw = strings.Join(p, "/")
		}
	}
	return contract.TruncateBytes("/"+strings.Join(ve.InstanceLocation, "/")+": "+kw, 256), false
}

// schemaCache holds compiled inputSchemas by definition digest.
type schemaCache struct {
	mu      sync.Mutex
	entries map[string]*schemaEntry
}

type schemaEntry struct {
	once sync.Once
	sch  *jsonschema.Schema
}

// get returns the compiled inputSchema of def, compiling it on first use;
// nil when it has none or it does not compile (reported once).
func (sc *schemaCache) get(s *Session, def toolDef) *jsonschema.Schema {
	if def.digest == "" {
		return nil
	}
	sc.mu.Lock()
	if sc.entries == nil {
		sc.entries = map[string]*schemaEntry{}
	}
	e := sc.entries[def.digest]
	if e == nil {
		e = &schemaEntry{}
		sc.entries[def.digest] = e
	}
	sc.mu.Unlock()
	e.once.Do(func() {
		sch, err := compileInputSchema(def)
		if err != nil {
			s.ic.report(fmt.Errorf("inputSchema of tool definition %.12s from %s: %w", def.digest, s.describe(), err))
		}
		e.sch = sch
	})
	return e.sch
}

// retain drops compiled schemas no longer in the listing or its previous one.
func (sc *schemaCache) retain(l *listing) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if len(sc.entries) == 0 {
		return
	}
	keep := make(map[string]bool, len(l.tools)+len(l.prev))
	for _, d := range l.tools {
		keep[d.digest] = true
	}
	for _, d := range l.prev {
		keep[d.digest] = true
	}
	for digest := range sc.entries {
		if !keep[digest] {
			delete(sc.entries, digest)
		}
	}
}

// compileInputSchema compiles a definition's inputSchema as witnesses and
// replay do (witness.Compile: JSON Schema 2020-12 unless it declares
// another draft, references resolved only within the schema: a server's
// schema must not make the agent read files or fetch URLs).
func compileInputSchema(def toolDef) (*jsonschema.Schema, error) {
	raw := jsonwire.Lookup(def.raw, "inputSchema")
	if raw == nil {
		return nil, errors.New("no inputSchema")
	}
	return witness.Compile(raw, "urn:mcpdrift:tool:"+def.digest, witness.CompileOptions{})
}
