package mcpdriftapiextension

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"unicode/utf8"

	"go.opentelemetry.io/collector/client"

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
			return nil, newAPIError(http.StatusConflict, codeNoOpenDrift, fmt.Sprintf("%q has no open drift to accept", name))
		case errors.Is(err, controlplane.ErrDriftMismatch):
			return nil, newAPIError(http.StatusConflict, codeDriftMismatch,
				fmt.Sprintf("drift %q is not the newest open drift of %q (GET its drifts again, then accept what you see)", req.Drift, name))
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
	if len(bytes.TrimSpace(body)) == 0 {
		return req, nil
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
	case !utf8.ValidString(req.By) || len(req.By) > maxByLen:
		return req, badParameter("by", fmt.Sprintf("by must be UTF-8 of at most %d bytes", maxByLen))
	case !utf8.ValidString(req.Comment) || len(req.Comment) > maxCommentLen:
		return req, badParameter("comment", fmt.Sprintf("comment must be UTF-8 of at most %d bytes", maxCommentLen))
	case len(req.Drift) > 64:
		return req, badParameter("drift", "drift must be a drift id")
	}
	return req, nil
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
