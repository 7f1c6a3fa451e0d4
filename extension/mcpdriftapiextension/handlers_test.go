package mcpdriftapiextension

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
)

func TestInfo(t *testing.T) {
	a := startAPI(t, nil, nil)
	var info apiwire.Info
	decode(t, a.get("/api/v1/info", "/api/v1/info", http.StatusOK), &info)
	if info.Drift.Available || info.Impact.Available || info.Drift.Message == "" || info.Impact.Message == "" {
		t.Errorf("nothing registered, got %+v", info)
	}
	a.register(newFakeDrift(t), &fakeImpact{window: 24 * time.Hour, recent: time.Hour})
	decode(t, a.get("/api/v1/info", "/api/v1/info", http.StatusOK), &info)
	if !info.Drift.Available || !info.Impact.Available || info.Impact.WindowHours != 24 || info.Impact.RecentWindowHours != 1 ||
		info.Drift.Components[0] != "mcpdrift" || info.Impact.Components[0] != "mcpimpact" {
		t.Errorf("both registered, got %+v", info)
	}
}

// TestUnavailable: with one part missing (tier 1 or tier 2 alone), its
// routes answer 503 saying which component is missing; the other part works.
func TestUnavailable(t *testing.T) {
	a := startAPI(t, nil, nil)
	a.register(nil, &fakeImpact{window: 24 * time.Hour, recent: time.Hour})
	for _, c := range []struct{ route, path string }{
		{"/api/v1/servers", "/api/v1/servers"},
		{"/api/v1/servers/{name}", "/api/v1/servers/demo-tools"},
		{"/api/v1/servers/{name}/drifts", "/api/v1/servers/demo-tools/drifts"},
		{"/api/v1/drifts/{id}", "/api/v1/drifts/abc"},
	} {
		e := errorOf(t, a.get(c.route, c.path, http.StatusServiceUnavailable))
		if e.Code != codeUnavailable || !strings.Contains(e.Message, "mcpdrift receiver") {
			t.Errorf("%s: %+v", c.path, e)
		}
	}
	a.post("/api/v1/servers/{name}/accept", "/api/v1/servers/demo-tools/accept", "{}", http.StatusServiceUnavailable, "Content-Type", "application/json")
	a.get("/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=create_ticket", http.StatusOK)

	b := startAPI(t, nil, nil)
	b.register(newFakeDrift(t), nil)
	e := errorOf(t, b.get("/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=create_ticket", http.StatusServiceUnavailable))
	if !strings.Contains(e.Message, "mcpimpact processor") {
		t.Errorf("impact without processor: %+v", e)
	}
	b.get("/api/v1/servers", "/api/v1/servers", http.StatusOK)
}

func TestServers(t *testing.T) {
	a := startAPI(t, nil, nil)
	a.register(newFakeDrift(t), nil)
	var list apiwire.ServerList
	decode(t, a.get("/api/v1/servers", "/api/v1/servers", http.StatusOK), &list)
	want := apiwire.StatusSummary{Total: 4, Up: 1, Drifted: 1, Down: 1, Pending: 1}
	if list.Summary != want {
		t.Errorf("summary %+v, want %+v", list.Summary, want)
	}
	for i := 1; i < len(list.Servers); i++ {
		if list.Servers[i-1].Name > list.Servers[i].Name {
			t.Errorf("servers not by name: %s before %s", list.Servers[i-1].Name, list.Servers[i].Name)
		}
	}
	var d apiwire.ServerDetail
	decode(t, a.get("/api/v1/servers/{name}", "/api/v1/servers/demo-tools", http.StatusOK), &d)
	if d.Name != "demo-tools" || len(d.Snapshot) < 100 {
		t.Errorf("server: %+v", d.ServerStatus)
	}
	if e := errorOf(t, a.get("/api/v1/servers/{name}", "/api/v1/servers/nope", http.StatusNotFound)); e.Code != codeUnknownServer || !strings.Contains(e.Message, `"nope"`) {
		t.Errorf("unknown server: %+v", e)
	}
	// A name with a slash, escaped, is one path segment.
	a.get("/api/v1/servers/{name}", "/api/v1/servers/a%2Fb", http.StatusNotFound)
}

