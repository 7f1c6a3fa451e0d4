package mcpdriftapiextension

import (
	"net/http"
	"net/url"

	"go.opentelemetry.io/collector/extension/extensionauth"
)

// authenticate guards a handler with a server auth extension, as
// confighttp's own interceptor does for a whole server (request_params
// copied from the query into the headers the extension sees), but answers a
// refusal with the API's JSON error, and never with the extension's error
// text: that text may quote what the client sent.
func authenticate(server extensionauth.Server, params []string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sources := r.Header
			if len(params) > 0 {
				sources = r.Header.Clone()
				query := r.URL.Query()
				for _, p := range params {
					if v, ok := query[p]; ok {
						sources[p] = v
					}
				}
			}
			ctx, err := server.Authenticate(r.Context(), sources)
			if err != nil {
				writeError(w, newAPIError(http.StatusUnauthorized, codeUnauthorized, "authentication required: the request did not satisfy the control plane's auth extension"))
				return
			}
			r = r.WithContext(ctx)
			if len(params) > 0 { // the handlers see no credential, and refuse no parameter they do not know
				r.URL = withoutParams(r.URL, params)
			}
			next.ServeHTTP(w, r)
		})
	}
}

func withoutParams(u *url.URL, params []string) *url.URL {
	q := u.Query()
	for _, p := range params {
		q.Del(p)
	}
	c := *u
	c.RawQuery = q.Encode()
	return &c
}
