package mcpdriftapiextension

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/mcpdrift/mcpdrift/dev/storagetest"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
)

// The handler tests run the extension on a loopback port with sources that
// answer from the documented examples (testdata/): the extension is an
// HTTP face on the views, and these tests pin that face. The receiver and
// the processor behind real views are run in integration_test.go.

// fakeDrift is a DriftSource answering from testdata.
type fakeDrift struct {
	mu       sync.Mutex
	servers  []apiwire.ServerStatus
	detail   apiwire.ServerDetail
	page     apiwire.DriftPage
	drift    apiwire.DriftDetail
	accepted []acceptCall
	err      error // returned by Accept when set
}

type acceptCall struct {
	server string
	req    apiwire.AcceptRequest
	by     controlplane.Principal
}

func readExample(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func newFakeDrift(t testing.TB) *fakeDrift {
	f := &fakeDrift{}
	var list apiwire.ServerList
	readExample(t, "servers.json", &list)
	f.servers = list.Servers
	readExample(t, "server.json", &f.detail)
	readExample(t, "drifts.json", &f.page)
	readExample(t, "drift.json", &f.drift)
	return f
}

func (f *fakeDrift) Servers() []apiwire.ServerStatus { return f.servers }

func (f *fakeDrift) Server(name string) (apiwire.ServerDetail, error) {
	for _, s := range f.servers {
		if s.Name == name {
			d := f.detail
			d.ServerStatus = s
			return d, nil
		}
	}
	return apiwire.ServerDetail{}, controlplane.ErrUnknownServer
}

func (f *fakeDrift) Drifts(name string, q controlplane.DriftQuery) (apiwire.DriftPage, error) {
	if _, err := f.Server(name); err != nil {
		return apiwire.DriftPage{}, err
	}
	p := f.page
	p.Server, p.Total = name, len(f.page.Drifts)
	var err error
	p.Drifts, p.Next, err = controlplane.Page(f.page.Drifts, func(d apiwire.Drift) string { return d.ID }, q)
	return p, err
}

func (f *fakeDrift) Drift(id string) (apiwire.DriftDetail, error) {
	if id == f.drift.ID {
		return f.drift, nil
	}
	return apiwire.DriftDetail{}, controlplane.ErrUnknownDrift
}

func (f *fakeDrift) Accept(_ context.Context, name string, req apiwire.AcceptRequest, by controlplane.Principal) (apiwire.AcceptResult, error) {
	if _, err := f.Server(name); err != nil {
		return apiwire.AcceptResult{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.accepted = append(f.accepted, acceptCall{name, req, by})
	if f.err != nil {
		return apiwire.AcceptResult{}, f.err
	}
	d := f.drift.Drift
	d.State, d.Accepted = apiwire.DriftAccepted, &apiwire.Acceptance{By: by.Name, At: time.Now().UTC(), Authenticated: by.Authenticated}
	if req.Comment != "" {
		d.Accepted.Comment = &req.Comment
	}
	d.ClosedAt = &d.Accepted.At
	return apiwire.AcceptResult{Server: name, Accepted: []apiwire.Drift{d}, At: d.Accepted.At, By: by.Name,
		BaselineDigest: d.CurrentContract, Status: apiwire.StatusUp}, nil
}

// fakeImpact is an ImpactSource answering from testdata.
type fakeImpact struct {
	window, recent time.Duration
	asked          []controlplane.ImpactQuery
	variantAsked   []controlplane.VariantQuery
}

func (f *fakeImpact) Windows() (time.Duration, time.Duration) { return f.window, f.recent }

func (f *fakeImpact) Impact(_ context.Context, q controlplane.ImpactQuery) (apiwire.Impact, error) {
	f.asked = append(f.asked, q)
	switch {
	case q.Server != "demo-tools":
		return apiwire.Impact{}, controlplane.ErrUnknownServer
	case q.Tool == "create_ticket":
		var out apiwire.Impact
		readExampleBytes(impactExample, &out)
		return out, nil
	case q.Tool == "get_forecast":
		var out apiwire.Impact
		readExampleBytes(noCallersExample, &out)
		return out, nil
	}
	return apiwire.Impact{}, controlplane.ErrUnknownTool
}

func (f *fakeImpact) DigestUsage(_ context.Context, q controlplane.DigestUsageQuery) (apiwire.DigestUsage, error) {
	switch {
	case q.Server != "demo-tools":
		return apiwire.DigestUsage{}, controlplane.ErrUnknownServer
	case q.Tool == "create_ticket":
		var out apiwire.DigestUsage
		readExampleBytes(digestsExample, &out)
		return out, nil
	}
	return apiwire.DigestUsage{}, controlplane.ErrUnknownTool
}

func (f *fakeImpact) VariantImpacts(_ context.Context, q controlplane.VariantQuery) ([]apiwire.VariantImpact, error) {
	f.variantAsked = append(f.variantAsked, q)
	if q.Server != "demo-tools" {
		return nil, controlplane.ErrUnknownServer
	}
	out := make([]apiwire.VariantImpact, len(q.Variants))
	for i := range out {
		readExampleBytes(variantImpactExample, &out[i])
	}
	return out, nil
}

var (
	variantImpactExample, _ = os.ReadFile("testdata/variant_impact.json")
	digestsExample, _       = os.ReadFile("testdata/digests.json")
	impactExample, _        = os.ReadFile("testdata/impact.json")
	noCallersExample, _     = os.ReadFile("testdata/impact_no_callers.json")
)

func readExampleBytes(b []byte, v any) { _ = json.Unmarshal(b, v) }

// api is a running extension and a client for it.
type api struct {
	t    testing.TB
	ext  *apiExtension
	base string
}

// startAPI starts the extension on a free loopback port; tweak adjusts the
// configuration, exts are the host's other extensions (auth, ...).
func startAPI(t testing.TB, tweak func(*Config), exts map[component.ID]component.Component) *api {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.NetAddr.Endpoint = "127.0.0.1:0"
	if tweak != nil {
		tweak(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ext := newAPIExtension(extensiontest.NewNopSettings(NewFactory().Type()), cfg)
	if exts == nil {
		exts = map[component.ID]component.Component{}
	}
	if err := ext.Start(context.Background(), storagetest.NewHost(exts)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ext.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return &api{t: t, ext: ext, base: "http://" + ext.addr.String()}
}

// withAuth configures the server auth extension id.
func withAuth(id component.ID) func(*Config) {
	return func(cfg *Config) {
		cfg.Auth = configoptional.Some(confighttp.AuthConfig{Config: configauth.Config{AuthenticatorID: id}})
	}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request; headers are name/value pairs.
func (a *api) do(method, path string, body string, headers ...string) response {
	a.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.base+path, r)
	if err != nil {
		a.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// get GETs path, checks the status and that the body matches the document
// for the route (route is the path pattern, e.g. /api/v1/servers/{name}).
func (a *api) get(route, path string, status int, headers ...string) response {
	a.t.Helper()
	r := a.do(http.MethodGet, path, "", headers...)
	a.check(http.MethodGet, route, path, status, r)
	return r
}

func (a *api) post(route, path, body string, status int, headers ...string) response {
	a.t.Helper()
	r := a.do(http.MethodPost, path, body, headers...)
	a.check(http.MethodPost, route, path, status, r)
	return r
}

func (a *api) check(method, route, path string, status int, r response) {
	a.t.Helper()
	if r.status != status {
		a.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		a.t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	checkResponse(a.t, method, route, status, r.body)
}

// errorOf decodes an error body.
func errorOf(t testing.TB, r response) apiwire.ErrorDetail {
	t.Helper()
	var e apiwire.ErrorBody
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("error body %s: %v", r.body, err)
	}
	return e.Error
}

func decode(t testing.TB, r response, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
}

// register registers fakes as the receiver and the processor would.
func (a *api) register(d controlplane.DriftSource, i controlplane.ImpactSource) {
	a.t.Helper()
	if d != nil {
		if _, err := a.ext.RegisterDriftSource(component.MustNewID("mcpdrift"), d); err != nil {
			a.t.Fatal(err)
		}
	}
	if i != nil {
		if _, err := a.ext.RegisterImpactSource(component.MustNewID("mcpimpact"), i); err != nil {
			a.t.Fatal(err)
		}
	}
}

// withHistory gives the fake a history of n drifts, newest first: the
// example's drifts, then older copies of its last one with ids of their
// own (a server that drifted all week).
func (f *fakeDrift) withHistory(n int) *fakeDrift {
	base := f.page.Drifts[len(f.page.Drifts)-1]
	for i := len(f.page.Drifts); i < n; i++ {
		d := base
		d.ID = fmt.Sprintf("%016x", 0xa000+i)
		d.DriftID = d.ID
		d.At = base.At.Add(-time.Duration(i) * time.Hour)
		d.Encoded = nil
		f.page.Drifts = append(f.page.Drifts, d)
	}
	f.page.Total = len(f.page.Drifts)
	return f
}
