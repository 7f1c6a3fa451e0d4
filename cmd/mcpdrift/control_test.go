package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
)

// The control plane commands against a stand-in for the API that answers
// with the API's documented examples (extension/mcpdriftapiextension/
// testdata, checked against its OpenAPI document there); make e2e runs them
// against the running distribution.

type fakeAPI struct {
	mu       sync.Mutex
	requests []*http.Request
	bodies   []string
	status   int    // when set, every answer has this status ...
	answer   string // ... and this body
	url      string
}

func examplePath(name string) string {
	return filepath.Join(testservers.RepoRoot(), "extension", "mcpdriftapiextension", "testdata", name)
}

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{}
	routes := map[string]string{
		"GET /api/v1/servers":                        "servers.json",
		"GET /api/v1/servers/demo-tools":             "server.json",
		"GET /api/v1/servers/demo-tools/drifts":      "drifts.json",
		"GET /api/v1/drifts/91f3ecb6ead24f65":        "drift.json",
		"GET /api/v1/servers/demo-tools/impact":      "impact.json",
		"POST /api/v1/servers/demo-tools/accept":     "accept.json",
		"GET /api/v1/servers/demo-tools/impact#none": "impact_no_callers.json",
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, r)
		f.bodies = append(f.bodies, string(body))
		status, answer := f.status, f.answer
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if status != 0 {
			w.WriteHeader(status)
			_, _ = io.WriteString(w, answer)
			return
		}
		key := r.Method + " " + r.URL.Path
		if r.URL.Query().Get("tool") == "get_forecast" {
			key += "#none"
		}
		file, ok := routes[key]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			b, _ := os.ReadFile(examplePath("error_404.json"))
			_, _ = w.Write(b)
			return
		}
		b, err := os.ReadFile(examplePath(file))
		if err != nil {
			t.Error(err)
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(ts.Close)
	f.url = ts.URL
	return f
}

func (f *fakeAPI) last() (*http.Request, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[len(f.requests)-1], f.bodies[len(f.bodies)-1]
}

func (f *fakeAPI) fail(status int, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.answer = status, body
}

func TestStatusCommand(t *testing.T) {
	api := newFakeAPI(t)
	code, out, errOut := cli(t, "", "status", "--api", api.url, "--token", "tok-123")
	// The example has a DOWN server: exit 4, which wins over DRIFTED.
	if code != exitProbe || !strings.Contains(errOut, "DOWN") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"4 servers: 1 up, 1 drifted, 1 down, 1 pending", "SERVER", "demo-tools", "DRIFTED", "auth_required", "stateless_2026", "breaking", "PENDING"} {
		if !strings.Contains(out, want) {
			t.Errorf("status output lacks %q:\n%s", want, out)
		}
	}
	req, _ := api.last()
	if req.Header.Get("Authorization") != "Bearer tok-123" || req.URL.Path != "/api/v1/servers" {
		t.Errorf("request %s %v", req.URL, req.Header)
	}
	code, out, _ = cli(t, "", "status", "--api", api.url, "--format", "json")
	var v map[string]any
	if code != exitProbe || json.Unmarshal([]byte(out), &v) != nil || v["summary"] == nil {
		t.Errorf("--format json: exit %d %s", code, out)
	}
}

// TestControlEnvironment: --api and --token default from the environment;
// the token is sent and never printed, a password in the URL neither.
func TestControlEnvironment(t *testing.T) {
	api := newFakeAPI(t)
	t.Setenv(envAPI, api.url)
	t.Setenv(envToken, "env-token-987")
	cli(t, "", "history", "demo-tools")
	req := api.requests[0]
	if req.Header.Get("Authorization") != "Bearer env-token-987" || req.URL.Query().Get("limit") != "20" {
		t.Errorf("request %s %v", req.URL, req.Header)
	}
	api.fail(http.StatusUnauthorized, `{"error":{"code":"unauthorized","message":"authentication required"}}`)
	code, out, errOut := cli(t, "", "history", "demo-tools")
	if code != exitUnreachable || strings.Contains(out+errOut, "env-token-987") || !strings.Contains(errOut, "--token") {
		t.Errorf("401: exit %d %s", code, errOut)
	}
	code, _, errOut = cli(t, "", "status", "--api", "http://alice:pa55w0rd@127.0.0.1:1")
	if code != exitUnreachable || strings.Contains(errOut, "pa55w0rd") {
		t.Errorf("unreachable: exit %d %s", code, errOut)
	}
}