// TestMixedVariantImpact: a mixed server's status, in the list and alone,
// carries each variant's impact as the processor answers it, asked with the
// variant's changes and the baseline's and the variant's tool digests; the
// baseline carries none, and without a processor no variant does. The
// impact of a tool a variant changes lists that variant.
func TestMixedVariantImpact(t *testing.T) {
	f := newFakeDrift(t)
	change := contract.Change{Rule: "input.property.added_required", Severity: contract.Breaking, Subject: contract.KindTool, Name: "create_ticket", Path: "/inputSchema/required"}
	for i := range f.servers {
		if f.servers[i].Name == "demo-tools" {
			f.servers[i].Mixed = true
			f.servers[i].Variants = []apiwire.MixedVariant{
				{Digest: strings.Repeat("a", 64), Count: 9, Share: 0.9, Baseline: true, ToolDigests: map[string]string{"create_ticket": "d-a"}},
				{Digest: strings.Repeat("b", 64), Count: 1, Share: 0.1, Severity: "breaking", Summary: "create_ticket: required param project added",
					Changes: []contract.Change{change}, ToolDigests: map[string]string{"create_ticket": "d-b"}},
			}
		}
	}
	im := &fakeImpact{window: 24 * time.Hour, recent: time.Hour}
	a := startAPI(t, nil, nil)
	a.register(f, im)
	var d apiwire.ServerDetail
	decode(t, a.get("/api/v1/servers/{name}", "/api/v1/servers/demo-tools", http.StatusOK), &d)
	if len(d.Variants) != 2 || d.Variants[0].Impact != nil {
		t.Fatalf("variants %+v: want the baseline without an impact", d.Variants)
	}
	imp := d.Variants[1].Impact
	if imp == nil || imp.HurtNow.Agents != 1 || len(imp.Tools) != 1 || *imp.Tools[0].Agents[0].Agent != "release-bot" || imp.Tools[0].Agents[0].Status != "hurt_now" {
		t.Fatalf("the variant's impact %+v, want the example's (release-bot hurt now)", imp)
	}
	want := controlplane.VariantQuery{Server: "demo-tools", Baseline: map[string]string{"create_ticket": "d-a"},
		Variants: []controlplane.Variant{{Changes: []contract.Change{change}, ToolDigests: map[string]string{"create_ticket": "d-b"}}}}
	if len(im.variantAsked) != 1 || !reflect.DeepEqual(im.variantAsked[0], want) {
		t.Errorf("asked %+v, want %+v", im.variantAsked, want)
	}
	var list apiwire.ServerList
	decode(t, a.get("/api/v1/servers", "/api/v1/servers", http.StatusOK), &list)
	for _, s := range list.Servers {
		if s.Name == "demo-tools" && (len(s.Variants) != 2 || s.Variants[1].Impact == nil) {
			t.Errorf("the list's demo-tools lacks the variant's impact: %+v", s.Variants)
		}
	}

	// The impact of one tool carries the variants that change it, asked
	// with that tool's changes only, over the impact's own window.
	im.variantAsked = nil
	var imp1 apiwire.Impact
	decode(t, a.get("/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=create_ticket&hours=2", http.StatusOK), &imp1)
	if len(imp1.Variants) != 1 || imp1.Variants[0].Digest != strings.Repeat("b", 64) || imp1.Variants[0].Share != 0.1 ||
		imp1.Variants[0].Impact.HurtNow.Agents != 1 {
		t.Errorf("impact variants %+v, want the canary with its impact", imp1.Variants)
	}
	want.Window = 2 * time.Hour
	if len(im.variantAsked) != 1 || !reflect.DeepEqual(im.variantAsked[0], want) {
		t.Errorf("impact asked %+v, want %+v", im.variantAsked, want)
	}
	im.variantAsked = nil
	var other apiwire.Impact
	decode(t, a.get("/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=get_forecast", http.StatusOK), &other)
	if other.Variants != nil || len(im.variantAsked) != 0 {
		t.Errorf("a tool no variant changes: variants %+v, asked %+v", other.Variants, im.variantAsked)
	}

	b := startAPI(t, nil, nil)
	b.register(f, nil)
	var alone apiwire.ServerDetail
	decode(t, b.get("/api/v1/servers/{name}", "/api/v1/servers/demo-tools", http.StatusOK), &alone)
	if len(alone.Variants) != 2 || alone.Variants[1].Impact != nil {
		t.Errorf("variants without a processor: %+v", alone.Variants)
	}
}

