package interceptor

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpdrift/mcpdrift/contract/staleness"
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
// inputSchema (WithArgumentValidation). When they fail it, and the tool is
// one the session was served another definition of before, the judgement
// (contract/staleness) tells whether they were planned against that one.
func (s *Session) guardArguments(c *call, l *listing, def toolDef, p reqParams, attrs []attribute.KeyValue) []attribute.KeyValue {
	args := p.arguments
	if jsonwire.IsNull(args) {
		args = []byte("{}")
	}
	sch, err := s.ic.judge.Schemas().Get(def.definition())
	if err != nil {
		return attrs
	}
	ok, violation := staleness.Validate(sch, staleness.ReadArguments(args))
	if ok {
		return append(attrs, attribute.Bool(semconv.GuardArgumentsValid, true))
	}
	attrs = append(attrs,
		attribute.Bool(semconv.GuardArgumentsValid, false),
		attribute.String(semconv.GuardViolation, violation.String()))
	if sup := l.superseded[def.name]; len(sup) > 0 {
		cur := def.definition()
		v := s.ic.judge.Judge(staleness.Evidence{Planned: def.digest, Current: &cur, Superseded: sup, Arguments: args})
		if v.State == staleness.Stale {
			c.staleDefinition = true
			attrs = appendWitness(attrs, v.Witness)
		}
	}
	return attrs
}

// definition is the cached definition as the judge reads it.
func (d toolDef) definition() staleness.Definition {
	return staleness.Definition{Digest: d.digest, Raw: d.raw}
}