func TestHistoryCommand(t *testing.T) {
	api := newFakeAPI(t)
	code, out, errOut := cli(t, "", "history", "demo-tools", "--limit", "5", "--api", api.url)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"2 of 2 drifts", "OPEN", "accepted by alice", `"search rollout"`, "BREAKING", "input.property.added_required", "BEFORE:", "AFTER:",
		"(server 0.9.0 -> 1.0.0)",
		// When the server changed, as impact says it, and when the probes
		// confirmed it.
		"=== drift 91f3ecb6ead24f65  changed 2026-12-02 10:15:36 UTC, confirmed 10:15:42  OPEN",
		"next step (rollback): A breaking change hurts 2 agents: roll demo-tools back to contract f35a9f28db9e (version 0.9.0), or restart or update planner, researcher.",
		"  planner (high risk; 1 sessions failed, 14 stale calls): create_ticket; sessions planner-s3, planner-s2, planner-s1",
		// The drift's description is the summary, and each change says its
		// consequence once.
		"breaking (1 breaking, 1 warning, 1 compatible, 0 info)\ncreate_ticket: required param project added; get_weather: description changed; added 1 tool (get_forecast)\n",
		"ADDED TOOLS\n  get_forecast(city: string, days?: integer)\n      Get tomorrow's forecast for a city.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("history output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "agents calling create_ticket without project will now get a validation error"); n != 1 {
		t.Errorf("the change's consequence is printed %d times:\n%s", n, out)
	}
	// The page, the server (not mixed: no variants printed), then the
	// details: the open drift's (next step) and the older one's (it added
	// a tool; the stand-in knows no such drift, and the history is printed
	// without its signature).
	var paths []string
	for _, r := range api.requests {
		paths = append(paths, r.URL.Path)
	}
	if strings.Join(paths, " ") != "/api/v1/servers/demo-tools/drifts /api/v1/servers/demo-tools /api/v1/drifts/91f3ecb6ead24f65 /api/v1/drifts/3f1d2a9c0b7e6d54" {
		t.Errorf("requests %q", paths)
	}
	if req := api.requests[0]; req.URL.Query().Get("limit") != "5" {
		t.Errorf("limit not sent: %s", req.URL)
	}
	if strings.Contains(out, "MIXED") {
		t.Errorf("history calls a server that is not mixed MIXED:\n%s", out)
	}
	if code, _, _ := cli(t, "", "history", "nope", "--api", api.url); code != exitNotFound {
		t.Errorf("unknown server: exit %d", code)
	}
	if code, _, _ := cli(t, "", "history", "--api", api.url); code != exitUsage {
		t.Errorf("no server: exit %d", code)
	}
	if code, _, _ := cli(t, "", "history", "demo-tools", "--limit", "0", "--api", api.url); code != exitUsage {
		t.Errorf("--limit 0: exit %d", code)
	}
	// A server name is one path segment, whatever it holds.
	cli(t, "", "history", "team/a b", "--api", api.url)
	if req, _ := api.last(); req.URL.EscapedPath() != "/api/v1/servers/team%2Fa%20b/drifts" {
		t.Errorf("escaped path %s", req.URL.EscapedPath())
	}
}