// TestEchoBounded: what a client sent comes back in an error bounded, so
// an 8,000-character name is not answered with 8,000 characters.
func TestEchoBounded(t *testing.T) {
	a := startAPI(t, nil, nil)
	a.register(newFakeDrift(t), &fakeImpact{window: 24 * time.Hour, recent: time.Hour})
	long := strings.Repeat("n", 8000)
	for _, c := range []struct {
		route, path string
		status      int
	}{
		{"/api/v1/servers/{name}", "/api/v1/servers/" + long, http.StatusNotFound},
		{"/api/v1/servers/{name}/drifts", "/api/v1/servers/" + long + "/drifts", http.StatusNotFound},
		{"/api/v1/drifts/{id}", "/api/v1/drifts/" + long, http.StatusNotFound},
		{"/api/v1/servers/{name}/impact", "/api/v1/servers/" + long + "/impact?tool=x", http.StatusNotFound},
		{"/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=" + long, http.StatusNotFound},
		{"/api/v1/servers/{name}/drifts", "/api/v1/servers/demo-tools/drifts?limit=" + long, http.StatusBadRequest},
		{"/api/v1/servers", "/api/v1/servers?" + long + "=1", http.StatusBadRequest},
	} {
		r := a.get(c.route, c.path, c.status)
		if e := errorOf(t, r); len(r.body) > 400 || !strings.Contains(e.Message, "nnn…") {
			t.Errorf("%.60s: %d bytes: %.200s", c.path, len(r.body), r.body)
		}
	}
	r := a.post("/api/v1/servers/{name}/accept", "/api/v1/servers/"+long+"/accept", "{}", http.StatusNotFound, "Content-Type", "application/json")
	if len(r.body) > 400 {
		t.Errorf("accept of an unknown server: %d bytes", len(r.body))
	}
}

// TestBadParameters: every bad parameter is a 400 that names it.
func TestBadParameters(t *testing.T) {
	a := startAPI(t, nil, nil)
	a.register(newFakeDrift(t), &fakeImpact{window: 24 * time.Hour, recent: time.Hour})
	cases := []struct{ route, path, param string }{
		{"/api/v1/servers/{name}/drifts", "/api/v1/servers/demo-tools/drifts?limit=0", "limit"},
		{"/api/v1/servers/{name}/drifts", "/api/v1/servers/demo-tools/drifts?limit=1001", "limit"},
		{"/api/v1/servers/{name}/drifts", "/api/v1/servers/demo-tools/drifts?limit=ten", "limit"},
		{"/api/v1/servers/{name}/drifts", "/api/v1/servers/demo-tools/drifts?limit=1&limit=2", "limit"},
		{"/api/v1/servers/{name}/drifts", "/api/v1/servers/demo-tools/drifts?max=3", "max"},
		{"/api/v1/servers", "/api/v1/servers?status=UP", "status"},
		{"/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact", "tool"},
		{"/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=", "tool"},
		{"/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool_name=create_ticket&hours=1", "tool_name"},
		{"/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=create_ticket&hours=0", "hours"},
		{"/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=create_ticket&hours=-2", "hours"},
		{"/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=create_ticket&hours=NaN", "hours"},
		{"/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=create_ticket&hours=25", "hours"},
		{"/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=create_ticket&hours=1e400", "hours"},
		{"/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=create_ticket&hours=1e300", "hours"},
		{"/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=create_ticket&hours=Inf", "hours"},
		{"/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=create_ticket&hours=day", "hours"},
	}
	for _, c := range cases {
		e := errorOf(t, a.get(c.route, c.path, http.StatusBadRequest))
		if e.Code != codeBadParameter || e.Parameter != c.param || !strings.Contains(e.Message, c.param) {
			t.Errorf("%s: %+v, want parameter %q", c.path, e, c.param)
		}
	}
}

