package replay

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcpdrift/mcpdrift/probe"
)

// Outcome is how the server answered an old call.
type Outcome string

// Outcomes, from the best answer to an old call the new contract rejects
// to the worst.
const (
	// Graceful: a tool execution error (isError: true) whose text names
	// what changed (the parameter, the tool) or asks for a refresh; the
	// model sees it and can repair the call.
	Graceful Outcome = "graceful"
	// ToolError: a tool execution error that does not say what changed.
	ToolError Outcome = "tool_error"
	// ProtocolError: a JSON-RPC error. The spec prefers execution errors
	// for invalid input, since the model may never see a protocol error.
	ProtocolError Outcome = "protocol_error"
	// Accepted: the call succeeded. Fine when the new contract accepts it;
	// for a call the new contract rejects, the server silently
	// reinterpreted it.
	Accepted Outcome = "accepted"
	// Timeout: no answer within the request timeout.
	Timeout Outcome = "timeout"
	// Crash: the server exited or dropped the connection (or answered
	// with an HTTP server error).
	Crash Outcome = "crash"
	// Skipped: the call was not sent (a destructive tool, or the server
	// could not be reached again after a crash).
	Skipped Outcome = "skipped"
)

// outcomeRank orders outcomes for --fail-on; Skipped ranks lowest.
var outcomeRank = map[Outcome]int{Skipped: 0, Graceful: 1, ToolError: 2, ProtocolError: 3, Accepted: 4, Timeout: 5, Crash: 6}

// FailOnValues are the outcomes --fail-on takes (and "none").
var FailOnValues = []Outcome{Graceful, ToolError, ProtocolError, Accepted, Timeout, Crash}

// ParseOutcome reads a --fail-on value; "none" is the zero Outcome.
func ParseOutcome(s string) (Outcome, error) {
	if s == "none" {
		return "", nil
	}
	for _, o := range FailOnValues {
		if string(o) == s {
			return o, nil
		}
	}
	return "", fmt.Errorf("unknown outcome %q (want graceful, tool_error, protocol_error, accepted, timeout, crash or none)", s)
}

// Result is one replayed call and its grade.
type Result struct {
	Call
	Outcome Outcome `json:"outcome"`
	// Detail is the server's error text (redacted, cut) or the probe's
	// error; empty for an accepted call, whose content is not repeated.
	Detail string `json:"detail,omitempty"`
	// Verdict says in one line what the answer means.
	Verdict string `json:"verdict"`
	// Fails is set when the outcome reaches the gate's threshold (--fail-on).
	Fails bool `json:"fails"`
}

// rank is the outcome's rank for the gate: an accepted call the new
// contract accepts is the outcome wanted and ranks like a skip.
func (r Result) rank() int {
	if r.Outcome == Accepted && r.Expect == ExpectAccept {
		return 0
	}
	return outcomeRank[r.Outcome]
}

// Reaches reports whether the result is at or above the outcome threshold.
func (r Result) Reaches(threshold Outcome) bool {
	return threshold != "" && r.rank() >= outcomeRank[threshold]
}

// refreshHints are phrases that ask an agent to refresh its tool listing.
var refreshHints = []string{"refresh", "tools/list", "list_changed", "re-list", "relist", "list the tools"}

// maxDetail bounds Result.Detail.
const maxDetail = 300

// Grade judges the answer to a call: the result of CallTool, or its error.
func Grade(c Call, res *probe.ToolResult, err error) Result {
	r := Result{Call: c}
	var pe *probe.Error
	switch {
	case err == nil && !res.IsError:
		r.Outcome = Accepted
	case err == nil:
		r.Outcome, r.Detail = ToolError, cut(res.Text)
		if names(res.Text, c.names) {
			r.Outcome = Graceful
		}
	case errors.As(err, &pe) && pe.Class == probe.ClassTimeout:
		r.Outcome, r.Detail = Timeout, cut(pe.Error())
	case errors.As(err, &pe) && (pe.Class == probe.ClassUnreachable || pe.Class == probe.ClassHTTPStatus && pe.StatusCode >= 500):
		r.Outcome, r.Detail = Crash, cut(pe.Error())
	default:
		r.Outcome, r.Detail = ProtocolError, cut(err.Error())
	}
	r.Verdict = verdict(r)
	return r
}

// names reports whether an error text names one of the changed things or
// asks for a refresh.
func names(text string, subjects []string) bool {
	lower := strings.ToLower(text)
	for _, s := range subjects {
		if s != "" && strings.Contains(lower, strings.ToLower(s)) {
			return true
		}
	}
	for _, h := range refreshHints {
		if strings.Contains(lower, h) {
			return true
		}
	}
	return false
}

func verdict(r Result) string {
	if r.Expect == ExpectAccept {
		switch r.Outcome {
		case Accepted:
			return "the server kept compatibility: the old call still works"
		case Timeout, Crash:
			return "an old call the new contract still accepts hung or crashed the server"
		}
		return "an old call the new contract still accepts now fails"
	}
	switch r.Outcome {
	case Graceful:
		return "refused with a tool error that says what changed: an agent can repair the call"
	case ToolError:
		return "refused with a tool error that does not say what changed"
	case ProtocolError:
		return "refused with a JSON-RPC error, which the model may never see"
	case Accepted:
		return "the server accepted a call the new contract rejects: it silently reinterpreted it"
	case Timeout:
		return "the server did not answer in time"
	case Crash:
		return "the server crashed on the old call"
	}
	return ""
}

func cut(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxDetail {
		return s
	}
	n := maxDetail
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