func TestImpactCommand(t *testing.T) {
	api := newFakeAPI(t)
	code, out, errOut := cli(t, "", "impact", "demo-tools", "--tool", "create_ticket", "--hours", "1.5", "--api", api.url)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"AGENT", "SESSIONS", "CALLS", "ERRORS", "AVG LATENCY", "LAST CALLED", "RISK", "planner", "3.4 ms", "STALE", "37/13/0/0", "2/0/1/0", "high",
		"24 stale calls; 2 agents, 6 sessions, 118 calls (67 before the change), 9 errors",
		"3 recovered, 1 still stale, 1 failed, 1 idle; recovered in 5s (median), 9s (longest)",
		"last change: drift 91f3ecb6ead24f65, breaking, changed 2026-12-02 10:15:36 UTC;"} {
		if !strings.Contains(out, want) {
			t.Errorf("impact output lacks %q:\n%s", want, out)
		}
	}
	if req, _ := api.last(); req.URL.Query().Get("tool") != "create_ticket" || req.URL.Query().Get("hours") != "1.5" {
		t.Errorf("query %s", req.URL.RawQuery)
	}
	code, out, _ = cli(t, "", "impact", "demo-tools", "--tool", "get_forecast", "--api", api.url)
	if code != 0 || !strings.Contains(out, "No recent callers — tool may be unused") {
		t.Errorf("no callers: exit %d\n%s", code, out)
	}
	if req, _ := api.last(); req.URL.Query().Has("hours") {
		t.Errorf("--hours not given, but sent: %s", req.URL.RawQuery)
	}
	if code, _, _ := cli(t, "", "impact", "demo-tools", "--api", api.url); code != exitUsage {
		t.Errorf("no --tool: exit %d", code)
	}
	api.fail(http.StatusBadRequest, `{"error":{"code":"bad_parameter","message":"hours must be at most 24","parameter":"hours"}}`)
	if code, _, errOut := cli(t, "", "impact", "demo-tools", "--tool", "x", "--hours", "48", "--api", api.url); code != exitUsage || !strings.Contains(errOut, "hours must be at most 24") {
		t.Errorf("400: exit %d %s", code, errOut)
	}
	api.fail(http.StatusServiceUnavailable, `{"error":{"code":"unavailable","message":"impact queries need an mcpimpact processor"}}`)
	if code, _, errOut := cli(t, "", "impact", "demo-tools", "--tool", "x", "--api", api.url); code != exitUnreachable || !strings.Contains(errOut, "mcpimpact processor") {
		t.Errorf("503: exit %d %s", code, errOut)
	}
	api.fail(http.StatusOK, `<html>not the API</html>`)
	if code, _, _ := cli(t, "", "impact", "demo-tools", "--tool", "x", "--api", api.url); code != exitUnreachable {
		t.Errorf("not JSON: exit %d", code)
	}
}

func TestAcceptCommand(t *testing.T) {
	api := newFakeAPI(t)
	code, out, errOut := cli(t, "", "accept", "demo-tools", "--drift", "abc", "--comment", "ok by me", "--api", api.url)
	if code != 0 || !strings.Contains(out, "alice accepted 1 drift(s) of demo-tools") || !strings.Contains(out, "status UP") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	req, body := api.last()
	var sent map[string]string
	if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(body), &sent) != nil ||
		sent["drift"] != "abc" || sent["comment"] != "ok by me" {
		t.Errorf("request %s %v %s", req.Method, req.Header, body)
	}
	api.fail(http.StatusConflict, `{"error":{"code":"no_open_drift","message":"\"demo-tools\" has no open drift to accept"}}`)
	if code, _, errOut := cli(t, "", "accept", "demo-tools", "--api", api.url); code != exitConflict || !strings.Contains(errOut, "no open drift") {
		t.Errorf("409: exit %d %s", code, errOut)
	}
}