func TestDrifts(t *testing.T) {
	a := startAPI(t, nil, nil)
	a.register(newFakeDrift(t), nil)
	var p apiwire.DriftPage
	decode(t, a.get("/api/v1/servers/{name}/drifts", "/api/v1/servers/demo-tools/drifts", http.StatusOK), &p)
	if len(p.Drifts) != 2 || p.Total != 2 {
		t.Errorf("default page: %d drifts of %d", len(p.Drifts), p.Total)
	}
	decode(t, a.get("/api/v1/servers/{name}/drifts", "/api/v1/servers/demo-tools/drifts?limit=1", http.StatusOK), &p)
	if len(p.Drifts) != 1 {
		t.Errorf("limit=1: %d drifts", len(p.Drifts))
	}
	a.get("/api/v1/servers/{name}/drifts", "/api/v1/servers/nope/drifts", http.StatusNotFound)
	var d apiwire.DriftDetail
	decode(t, a.get("/api/v1/drifts/{id}", "/api/v1/drifts/"+p.Drifts[0].ID, http.StatusOK), &d)
	if len(d.Definitions) != 3 || d.Definitions[0].Before == nil || d.Definitions[0].After == nil {
		t.Errorf("drift definitions: %+v", d.Definitions)
	}
	if e := errorOf(t, a.get("/api/v1/drifts/{id}", "/api/v1/drifts/0000", http.StatusNotFound)); e.Code != codeUnknownDrift {
		t.Errorf("unknown drift: %+v", e)
	}
}

// TestDriftPaging: the history is paged with before and next, to the
// oldest drift.
func TestDriftPaging(t *testing.T) {
	a := startAPI(t, nil, nil)
	a.register(newFakeDrift(t).withHistory(230), nil)
	const route = "/api/v1/servers/{name}/drifts"
	var ids []string
	path := "/api/v1/servers/demo-tools/drifts?limit=100"
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatalf("paging does not end: %d drifts", len(ids))
		}
		var p apiwire.DriftPage
		decode(t, a.get(route, path, http.StatusOK), &p)
		for _, d := range p.Drifts {
			ids = append(ids, d.ID)
		}
		if p.Total != 230 {
			t.Errorf("total %d", p.Total)
		}
		if p.Next == "" {
			break
		}
		if p.Next != p.Drifts[len(p.Drifts)-1].ID {
			t.Errorf("next %q is not the page's last drift", p.Next)
		}
		path = "/api/v1/servers/demo-tools/drifts?limit=100&before=" + p.Next
	}
	if len(ids) != 230 || ids[0] != "91f3ecb6ead24f65" || ids[229] != fmt.Sprintf("%016x", 0xa000+229) {
		t.Errorf("paged %d drifts, %q to %q", len(ids), ids[0], ids[len(ids)-1])
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("drift %s on two pages", id)
		}
		seen[id] = true
	}
	for _, q := range []string{"before=", "before=0000000000000000", "before=a&before=b"} {
		if e := errorOf(t, a.get(route, "/api/v1/servers/demo-tools/drifts?"+q, http.StatusBadRequest)); e.Parameter != "before" {
			t.Errorf("%s: %+v", q, e)
		}
	}
}

