package interceptor

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpdrift/mcpdrift/contract/staleness"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// GuardCall judges a tools/call about to be sent with ctx (params as they
// would go on the wire; id, when the front-end has one) under
// WithStaleRefusal and WithStaleWindow, with the judgement of
// contract/staleness: arguments that fit a definition the session was
// served before and not the one it was served last are stale, even after
// the agent listed again. When it refuses the call, the call's span is
// recorded and ended (error.type refused, mcpdrift.tool.stale=true) and the
// refusal returned: the front-end answers the caller with its Result and
// never sends the request. nil: send it. Without either option, or for a
// tool the session was never served another definition of (and, with the
// window, no change pending), it costs a lookup or two.
func (s *Session) GuardCall(ctx context.Context, id ID, params json.RawMessage) *Refusal {
	if !s.GuardsCalls() {
		return nil
	}
	cfg := &s.ic.cfg
	l := s.tools.Load()
	def, known := l.lookup(jsonwire.Lookup(params, "name"))
	if !known || def.digest == "" {
		return nil
	}
	sup := l.superseded[def.name]
	var v staleness.Verdict
	if len(sup) > 0 {
		args := jsonwire.Lookup(params, "arguments")
		if jsonwire.IsNull(args) {
			args = []byte("{}")
		}
		cur := def.definition()
		v = s.ic.judge.Judge(staleness.Evidence{Planned: def.digest, Current: &cur, Superseded: sup, Arguments: args})
	}
	stale := v.State == staleness.Stale
	switch {
	case stale && cfg.refuseStale:
		s.window.Done(def.name)
	case s.window != nil && s.window.Take(def.name, time.Now()):
		if !stale {
			v = staleness.Verdict{State: staleness.Stale, Basis: staleness.BasisWindow, Current: def.digest}
			if len(sup) > 0 {
				v.Planned = sup[0].Digest
			}
		}
	default:
		return nil
	}
	r := &Refusal{Tool: def.label, Verdict: v}
	s.ic.Protect(func() {
		c, _ := s.request(ctx, id, methodToolsCall, params, false)
		s.finish(c, failure(r), time.Now())
	})
	return r
}

// GuardsCalls reports whether GuardCall may refuse calls at all
// (WithStaleRefusal or WithStaleWindow), so a front-end encodes a call's
// params for it only then.
func (s *Session) GuardsCalls() bool { return s.ic.cfg.refuseStale || s.window != nil }

// Refusal is a tools/call the guard answered itself instead of sending it:
// planned against a definition the server no longer serves, or (the
// window) made just after a change its arguments cannot show.
type Refusal struct {
	Tool    string            // the tool called, as gen_ai.tool.name writes it
	Verdict staleness.Verdict // Basis window for the window's refusal
}

// Error is the text the model reads.
func (r *Refusal) Error() string { return r.Text() }

// ErrorType is error.type on the refused call's span.
func (r *Refusal) ErrorType() string { return semconv.ErrorTypeRefused }

// SpanAttributes are what the refused call's span records.
func (r *Refusal) SpanAttributes() []attribute.KeyValue {
	v := r.Verdict
	kv := []attribute.KeyValue{
		attribute.String(semconv.GuardRefusal, semconv.RefusalStaleToolSchema),
		attribute.Bool(semconv.ToolStale, true),
		attribute.Bool(semconv.GuardStaleDefinition, true),
		attribute.String(semconv.GuardStaleBasis, string(v.Basis)),
		attribute.String(semconv.GuardCurrentDigest, v.Current),
	}
	if v.Planned != "" && v.Planned != v.Current {
		kv = append(kv, attribute.String(semconv.GuardPlannedDigest, v.Planned))
	}
	return appendWitness(kv, v.Witness)
}

// appendWitness records what no longer fits (names, never values).
func appendWitness(kv []attribute.KeyValue, w *staleness.Witness) []attribute.KeyValue {
	if w == nil {
		return kv
	}
	kv = append(kv,
		attribute.String(semconv.GuardWitnessPath, w.Path),
		attribute.String(semconv.GuardWitnessKeyword, w.Keyword))
	if w.Rule != "" {
		kv = append(kv, attribute.String(semconv.GuardWitnessRule, w.Rule))
	}
	if w.Argument != "" {
		kv = append(kv, attribute.String(semconv.GuardWitnessArgument, w.Argument))
	}
	return kv
}

// Action is the envelope's required_action.
func (r *Refusal) Action() string {
	if r.Verdict.Basis == staleness.BasisWindow {
		return semconv.ActionRereadTool
	}
	return semconv.ActionRefreshTools
}

// Text is what the model reads: what happened, that nothing ran, and what
// to do.
func (r *Refusal) Text() string {
	code := semconv.RefusalStaleToolSchema
	switch {
	case r.Verdict.Basis == staleness.BasisWindow:
		return fmt.Sprintf("%s: the definition of tool %q changed just before this call, in a way its arguments cannot show "+
			"(its description, annotations or output schema), so this call was not sent and nothing ran. "+
			"Read the tool's current definition (tools/list) and call it again if it still does what you need; the next call will be sent.", code, r.Tool)
	case r.Verdict.Witness != nil:
		return fmt.Sprintf("%s: the arguments of this call were written for an earlier definition of tool %q, not the one the server serves now "+
			"(%s), so this call was not sent and nothing ran. Fetch the tool list again (tools/list), read the tool's current schema, and plan the call again.",
			code, r.Tool, r.Verdict.Witness)
	}
	return fmt.Sprintf("%s: the definition of tool %q changed after your tool list was fetched, so this call was not sent and nothing ran. "+
		"Fetch the tool list again (tools/list), read the tool's new schema, and plan the call again.", code, r.Tool)
}

// Result is the tools/call result the caller gets instead of the server's:
// a tool execution error (isError) carrying the envelope in
// structuredContent, so the model can repair (docs/design.md "Refusing a
// stale call").
func (r *Refusal) Result() json.RawMessage {
	type envelope struct {
		ErrorCode         string             `json:"error_code"`
		Tool              string             `json:"tool"`
		RequiredAction    string             `json:"required_action"`
		SideEffectStarted bool               `json:"side_effect_started"`
		PlannedDigest     string             `json:"planned_digest,omitempty"`
		CurrentDigest     string             `json:"current_digest"`
		Basis             staleness.Basis    `json:"basis"`
		Witness           *staleness.Witness `json:"witness,omitempty"`
	}
	type content struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	b, _ := json.Marshal(struct {
		Content           []content `json:"content"`
		StructuredContent envelope  `json:"structuredContent"`
		IsError           bool      `json:"isError"`
	}{
		Content: []content{{Type: "text", Text: r.Text()}},
		StructuredContent: envelope{
			ErrorCode: semconv.RefusalStaleToolSchema, Tool: r.Tool, RequiredAction: r.Action(),
			PlannedDigest: r.Verdict.Planned, CurrentDigest: r.Verdict.Current,
			Basis: r.Verdict.Basis, Witness: r.Verdict.Witness,
		},
		IsError: true,
	})
	return b
}

// Response is the whole JSON-RPC response answering the request with this
// raw id with Result.
func (r *Refusal) Response(rawID json.RawMessage) []byte {
	if len(rawID) == 0 {
		rawID = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{"2.0", rawID, r.Result()})
	return b
}