// TestStatusShowsMixedVariants: a mixed server's variants are listed under
// the table with their shares, what the variant breaks and whom: the
// agents and sessions it served (hurt now) and those the baseline served.
func TestStatusShowsMixedVariants(t *testing.T) {
	writer := "writer"
	list := &apiwire.ServerList{Servers: []apiwire.ServerStatus{{
		Name: "search", Status: apiwire.StatusUp, Mixed: true,
		Variants: []apiwire.MixedVariant{
			{Digest: strings.Repeat("a", 64), Count: 90, Share: 0.9, Baseline: true},
			{Digest: strings.Repeat("b", 64), Count: 10, Share: 0.1, Severity: "breaking", Summary: "search: new required parameter filters",
				Impact: &apiwire.VariantImpact{Hours: 24, HurtNow: apiwire.VariantTotals{Agents: 1, Sessions: 1, Calls: 2},
					AtRiskOnConvergence: apiwire.VariantTotals{Agents: 1, Sessions: 2, Calls: 9},
					Tools: []apiwire.VariantTool{{Tool: "search", Severity: "breaking", Agents: []apiwire.AgentImpact{
						{Agent: &writer, Sessions: 1, Calls: 2, Risk: "high", Status: "hurt_now", SessionIDs: []string{"conv-w"}},
						{Sessions: 2, Calls: 9, Risk: "medium", Status: "at_risk_on_convergence", SessionIDs: []string{"conv-a", "conv-b\x1b[2J"}},
					}}}}},
		},
	}}}
	var out strings.Builder
	if err := writeStatus(&out, list); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Errorf("a session id's escape reached the terminal:\n%q", out.String())
	}
	for _, want := range []string{"UP (mixed)", "search is MIXED:", "aaaaaaaaaaaa   90.0 %  baseline", "bbbbbbbbbbbb   10.0 %  breaking: search: new required parameter filters",
		"      hurt now: agents 1, sessions 1, calls 2; at risk on convergence: agents 1, sessions 2, calls 9 (last 24 h)\n",
		"      search  writer  hurt now, risk high: calls 2, sessions conv-w\n",
		"      search  (unnamed agent)  at risk on convergence, risk medium: calls 9, sessions conv-a, conv-b"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestHistoryShowsMixedNow: history says a server is a mixed fleet now,
// with its variants as status lists them, before its drifts (a mixed fleet
// has none yet for its variants); a hostile summary stays one line.
func TestHistoryShowsMixedNow(t *testing.T) {
	server := &apiwire.ServerStatus{Name: "search", Status: apiwire.StatusUp, Mixed: true, Variants: []apiwire.MixedVariant{
		{Digest: strings.Repeat("a", 64), Count: 90, Share: 0.9, Baseline: true},
		{Digest: strings.Repeat("b", 64), Count: 10, Share: 0.1, Severity: "breaking", Summary: "search: new required parameter filters\n\x1b[2Jfake line"},
	}}
	var out strings.Builder
	if err := writeHistory(&out, &apiwire.DriftPage{Server: "search"}, server, nil); err != nil {
		t.Fatal(err)
	}
	want := "mcpdrift: search has no drift in its history\n\nsearch is MIXED:\n  aaaaaaaaaaaa   90.0 %  baseline\n  bbbbbbbbbbbb   10.0 %  breaking: search: new required parameter filters"
	if got := out.String(); !strings.HasPrefix(got, want) || strings.Count(got, "\n") != 5 || strings.Contains(got, "\x1b") {
		t.Errorf("history of a mixed server:\n%q\nwant it to start with\n%q, on 5 lines, without escapes", got, want)
	}
}

// TestStatusShowsDownSince: a DOWN server says since when its probes have
// been failing, beside the error class.
func TestStatusShowsDownSince(t *testing.T) {
	since := time.Date(2026, 12, 5, 9, 30, 0, 0, time.UTC)
	list := &apiwire.ServerList{Servers: []apiwire.ServerStatus{{
		Name: "search", Status: apiwire.StatusDown,
		Probe: &apiwire.ProbeStatus{Last: since.Add(time.Hour), ErrorClass: "unreachable", FailingSince: &since},
	}}}
	var out strings.Builder
	if err := writeStatus(&out, list); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "unreachable since 2026-12-05 09:30:00") {
		t.Errorf("status output lacks since when it is down:\n%s", out.String())
	}
}

// TestFormatJSONErrors: with --format json a failure is JSON on standard
// output too (the API's own error body when it sent one, else the exit
// code's name), and the exit code is the table's.
func TestFormatJSONErrors(t *testing.T) {
	api := newFakeAPI(t)
	errorJSON := func(out string) apiwire.ErrorDetail {
		t.Helper()
		var body apiwire.ErrorBody
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil || dec.More() {
			t.Fatalf("stdout is not one error object (%v): %q", err, out)
		}
		return body.Error
	}
	code, out, errOut := cli(t, "", "history", "nope", "--api", api.url, "--format", "json")
	if e := errorJSON(out); code != exitNotFound || e.Code != "unknown_server" || !strings.Contains(errOut, "no server named") {
		t.Errorf("404: exit %d, %+v, stderr %q", code, e, errOut)
	}
	api.fail(http.StatusConflict, `{"error":{"code":"no_open_drift","message":"\"demo-tools\" has no open drift to accept"}}`)
	if code, out, _ := cli(t, "", "accept", "demo-tools", "--api", api.url, "--format", "json"); code != exitConflict || errorJSON(out).Code != "no_open_drift" {
		t.Errorf("409: exit %d %q", code, out)
	}
	api.fail(http.StatusBadRequest, `{"error":{"code":"bad_parameter","message":"hours must be at most 24","parameter":"hours"}}`)
	if code, out, _ := cli(t, "", "impact", "demo-tools", "--tool", "x", "--api", api.url, "--format", "json"); code != exitUsage || errorJSON(out).Parameter != "hours" {
		t.Errorf("400: exit %d %q", code, out)
	}
	api.fail(http.StatusBadGateway, `<html>proxy error</html>`)
	if code, out, _ := cli(t, "", "status", "--api", api.url, "--format", "json"); code != exitUnreachable || errorJSON(out).Code != "unreachable" {
		t.Errorf("502 without the API's body: exit %d %q", code, out)
	}
	code, out, _ = cli(t, "", "status", "--api", "http://127.0.0.1:1", "--format", "json")
	if e := errorJSON(out); code != exitUnreachable || e.Code != "unreachable" || !strings.Contains(e.Message, "did not answer") {
		t.Errorf("unreachable: exit %d %+v", code, e)
	}
	if code, out, _ := cli(t, "", "status", "--api", api.url, "--format", "json", "--timeout", "-1s"); code != exitUsage || errorJSON(out).Code != "usage" {
		t.Errorf("bad --timeout: exit %d %q", code, out)
	}
}

