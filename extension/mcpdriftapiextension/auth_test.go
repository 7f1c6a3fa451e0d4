package mcpdriftapiextension

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/basicauthextension"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/bearertokenauthextension"
	"go.opentelemetry.io/collector/component"

	"github.com/mcpdrift/mcpdrift/dev/storagetest"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
)

const apiToken = "s3cr3t-token-for-the-api"

func bearerAuth(t *testing.T) map[component.ID]component.Component {
	f := bearertokenauthextension.NewFactory()
	cfg := f.CreateDefaultConfig().(*bearertokenauthextension.Config)
	cfg.BearerToken = apiToken
	return map[component.ID]component.Component{component.MustNewID("bearertokenauth"): storagetest.Extension(t, f, cfg)}
}

func basicAuth(t *testing.T) map[component.ID]component.Component {
	f := basicauthextension.NewFactory()
	cfg := f.CreateDefaultConfig().(*basicauthextension.Config)
	cfg.Htpasswd = &basicauthextension.HtpasswdSettings{Inline: "alice:wonderland\n"}
	return map[component.ID]component.Component{component.MustNewID("basicauth"): storagetest.Extension(t, f, cfg)}
}

// TestAuthRequired: with an auth extension every API route refuses a
// request without valid credentials, with the API's JSON error and without
// quoting what was sent; the dashboard's files stay public (no data).
func TestAuthRequired(t *testing.T) {
	a := startAPI(t, withAuth(component.MustNewID("bearertokenauth")), bearerAuth(t))
	a.register(newFakeDrift(t), nil)
	for _, rt := range a.ext.routes() {
		path := strings.NewReplacer("{name}", "demo-tools", "{id}", "abc").Replace(rt.path)
		for _, auth := range []string{"", "Bearer wrong-token", "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:"+apiToken)), apiToken} {
			r := a.do(rt.method, path, "{}", "Authorization", auth, "Content-Type", "application/json")
			a.check(rt.method, rt.path, path, http.StatusUnauthorized, r)
			if e := errorOf(t, r); e.Code != codeUnauthorized || strings.Contains(string(r.body), "wrong-token") || strings.Contains(string(r.body), apiToken) {
				t.Errorf("%s %s with %q: %s", rt.method, path, auth, r.body)
			}
		}
	}
	a.get("/api/v1/servers", "/api/v1/servers", http.StatusOK, "Authorization", "Bearer "+apiToken)
	a.post("/api/v1/servers/{name}/accept", "/api/v1/servers/demo-tools/accept", "{}", http.StatusOK,
		"Authorization", "Bearer "+apiToken, "Content-Type", "application/json")
	if r := a.do(http.MethodGet, "/", ""); r.status != http.StatusOK {
		t.Errorf("dashboard behind auth: %d", r.status)
	}
}

// TestAuthPrincipal: the basicauth username is who accepted, marked
// authenticated; a by in the body cannot override it.
func TestAuthPrincipal(t *testing.T) {
	a := startAPI(t, withAuth(component.MustNewID("basicauth")), basicAuth(t))
	d := newFakeDrift(t)
	a.register(d, nil)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:wonderland"))
	var res apiwire.AcceptResult
	decode(t, a.post("/api/v1/servers/{name}/accept", "/api/v1/servers/demo-tools/accept", `{"by":"mallory"}`, http.StatusOK,
		"Authorization", basic, "Content-Type", "application/json"), &res)
	if got := d.accepted[0].by; got != (controlplane.Principal{Name: "alice", Authenticated: true}) || res.By != "alice" {
		t.Errorf("principal %+v, result by %q", got, res.By)
	}
	a.get("/api/v1/servers", "/api/v1/servers", http.StatusUnauthorized, "Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("alice:rabbit")))
}

// TestAuthRequestParams: a credential taken from the query (request_params)
// reaches the auth extension and not the handlers, which would refuse it as
// an unknown parameter.
func TestAuthRequestParams(t *testing.T) {
	a := startAPI(t, func(cfg *Config) {
		withAuth(component.MustNewID("bearertokenauth"))(cfg)
		cfg.Auth.Get().RequestParameters = []string{"Authorization"}
	}, bearerAuth(t))
	a.register(newFakeDrift(t), nil)
	a.get("/api/v1/servers", "/api/v1/servers?Authorization=Bearer%20"+apiToken, http.StatusOK)
	a.get("/api/v1/servers/{name}/drifts", "/api/v1/servers/demo-tools/drifts?limit=1&Authorization=Bearer%20"+apiToken, http.StatusOK)
	a.get("/api/v1/servers", "/api/v1/servers?Authorization=Bearer%20nope", http.StatusUnauthorized)
}