// TestNextStep: an open drift says what to do, from the impact of its
// changed tools; a closed one says nothing.
func TestNextStep(t *testing.T) {
	const route, path = "/api/v1/drifts/{id}", "/api/v1/drifts/91f3ecb6ead24f65"
	get := func(a *api) *apiwire.NextStep {
		t.Helper()
		var d apiwire.DriftDetail
		decode(t, a.get(route, path, http.StatusOK), &d)
		return d.NextStep
	}
	// The example: a breaking change, two agents with sessions failed or
	// still stale since it.
	a := startAPI(t, nil, nil)
	a.register(newFakeDrift(t), &fakeImpact{window: 24 * time.Hour, recent: time.Hour})
	s := get(a)
	if s == nil || s.Action != apiwire.StepRollback || !s.ImpactKnown || s.Rollback == nil || s.Rollback.Contract != "f35a9f28db9e36cf2583ebcdeb99f80a53fd712a06a1e6fd3d6f813976854aef" ||
		s.Rollback.ServerVersion == nil || *s.Rollback.ServerVersion != "0.9.0" || len(s.Agents) != 2 || *s.Agents[0].Agent != "planner" ||
		!strings.Contains(s.Summary, "roll demo-tools back to contract f35a9f28db9e (version 0.9.0), or restart or update planner, researcher") {
		t.Errorf("rollback: %+v", s)
	}
	// Nobody hurt: every session recovered.
	b := startAPI(t, nil, nil)
	b.register(newFakeDrift(t), recoveredImpact{&fakeImpact{window: 24 * time.Hour, recent: time.Hour}})
	if s := get(b); s == nil || s.Action != apiwire.StepAccept || len(s.Agents) != 0 || s.ToolsChecked != 3 {
		t.Errorf("nobody hurt: %+v", s)
	}
	// No processor: nobody can say.
	c := startAPI(t, nil, nil)
	c.register(newFakeDrift(t), nil)
	if s := get(c); s == nil || s.Action != apiwire.StepReview || s.ImpactKnown || s.Rollback == nil {
		t.Errorf("no processor: %+v", s)
	}
	// A closed drift: no step.
	f := newFakeDrift(t)
	f.drift.State = apiwire.DriftAccepted
	d := startAPI(t, nil, nil)
	d.register(f, &fakeImpact{window: 24 * time.Hour, recent: time.Hour})
	if s := get(d); s != nil {
		t.Errorf("accepted drift: %+v", s)
	}
}

// recoveredImpact is the example impact with every session recovered.
type recoveredImpact struct{ *fakeImpact }

func (r recoveredImpact) Impact(ctx context.Context, q controlplane.ImpactQuery) (apiwire.Impact, error) {
	out, err := r.fakeImpact.Impact(ctx, q)
	for i, a := range out.Agents {
		if a.Recovery != nil {
			rec := *a.Recovery
			rec.Recovered, rec.StillStale, rec.Failed = rec.Recovered+rec.StillStale+rec.Failed, 0, 0
			out.Agents[i].Recovery = &rec
		}
	}
	return out, err
}

func TestImpact(t *testing.T) {
	a := startAPI(t, nil, nil)
	im := &fakeImpact{window: 24 * time.Hour, recent: time.Hour}
	d := newFakeDrift(t)
	a.register(d, im)
	var out apiwire.Impact
	decode(t, a.get("/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=create_ticket", http.StatusOK), &out)
	if out.Hours != 24 || im.asked[0].Window != 24*time.Hour || im.asked[0].Tool != "create_ticket" {
		t.Errorf("default window: hours %v, asked %+v", out.Hours, im.asked[0])
	}
	decode(t, a.get("/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=create_ticket&hours=0.5", http.StatusOK), &out)
	if out.Hours != 0.5 || im.asked[1].Window != 30*time.Minute {
		t.Errorf("hours=0.5: hours %v, asked %v", out.Hours, im.asked[1].Window)
	}
	decode(t, a.get("/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=get_forecast&hours=24", http.StatusOK), &out)
	if !out.NoRecentCallers || len(out.Agents) != 0 {
		t.Errorf("no callers: %+v", out)
	}
	if e := errorOf(t, a.get("/api/v1/servers/{name}/impact", "/api/v1/servers/demo-tools/impact?tool=nope", http.StatusNotFound)); e.Code != codeUnknownTool {
		t.Errorf("unknown tool: %+v", e)
	}
	// A server the receiver probes but the processor has not seen, and one
	// nobody knows, are both 404, saying which.
	if e := errorOf(t, a.get("/api/v1/servers/{name}/impact", "/api/v1/servers/billing/impact?tool=x", http.StatusNotFound)); e.Code != codeUnknownServer || !strings.Contains(e.Message, "probed") {
		t.Errorf("probed, not indexed: %+v", e)
	}
	if e := errorOf(t, a.get("/api/v1/servers/{name}/impact", "/api/v1/servers/nope/impact?tool=x", http.StatusNotFound)); e.Code != codeUnknownServer || strings.Contains(e.Message, "probed") {
		t.Errorf("unknown: %+v", e)
	}
}

