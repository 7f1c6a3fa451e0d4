package replay

import (
	"context"
	"errors"

	"github.com/mcpdrift/mcpdrift/probe"
)

// Opener opens a session with the server under test (probe.Open with the
// target and options of the run).
type Opener func(ctx context.Context) (*probe.Session, error)

// maxReopens bounds how often Run connects again after a crash.
const maxReopens = 3

// Run sends the calls in order over s and grades each answer. A call the
// plan skips is not sent. When the server crashes (a stdio server exits,
// an HTTP server drops the connection) or the session's time runs out,
// another session is opened for the calls that remain, up to three times;
// after that they are skipped. Run closes every session it opened, but
// not s.
func Run(ctx context.Context, s *probe.Session, open Opener, calls []Call) []Result {
	out := make([]Result, 0, len(calls))
	reopens := 0
	var opened *probe.Session
	defer func() {
		if opened != nil {
			opened.Close()
		}
	}()
	for _, c := range calls {
		if c.Skip != "" {
			out = append(out, Result{Call: c, Outcome: Skipped, Detail: c.Skip, Verdict: "not sent"})
			continue
		}
		if ctx.Err() != nil {
			out = append(out, Result{Call: c, Outcome: Skipped, Detail: "the replay was cancelled or ran out of time", Verdict: "not sent"})
			continue
		}
		if s != nil && s.Expired() { // the session's time ran out: a fresh one for the rest
			if s == opened {
				opened.Close()
				opened = nil
			}
			s = nil
		}
		if s == nil {
			if reopens >= maxReopens {
				out = append(out, Result{Call: c, Outcome: Skipped, Detail: "the server crashed too often to go on", Verdict: "not sent"})
				continue
			}
			reopens++
			var err error
			if s, err = open(ctx); err != nil {
				out = append(out, Result{Call: c, Outcome: Skipped, Detail: cut(err.Error()), Verdict: "not sent: the server could not be reached again"})
				s = nil
				continue
			}
			opened = s
		}
		res, err := s.CallTool(ctx, c.Tool, c.Arguments)
		r := Grade(c, res, err)
		out = append(out, r)
		if r.Outcome == Crash || lost(err) {
			if s == opened {
				opened.Close()
				opened = nil
			}
			s = nil
		}
	}
	return out
}

// lost reports an error after which the session cannot be used: the
// connection is gone.
func lost(err error) bool {
	var pe *probe.Error
	return errors.As(err, &pe) && pe.Class == probe.ClassUnreachable
}
