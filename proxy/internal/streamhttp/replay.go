package streamhttp

import "net/http"

// Replayable reports whether req's body can be sent again (it has none, or
// GetBody gives it anew).
func Replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// Resend is req to send once more, its body anew from GetBody; nil when the
// body cannot be had again.
func Resend(req *http.Request) *http.Request {
	if !Replayable(req) {
		return nil
	}
	r := req.WithContext(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil
		}
		r.Body = body
	}
	return r
}
