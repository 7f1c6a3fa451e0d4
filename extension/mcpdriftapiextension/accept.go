package mcpdriftapiextension

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/collector/client"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
)

// Bounds of an accept request.
const (
	maxAcceptBody = 64 << 10
	maxByLen      = 256
	maxCommentLen = 4096
)

// accept closes a server's open drift. The body must be JSON: a cross-site
// form can post text/plain or a form encoding with the browser's cached
// credentials, but not application/json without a CORS preflight, which the
// configured cors settings decide.
func (e *apiExtension) accept(r *http.Request) (any, *apiError) {
	if err := onlyParams(r.URL.Query()); err != nil {
		return nil, err
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, newAPIError(http.StatusUnsupportedMediaType, codeUnsupportedMedia,
			"the body must be Content-Type: application/json ({} accepts the newest open drift)")
	}
	req, apiErr := readAcceptRequest(r)
	if apiErr != nil {
		return nil, apiErr
	}
	name := r.PathValue("name")
	ds, apiErr := e.drifts()
	if apiErr != nil {
		return nil, apiErr
	}
	by := principal(r, req.By)
	for _, d := range ds {
		out, err := d.src.Accept(r.Context(), name, req, by)
		switch {
		case errors.Is(err, controlplane.ErrUnknownServer):
			continue
		case errors.Is(err, controlplane.ErrNoOpenDrift):
			return nil, newAPIError(http.StatusConflict, codeNoOpenDrift, echo(name)+" has no open drift to accept")
		case errors.Is(err, controlplane.ErrDriftMismatch):
			return nil, newAPIError(http.StatusConflict, codeDriftMismatch,
				fmt.Sprintf("drift %s is not the newest open drift of %s (GET its drifts again, then accept what you see)", echo(req.Drift), echo(name)))
		case err != nil:
			return nil, e.internal(err)
		}
		return out, nil
	}
	return nil, unknownServer(name)
}

func readAcceptRequest(r *http.Request) (apiwire.AcceptRequest, *apiError) {
	var req apiwire.AcceptRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, maxAcceptBody+1))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return req, newAPIError(http.StatusRequestEntityTooLarge, codeTooLarge, fmt.Sprintf("the body is larger than %d bytes", tooLarge.Limit))
		}
		return req, badParameter("body", "the body could not be read")
	}
	if len(body) > maxAcceptBody {
		return req, newAPIError(http.StatusRequestEntityTooLarge, codeTooLarge, fmt.Sprintf("the body is larger than %d bytes", maxAcceptBody))
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return req, nil
	}
	// null, [] or "x" would decode into the zero request and accept as
	// anonymous: only an object says what the client meant.
	if trimmed[0] != '{' {
		return req, badParameter("body", "the body must be a JSON object with optional drift, by and comment ({} accepts the newest open drift)")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, badParameter("body", "the body must be a JSON object with optional drift, by and comment: "+err.Error())
	}
	if dec.More() {
		return req, badParameter("body", "the body must hold one JSON object")
	}
	switch {
	case !displayable(req.By, false) || len(req.By) > maxByLen:
		return req, badParameter("by", fmt.Sprintf("by must be one line of UTF-8 of at most %d bytes, without control, bidi or invisible characters", maxByLen))
	case !displayable(req.Comment, true) || len(req.Comment) > maxCommentLen:
		return req, badParameter("comment", fmt.Sprintf("comment must be UTF-8 of at most %d bytes, without control (other than newline and tab), bidi or invisible characters", maxCommentLen))
	case len(req.Drift) > 64:
		return req, badParameter("drift", "drift must be a drift id")
	}
	return req, nil
}

// displayable reports whether s is UTF-8 that shows as what it says: the
// audit record names who accepted, and a U+202E or a zero-width character
// would let a name read as another on screen. Line breaks and tabs pass
// only when multiline. The JSON decoder turns bytes that are not UTF-8 into
// U+FFFD, which HasInvisible counts: a name sent as invalid UTF-8 is
// refused, not stored mangled.
func displayable(s string, multiline bool) bool {
	if !utf8.ValidString(s) || contract.HasInvisible(s) {
		return false
	}
	return multiline || !strings.ContainsAny(s, "\n\r\t")
}

// principalAttributes are the auth data attributes that name the
// authenticated client, in the order they are tried: basicauth sets
// username; OIDC-style authenticators set subject.
var principalAttributes = []string{"username", "subject", "sub"}

// principal names who accepts: the auth extension's principal when it
// established one, else what the request says, else anonymous.
func principal(r *http.Request, claimed string) controlplane.Principal {
	if auth := client.FromContext(r.Context()).Auth; auth != nil {
		for _, attr := range principalAttributes {
			if v, ok := auth.GetAttribute(attr).(string); ok && v != "" {
				return controlplane.Principal{Name: v, Authenticated: true}
			}
		}
	}
	if claimed != "" {
		return controlplane.Principal{Name: claimed}
	}
	return controlplane.Principal{Name: "anonymous"}
}
