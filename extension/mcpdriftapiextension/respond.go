package mcpdriftapiextension

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
)

// Error codes (apiwire.ErrorDetail).
const (
	codeBadParameter     = "bad_parameter"
	codeUnauthorized     = "unauthorized"
	codeUnknownServer    = "unknown_server"
	codeUnknownTool      = "unknown_tool"
	codeUnknownDrift     = "unknown_drift"
	codeNoOpenDrift      = "no_open_drift"
	codeDriftMismatch    = "drift_mismatch"
	codeUnavailable      = "unavailable"
	codeNotFound         = "not_found"
	codeMethodNotAllowed = "method_not_allowed"
	codeUnsupportedMedia = "unsupported_media_type"
	codeTooLarge         = "request_too_large"
	codeInternal         = "internal"
)

// apiError is an error response on its way out.
type apiError struct {
	status int
	detail apiwire.ErrorDetail
}

func (e *apiError) Error() string { return e.detail.Message }

// maxEcho bounds what an error repeats of the request (a name, a value, a
// parameter): a client that sends 8,000 characters does not get them back.
const maxEcho = 80

// echo quotes what the client sent, cut to maxEcho characters.
func echo(s string) string { return strconv.Quote(contract.TruncateRunes(s, maxEcho)) }

func newAPIError(status int, code, message string) *apiError {
	return &apiError{status: status, detail: apiwire.ErrorDetail{Code: code, Message: message}}
}

func badParameter(param, message string) *apiError {
	e := newAPIError(http.StatusBadRequest, codeBadParameter, message)
	e.detail.Parameter = contract.TruncateRunes(param, maxEcho)
	return e
}

// apiHeaders marks every API response: JSON, never sniffed, never cached
// (statuses change from one probe to the next).
func apiHeaders(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
}

// writeJSON writes v with status 200.
func writeJSON(w http.ResponseWriter, v any) {
	if a, ok := v.(apiwire.JSONAppender); ok {
		body, err := a.AppendJSON(make([]byte, 0, 64<<10))
		if err != nil {
			writeError(w, newAPIError(http.StatusInternalServerError, codeInternal, "the response could not be encoded"))
			return
		}
		apiHeaders(w.Header())
		_, _ = w.Write(append(body, '\n'))
		return
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		writeError(w, newAPIError(http.StatusInternalServerError, codeInternal, "the response could not be encoded"))
		return
	}
	apiHeaders(w.Header())
	_, _ = w.Write(b.Bytes())
}

// writeError writes an error body with its status.
func writeError(w http.ResponseWriter, e *apiError) {
	b, _ := json.Marshal(apiwire.ErrorBody{Error: e.detail})
	apiHeaders(w.Header())
	w.WriteHeader(e.status)
	_, _ = w.Write(append(b, '\n'))
}