// TestDigestUsage: the digests route checks its parameters and maps the
// view's errors as the impact route does.
func TestDigestUsage(t *testing.T) {
	a := startAPI(t, nil, nil)
	const route = "/api/v1/servers/{name}/digests"
	a.get(route, "/api/v1/servers/demo-tools/digests?tool=create_ticket", http.StatusServiceUnavailable)
	a.register(newFakeDrift(t), &fakeImpact{window: 24 * time.Hour, recent: time.Hour})
	var out apiwire.DigestUsage
	decode(t, a.get(route, "/api/v1/servers/demo-tools/digests?tool=create_ticket&days=35", http.StatusOK), &out)
	if len(out.Digests) != 3 || out.Digests[0].Calls != 812 || out.Digests[2].Digest != nil {
		t.Errorf("digests %+v", out)
	}
	for _, bad := range []string{"", "?tool=create_ticket&days=0", "?tool=create_ticket&days=36", "?tool=create_ticket&days=x", "?tool=create_ticket&hours=1"} {
		a.get(route, "/api/v1/servers/demo-tools/digests"+bad, http.StatusBadRequest)
	}
	if e := errorOf(t, a.get(route, "/api/v1/servers/demo-tools/digests?tool=nope", http.StatusNotFound)); e.Code != codeUnknownTool {
		t.Errorf("unknown tool: %+v", e)
	}
	if e := errorOf(t, a.get(route, "/api/v1/servers/nope/digests?tool=x", http.StatusNotFound)); e.Code != codeUnknownServer {
		t.Errorf("unknown server: %+v", e)
	}
}

func TestAccept(t *testing.T) {
	a := startAPI(t, nil, nil)
	d := newFakeDrift(t)
	a.register(d, nil)
	const route, path = "/api/v1/servers/{name}/accept", "/api/v1/servers/demo-tools/accept"
	jsonCT := []string{"Content-Type", "application/json"}

	var res apiwire.AcceptResult
	decode(t, a.post(route, path, `{"drift":"abc","comment":"ok","by":"bob"}`, http.StatusOK, jsonCT...), &res)
	if res.By != "bob" || len(d.accepted) != 1 || d.accepted[0].by != (controlplane.Principal{Name: "bob"}) ||
		d.accepted[0].req.Drift != "abc" || d.accepted[0].req.Comment != "ok" {
		t.Errorf("accept: %+v, calls %+v", res, d.accepted)
	}
	// No body, or {}: anonymous, newest open drift.
	a.post(route, path, "", http.StatusOK, "Content-Type", "application/json; charset=utf-8")
	if got := d.accepted[1]; got.by.Name != "anonymous" || got.by.Authenticated || got.req.Drift != "" {
		t.Errorf("empty body: %+v", got)
	}

	// Not JSON: a form a cross-site page could post.
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		r := a.do(http.MethodPost, path, "{}", "Content-Type", ct)
		a.check(http.MethodPost, route, path, http.StatusUnsupportedMediaType, r)
	}
	for body, param := range map[string]string{
		`{"drift":1}`:  "body",
		`{"note":"x"}`: "body",
		`{} {}`:        "body",
		`[`:            "body",
		// Not an object: would decode into the zero request, an anonymous
		// accept nobody asked for.
		`null`:                           "body",
		` null `:                         "body",
		`[]`:                             "body",
		`"bob"`:                          "body",
		`1`:                              "body",
		`false`:                          "body",
		"{\"by\":\"b\xffob\"}":           "by", // not UTF-8: refused, not stored as U+FFFD
		`{"by":"\ufffdbob"}`:             "by",
		`{"by":"\u202egnp.exe"}`:         "by", // right-to-left override: reads as another name
		`{"by":"al\u200bice"}`:           "by", // zero-width space
		`{"by":"alice\nroot"}`:           "by",
		`{"by":"alice\u0007"}`:           "by",
		`{"comment":"ok \u2066x\u2069"}`: "comment",
		`{"by":"` + strings.Repeat("x", 257) + `"}`:       "by",
		`{"comment":"` + strings.Repeat("x", 5000) + `"}`: "comment",
	} {
		if e := errorOf(t, a.post(route, path, body, http.StatusBadRequest, jsonCT...)); e.Parameter != param {
			t.Errorf("%.40q: %+v, want parameter %s", body, e, param)
		}
	}
	// What passes: any script, with spaces; a comment of several lines.
	before := len(d.accepted)
	a.post(route, path, `{"by":"José Ñúñez 山田","comment":"line one\n\tline two"}`, http.StatusOK, jsonCT...)
	if got := d.accepted[before]; got.by.Name != "José Ñúñez 山田" || got.req.Comment != "line one\n\tline two" {
		t.Errorf("accepted as %+v", got)
	}
	a.post(route, path, `{"comment":"`+strings.Repeat("x", 70<<10)+`"}`, http.StatusRequestEntityTooLarge, jsonCT...)
	a.post(route, "/api/v1/servers/nope/accept", "{}", http.StatusNotFound, jsonCT...)

	for err, code := range map[error]string{controlplane.ErrNoOpenDrift: codeNoOpenDrift, controlplane.ErrDriftMismatch: codeDriftMismatch} {
		d.err = err
		if e := errorOf(t, a.post(route, path, `{"drift":"x"}`, http.StatusConflict, jsonCT...)); e.Code != code {
			t.Errorf("%v: %+v", err, e)
		}
	}
	d.err = errors.New("disk on fire: /var/lib/secret")
	r := a.do(http.MethodPost, path, "{}", jsonCT...)
	if r.status != http.StatusInternalServerError || strings.Contains(string(r.body), "secret") {
		t.Errorf("a view's error is logged, not answered: %d %s", r.status, r.body)
	}
}

