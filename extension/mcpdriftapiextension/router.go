package mcpdriftapiextension

import (
	"net/http"
	"strings"
)

// route is one API endpoint. Each path takes one method (GET also answers
// HEAD); another gets a JSON 405 with Allow.
type route struct {
	method, path string
	serve        func(*http.Request) (any, *apiError)
}

// routes are the API's endpoints; openapi.json describes the same set
// (openapi_test.go checks that they agree).
func (e *apiExtension) routes() []route {
	return []route{
		{http.MethodGet, "/api/v1/info", e.info},
		{http.MethodGet, "/api/v1/openapi.json", nil},
		{http.MethodGet, "/api/v1/servers", e.listServers},
		{http.MethodGet, "/api/v1/servers/{name}", e.getServer},
		{http.MethodGet, "/api/v1/servers/{name}/drifts", e.listDrifts},
		{http.MethodGet, "/api/v1/drifts/{id}", e.getDrift},
		{http.MethodGet, "/api/v1/servers/{name}/impact", e.getImpact},
		{http.MethodGet, "/api/v1/servers/{name}/digests", e.getDigestUsage},
		{http.MethodPost, "/api/v1/servers/{name}/accept", e.accept},
	}
}

// newRouter serves the API under /api/ (behind authn, when set) and the
// dashboard everywhere else.
func newRouter(e *apiExtension, authn func(http.Handler) http.Handler) http.Handler {
	api := http.NewServeMux()
	for _, rt := range e.routes() {
		api.Handle(rt.path, rt.handler())
	}
	api.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, newAPIError(http.StatusNotFound, codeNotFound, "no such API route; GET /api/v1/openapi.json lists them"))
	})
	var apiHandler http.Handler = api
	if authn != nil {
		apiHandler = authn(api)
	}
	root := http.NewServeMux()
	root.Handle("/api/", apiHandler)
	root.Handle("/", staticHandler())
	return root
}

func (rt route) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != rt.method && (rt.method != http.MethodGet || r.Method != http.MethodHead) {
			allow := rt.method
			if rt.method == http.MethodGet {
				allow += ", " + http.MethodHead
			}
			w.Header().Set("Allow", allow)
			writeError(w, newAPIError(http.StatusMethodNotAllowed, codeMethodNotAllowed,
				r.Method+" is not allowed on "+rt.path+"; use "+strings.ReplaceAll(allow, ", ", " or ")))
			return
		}
		if err := onlyParams(r.URL.Query()); rt.serve == nil && err != nil {
			writeError(w, err)
			return
		}
		if rt.serve == nil { // the OpenAPI document, served as written
			apiHeaders(w.Header())
			_, _ = w.Write(openAPI)
			return
		}
		v, err := rt.serve(r)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, v)
	})
}
