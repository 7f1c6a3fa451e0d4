package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// Session is a probe that stays connected after its snapshot, so that the
// caller can send tools/call requests to the server it just listed (mcpdrift
// replay does, to see how a new server answers an old call). It speaks the
// generation and transport the probe settled on, answers the server's
// requests as the probe does, and redacts secrets from what it returns.
//
// Open starts it; everything from connecting to Close is bounded by
// Options.Timeout, and each call by Options.RequestTimeout. A Session is
// not safe for concurrent calls.
type Session struct {
	p      *prober
	ctx    context.Context
	cancel context.CancelFunc
	abort  context.CancelCauseFunc
	res    *Result
	start  time.Time
}

// Open probes t as ProbeResult does and keeps the connection. On error
// nothing is left running.
func Open(ctx context.Context, t Target, o Options) (*Session, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("invalid target: %w", err)
	}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("invalid probe options: %w", err)
	}
	o = o.withDefaults()
	s := &Session{start: time.Now()}
	ctx, s.abort = context.WithCancelCause(ctx)
	s.ctx, s.cancel = context.WithTimeout(ctx, o.Timeout)
	s.p = &prober{t: &t, rt: &probeRuntime{opts: o, red: newRedactor(&t), budget: newBudget(o.MaxTotalBytes), abort: s.abort}}
	res, err := s.p.run(s.ctx)
	if err != nil {
		s.p.release(s.ctx.Err() != nil)
		err = s.p.finish(abortCause(s.ctx, err))
		s.cancel()
		s.abort(nil)
		return nil, err
	}
	res.Duration = time.Since(s.start)
	s.res = res
	return s, nil
}

// Result is the snapshot the session took when it opened.
func (s *Session) Result() *Result { return s.res }

// Expired reports whether the session has run out of time
// (Options.Timeout) or was cancelled: calls would fail without reaching
// the server.
func (s *Session) Expired() bool { return s.ctx.Err() != nil }

// Close ends the connection (a stdio server is shut down and reaped) and
// returns the redacted tail of a stdio server's stderr.
func (s *Session) Close() string {
	s.p.release(s.ctx.Err() != nil)
	s.cancel()
	s.abort(nil)
	return s.p.stderr()
}

// StepCall is the step of a failed tools/call.
const StepCall Step = mcpwire.MethodToolsCall

// ToolResult is a server's answer to a tools/call.
type ToolResult struct {
	// IsError is the result's isError: a tool execution error, which the
	// model sees and can act on.
	IsError bool
	// Text is the result's text content, joined, redacted and cut to
	// maxResultText bytes.
	Text string
	// StructuredContent is the result's structuredContent, redacted (nil
	// when absent).
	StructuredContent json.RawMessage
}

// maxResultText bounds ToolResult.Text.
const maxResultText = 4 << 10

// CallTool sends tools/call with the tool's name and arguments (a JSON
// object) and returns the result. A JSON-RPC error answer is an *Error of
// class protocol_error with RPCCode set; no answer within RequestTimeout is
// a timeout; a server that exits or drops the connection is unreachable
// (the session cannot be used further).
func (s *Session) CallTool(ctx context.Context, name string, arguments json.RawMessage) (*ToolResult, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(s.ctx, stop)()
	raw, err := s.p.sess.request(ctx, mcpwire.MethodToolsCall, map[string]any{"name": name, "arguments": arguments}, s.p.rt.opts.RequestTimeout)
	if err != nil {
		if ctx.Err() != nil && s.ctx.Err() != nil {
			err = abortCause(s.ctx, err)
		}
		pe := s.p.classify(StepCall, err)
		pe.Err = s.p.rt.red.err(pe.Err)
		return nil, pe
	}
	return s.toolResult(raw)
}

// toolResult reads the members of a CallToolResult replay needs.
func (s *Session) toolResult(raw json.RawMessage) (*ToolResult, error) {
	o, ok := jsonwire.NewObject(raw)
	if !ok {
		return nil, &Error{Class: ClassProtocolError, Step: StepCall, Err: fmt.Errorf("the tools/call result is not a JSON object")}
	}
	r := &ToolResult{}
	var text strings.Builder
	for {
		m, ok := o.Next()
		if !ok {
			break
		}
		switch {
		case jsonwire.KeyIs(m.Key, "isError"):
			r.IsError = jsonwire.IsTrue(m.Value)
		case jsonwire.KeyIs(m.Key, "structuredContent"):
			r.StructuredContent = s.p.rt.red.jsonText(m.Value)
		case jsonwire.KeyIs(m.Key, "content"):
			a, _ := jsonwire.NewArray(m.Value)
			for {
				item, ok := a.Next()
				if !ok {
					break
				}
				if t, ok := jsonwire.String(jsonwire.Lookup(item, "text")); ok && text.Len() < maxResultText {
					if text.Len() > 0 {
						text.WriteByte('\n')
					}
					text.WriteString(t)
				}
			}
		}
	}
	if o.Err() {
		return nil, &Error{Class: ClassProtocolError, Step: StepCall, Err: fmt.Errorf("the tools/call result is malformed JSON")}
	}
	r.Text = contract.TruncateBytes(s.p.rt.red.text(text.String()), maxResultText)
	return r, nil
}