// TestImpactShowsMixedVariants: while the server is mixed, impact lists
// after its table the variants that change the tool, each with its share
// and who it affects, split as status splits them (hurt now, at risk on
// convergence); hostile names stay on their line; --format json is the
// API's answer, variants included.
func TestImpactShowsMixedVariants(t *testing.T) {
	raw, err := os.ReadFile(examplePath("impact.json"))
	if err != nil {
		t.Fatal(err)
	}
	var imp apiwire.Impact
	if err := json.Unmarshal(raw, &imp); err != nil {
		t.Fatal(err)
	}
	writer := "writer\x1b[2J"
	imp.Variants = []apiwire.ImpactVariant{{Digest: strings.Repeat("b", 64), Share: 0.1, Impact: apiwire.VariantImpact{
		Hours: 1, HurtNow: apiwire.VariantTotals{Agents: 1, Sessions: 1, Calls: 2}, AtRiskOnConvergence: apiwire.VariantTotals{Agents: 1, Sessions: 2, Calls: 9},
		Tools: []apiwire.VariantTool{{Tool: "create_ticket", Severity: "breaking", Agents: []apiwire.AgentImpact{
			{Agent: &writer, Sessions: 1, Calls: 2, Risk: "high", Status: "hurt_now", SessionIDs: []string{"conv-w"}},
			{Sessions: 2, Calls: 9, Risk: "medium", Status: "at_risk_on_convergence", SessionIDs: []string{"conv-a", "conv-b"}},
		}}},
	}}}
	body, err := json.Marshal(imp)
	if err != nil {
		t.Fatal(err)
	}
	api := newFakeAPI(t)
	api.fail(http.StatusOK, string(body))
	code, out, errOut := cli(t, "", "impact", "demo-tools", "--tool", "create_ticket", "--api", api.url)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("an agent name's escape reached the terminal:\n%q", out)
	}
	table := strings.Index(out, "AGENT")
	mixed := strings.Index(out, "demo-tools is MIXED; the variants that change create_ticket:\n")
	if table < 0 || mixed < table {
		t.Errorf("impact output lacks the variants after its table:\n%s", out)
	}
	for _, want := range []string{"  bbbbbbbbbbbb   10.0 %  breaking\n",
		"      hurt now: agents 1, sessions 1, calls 2; at risk on convergence: agents 1, sessions 2, calls 9 (last 1 h)\n",
		"      create_ticket  writer",
		"hurt now, risk high: calls 2, sessions conv-w\n",
		"      create_ticket  (unnamed agent)  at risk on convergence, risk medium: calls 9, sessions conv-a, conv-b\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("impact output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = cli(t, "", "impact", "demo-tools", "--tool", "create_ticket", "--api", api.url, "--format", "json")
	var back apiwire.Impact
	if err := json.Unmarshal([]byte(out), &back); code != 0 || err != nil || len(back.Variants) != 1 || back.Variants[0].Impact.HurtNow.Calls != 2 {
		t.Errorf("impact --format json: exit %d, %v, variants %+v", code, err, back.Variants)
	}
	// A server that is not mixed prints no variants.
	api.fail(http.StatusOK, string(raw))
	if _, out, _ = cli(t, "", "impact", "demo-tools", "--tool", "create_ticket", "--api", api.url); strings.Contains(out, "MIXED") {
		t.Errorf("impact calls a server that is not mixed MIXED:\n%s", out)
	}
}