func TestRoutes(t *testing.T) {
	a := startAPI(t, nil, nil)
	a.register(newFakeDrift(t), nil)
	// Every route answers another method 405 with Allow, as its entry in
	// the document says.
	for _, rt := range a.ext.routes() {
		path := strings.NewReplacer("{name}", "demo-tools", "{id}", "91f3ecb6ead24f65").Replace(rt.path)
		method, allow := http.MethodDelete, "GET, HEAD"
		if rt.method == http.MethodPost {
			method, allow = http.MethodGet, "POST"
		}
		r := a.do(method, path, "")
		if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != allow || errorOf(t, r).Code != codeMethodNotAllowed {
			t.Errorf("%s %s: %d %v %s", method, path, r.status, r.header, r.body)
		}
		a.check(rt.method, rt.path, path, http.StatusMethodNotAllowed, r)
	}
	if r := a.do(http.MethodHead, "/api/v1/servers", ""); r.status != http.StatusOK {
		t.Errorf("HEAD servers: %d", r.status)
	}
	for _, p := range []string{"/api/v2/servers", "/api/v1/servers/demo-tools/nope", "/api/"} {
		r := a.do(http.MethodGet, p, "")
		if r.status != http.StatusNotFound || errorOf(t, r).Code != codeNotFound {
			t.Errorf("%s: %d %s", p, r.status, r.body)
		}
	}
	r := a.do(http.MethodGet, "/api/v1/openapi.json", "")
	if r.status != http.StatusOK || string(r.body) != string(openAPI) || r.header.Get("Content-Type") != "application/json" {
		t.Errorf("openapi.json: %d %s", r.status, r.header)
	}
	if r.header.Get("Cache-Control") != "no-store" || r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("API headers: %v", r.header)
	}
}

// TestDashboard: the embedded files are served at /, under a policy that
// lets the page load nothing from elsewhere.
func TestDashboard(t *testing.T) {
	a := startAPI(t, nil, nil)
	r := a.do(http.MethodGet, "/", "")
	if r.status != http.StatusOK || !strings.Contains(string(r.body), "<html") || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("/: %d %v", r.status, r.header)
	}
	csp := r.header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if r := a.do(http.MethodGet, "/nope.js", ""); r.status != http.StatusNotFound {
		t.Errorf("/nope.js: %d", r.status)
	}
	// No directory is listed (the file server would).
	for _, p := range []string{"/js/", "/js", "/js/../js/", "/%6As/"} {
		if r := a.do(http.MethodGet, p, ""); r.status != http.StatusNotFound || strings.Contains(string(r.body), "app.js") {
			t.Errorf("GET %s: %d %.80s", p, r.status, r.body)
		}
	}
	if r := a.do(http.MethodGet, "/js/app.js", ""); r.status != http.StatusOK {
		t.Errorf("/js/app.js: %d", r.status)
	}
	if r := a.do(http.MethodPost, "/", "x"); r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", r.status)
	}
}
