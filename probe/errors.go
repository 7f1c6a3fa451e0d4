package probe

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
)

// Class says why a probe failed. A failed probe is never drift: the receiver
// reports it as unavailability, keyed by class.
type Class string

// Error classes.
const (
	// ClassUnreachable: the server could not be reached or went away (DNS,
	// connection refused or reset, TLS handshake, command not found, the
	// child exited or closed stdout).
	ClassUnreachable Class = "unreachable"
	// ClassTimeout: the overall or a per-request timeout expired, or the
	// caller cancelled the probe (then errors.Is(err, context.Canceled)).
	ClassTimeout Class = "timeout"
	// ClassHTTPStatus: an HTTP status the probe cannot continue from
	// (5xx, 429, an unexpected 4xx, a redirect to another origin).
	ClassHTTPStatus Class = "http_status"
	// ClassAuthRequired: 401 (or 403 with a challenge); see
	// Error.ResourceMetadata for the protected-resource metadata URL.
	ClassAuthRequired Class = "auth_required"
	// ClassProtocolError: the server broke MCP or JSON-RPC: malformed JSON,
	// wrong content type, a JSON-RPC error for a required request, no
	// mutually supported protocol version, an unknown resultType.
	ClassProtocolError Class = "protocol_error"
	// ClassInvalidListing: a listing that has no digest (repeated member
	// name, definition without a string key, invalid UTF-8) or whose
	// pagination is broken (a cursor that loops, a missing list member).
	ClassInvalidListing Class = "invalid_listing"
	// ClassTooLarge: a response, SSE event, listing or definition exceeded
	// a configured limit.
	ClassTooLarge Class = "too_large"
)

// Step names what the probe was doing when it failed. List steps and the
// handshake steps are the JSON-RPC method names.
type Step string

// Steps of a probe.
const (
	StepConnect       Step = "connect" // spawning the child, the legacy SSE GET, transport detection
	StepDiscover      Step = mcpwire.MethodDiscover
	StepInitialize    Step = mcpwire.MethodInitialize
	StepInitialized   Step = mcpwire.NotifyInitialized
	StepListTools     Step = mcpwire.MethodToolsList
	StepListPrompts   Step = mcpwire.MethodPromptsList
	StepListResources Step = mcpwire.MethodResourcesList
	StepListTemplates Step = mcpwire.MethodResourceTemplatesList
	StepSettle        Step = "settle"   // waiting for list_changed notifications to stop
	StepSnapshot      Step = "snapshot" // assembling the snapshot from what was received
)

// listStep is the step (and JSON-RPC method) that lists one kind.
func listStep(k contract.Kind) Step {
	switch k {
	case contract.KindPrompt:
		return StepListPrompts
	case contract.KindResource:
		return StepListResources
	case contract.KindResourceTemplate:
		return StepListTemplates
	default:
		return StepListTools
	}
}

// Error is the error Probe returns; use errors.As to read it. Its message and
// fields never hold a secret (configured header values and those the
// HTTPClient sent, cookies, URL credentials or query, environment values,
// Target.Secrets): they are redacted before the error is built.
type Error struct {
	Class     Class
	Step      Step
	Transport string // transport in use when it failed (may be empty before detection)
	// StatusCode is the HTTP status for http_status and auth_required.
	StatusCode int
	// RPCCode is the JSON-RPC error code when the server answered a request
	// with an error (0 otherwise).
	RPCCode int64
	// ResourceMetadata is, for auth_required, the OAuth protected-resource
	// metadata URL: the resource_metadata parameter of WWW-Authenticate, else
	// the RFC 9728 well-known URL for the endpoint.
	ResourceMetadata string
	// Stderr is the (bounded, redacted) tail of a stdio server's stderr.
	Stderr string
	// Err is the underlying cause; its text is redacted.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("probe ")
	b.WriteString(string(e.Class))
	if e.Step != "" {
		b.WriteString(" at ")
		b.WriteString(string(e.Step))
	}
	if e.Transport != "" {
		b.WriteString(" (" + e.Transport + ")")
	}
	switch {
	case e.Err != nil: // its text gives the status and code
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	case e.StatusCode != 0:
		b.WriteString(": HTTP " + strconv.Itoa(e.StatusCode))
	case e.RPCCode != 0:
		b.WriteString(": JSON-RPC error " + strconv.FormatInt(e.RPCCode, 10))
	}
	if e.ResourceMetadata != "" {
		b.WriteString(" (resource metadata: " + e.ResourceMetadata + ")")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// failure builds an Error of a class; the step and transport are filled in
// by the probe as the error travels up.
func failure(class Class, format string, args ...any) *Error {
	return &Error{Class: class, Err: fmt.Errorf(format, args...)}
}

// asError returns err as an *Error, classifying errors that are not one yet:
// context expiry is a timeout, contract limit errors are too_large, other
// contract errors make an invalid listing, anything else is a protocol error.
func asError(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &Error{Class: ClassTimeout, Err: err}
	case isLimitError(err):
		return &Error{Class: ClassTooLarge, Err: err}
	case isListingError(err):
		return &Error{Class: ClassInvalidListing, Err: err}
	}
	return &Error{Class: ClassProtocolError, Err: err}
}

func isLimitError(err error) bool {
	return errors.Is(err, canon.ErrTooLarge) || errors.Is(err, canon.ErrTooDeep) ||
		errors.Is(err, contract.ErrTooMany) || errors.Is(err, canon.ErrStringTooLong)
}

func isListingError(err error) bool {
	var de *contract.DefinitionError
	return errors.As(err, &de) || errors.Is(err, canon.ErrDuplicateName) || errors.Is(err, contract.ErrNoName) ||
		errors.Is(err, canon.ErrInvalidUTF8) || errors.Is(err, contract.ErrNotAnObject) ||
		errors.Is(err, canon.ErrNumberRange) || errors.Is(err, contract.ErrUnknownFormat)
}

// at sets the step of err (when not yet set) and returns it as an *Error.
func at(step Step, err error) *Error {
	pe := asError(err)
	if pe.Step == "" {
		pe.Step = step
	}
	return pe
}

// rpcError is a JSON-RPC error the server answered with.
type rpcError struct {
	Code    int64
	Message string
	Data    []byte
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("server answered with error %d: %s", e.Code, contract.QuoteForDisplay(contract.TruncateBytes(e.Message, 200)))
}

// JSON-RPC error codes the 2026-07-28 revision defines. A server that answers
// with one of them is a modern server, whatever else went wrong.
const (
	codeMethodNotFound             = -32601
	codeHeaderMismatch             = -32020
	codeMissingRequiredClientCap   = -32021
	codeUnsupportedProtocolVersion = -32022
)

// isModernCode reports whether code is an error only a 2026-07-28+ server sends.
func isModernCode(code int64) bool {
	return code == codeHeaderMismatch || code == codeMissingRequiredClientCap || code == codeUnsupportedProtocolVersion
}
