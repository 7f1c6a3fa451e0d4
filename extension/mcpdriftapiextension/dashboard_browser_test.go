package mcpdriftapiextension

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.opentelemetry.io/collector/component"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"

	"github.com/mcpdrift/mcpdrift/dev/dashboardtest"
)

// The dashboard in a real headless Chromium, against the API's example
// responses (examples_test.go) with poisoned descriptions.

func TestDashboardServerList(t *testing.T) {
	t.Parallel()
	b := dashboardtest.Open(t)
	b.Load(serveExamples(t, newExampleDrift(t), newExampleImpact(), nil, nil))

	list := b.ReadServers()
	want := map[string]string{"total": "4", "down": "1", "drifted": "1", "pending": "1", "up": "1"}
	for k, v := range want {
		if list.Tiles[k] != v {
			t.Errorf("tile %s = %q, want %q (tiles %v)", k, list.Tiles[k], v, list.Tiles)
		}
	}
	// Worst first: DOWN, DRIFTED, PENDING, UP.
	var order []string
	for _, r := range list.Rows {
		order = append(order, r.Name+" "+r.Status)
	}
	if got := strings.Join(order, ", "); got != "billing DOWN, demo-tools DRIFTED, search PENDING, files UP" {
		t.Errorf("rows: %s", got)
	}
	for _, r := range list.Rows {
		if r.Name == "billing" && !strings.Contains(strings.Join(r.Cells, " | "), "auth required") {
			t.Errorf("the DOWN server's row does not say why: %q", r.Cells)
		}
		if r.Name == "demo-tools" && !strings.Contains(strings.Join(r.Cells, " | "), "breaking") {
			t.Errorf("the drifted server's row does not show its open drift's severity: %q", r.Cells)
		}
	}

	b.Screenshot("dashboard-servers.png", 0)
	var hidden bool
	if b.Eval(`document.getElementById('auth-button').hidden`, &hidden); !hidden {
		t.Error("Sign in is offered though the API asks for no credential")
	}

	// A row leads to the server's page, Drift tab.
	b.Do(chromedp.Click(chromedp.CSS(`tr[data-server="demo-tools"] a`)))
	b.WaitReady("#/servers/demo-tools")
	if d := b.ReadDrift(); d.ID != "91f3ecb6ead24f65" {
		t.Errorf("the server page shows drift %q", d.ID)
	}
	b.CheckConsole()
}

func TestDashboardDriftTab(t *testing.T) {
	t.Parallel()
	b := dashboardtest.Open(t)
	b.Load(serveExamples(t, newExampleDrift(t), newExampleImpact(), nil, nil) + "#/servers/demo-tools")
	d := b.ReadDrift()

	if d.ID != "91f3ecb6ead24f65" || d.State != "open" || d.Severity != "breaking" {
		t.Errorf("drift %q state %q severity %q", d.ID, d.State, d.Severity)
	}
	// Summary chips: the categories with changes, in order; info (0) not shown.
	if got := strings.Join(d.Chips, " · "); got != "1 breaking · 1 warning · 1 compatible" {
		t.Errorf("summary chips: %q", got)
	}

	// The probes confirmed it 6.114 s after one first saw the new contract.
	if len(d.Meta) < 2 || d.Meta[1] != "first served 6.1 s before" {
		t.Errorf("drift meta: %q, want when the new contract was first served", d.Meta)
	}

	// One card per change, coloured by severity, BEFORE / AFTER with only the
	// value that changed.
	ticket := d.Group(t, "tool", "create_ticket")
	c := ticket.Card(t, "input.property.added_required")
	if c.Severity != "breaking" || c.BeforeLabel != "BEFORE" || c.AfterLabel != "AFTER" {
		t.Errorf("create_ticket card: %+v", c)
	}
	if c.Before != "not present" || !strings.Contains(c.After, `"description": "project key, e.g. DEMO"`) || strings.Contains(c.After, `"title"`) {
		t.Errorf("create_ticket BEFORE %q AFTER %q: want the new property only", c.Before, c.After)
	}
	weather := d.Group(t, "tool", "get_weather").Card(t, "tool.description.changed")
	if weather.Severity != "warning" || weather.Before != "Get the current weather for a city." || weather.After != poisonedWeather {
		t.Errorf("get_weather BEFORE %q AFTER %q", weather.Before, weather.After)
	}

	// The affected agents, loaded automatically.
	planner := ticket.Agent(t, "planner")
	if planner.Risk != "high" || planner.Stale != "14" || planner.Before != "37" || planner.New != "13" {
		t.Errorf("planner row: %+v", planner)
	}
	for i, want := range []string{"planner", "3", "64", "7", "3.41 ms"} {
		if planner.Cells[i] != want {
			t.Errorf("planner cell %d = %q, want %q (%q)", i, planner.Cells[i], want, planner.Cells)
		}
	}
	// The red number is the API's stale total, not the calls with the
	// previous definition (those made before the change are apart).
	if ticket.Impact.Stale != "24" || !strings.Contains(ticket.Impact.Text, "24 stale calls") || !strings.Contains(ticket.Impact.Text, "67 before the change") ||
		!strings.Contains(ticket.Impact.Text, "3 recovered · 1 still stale · 1 failed · 1 idle (in 5.0 s, median)") {
		t.Errorf("create_ticket impact totals: %q (stale %q)", ticket.Impact.Text, ticket.Impact.Stale)
	}
	if !strings.Contains(strings.Join(planner.Cells, "|"), "2 recovered · 1 failed") {
		t.Errorf("planner since the change: %q", planner.Cells)
	}
	forecast := d.Group(t, "tool", "get_forecast")
	if forecast.Impact == nil || forecast.Impact.State != "no-callers" || !strings.Contains(forecast.Impact.Text, "No recent callers — tool may be unused") {
		t.Errorf("get_forecast impact: %+v", forecast.Impact)
	}

	// A description with markup shows as text, and nothing of it ran.
	// (Shown as JSON here, quotes escaped: the markup itself is verbatim.)
	if added := forecast.Card(t, "tool.added"); !strings.Contains(added.After, "<script>window.__mcpdriftPoisoned") || !strings.Contains(added.After, "<img src=x onerror=") {
		t.Errorf("get_forecast AFTER does not show the description as text: %q", added.After)
	}
	b.CheckEscaped()
	// The tool's definition as sent: 7.0 stays 7.0.
	if added := forecast.Card(t, "tool.added"); !strings.Contains(added.After, `"maximum": 7.0,`) {
		t.Errorf("get_forecast's definition is not shown as sent: %q", added.After)
	}

	// The full-definition toggle shows both definitions side by side.
	if ticket.Compare != "Compare full definitions" {
		t.Errorf("create_ticket compare toggle: %q", ticket.Compare)
	}
	b.Do(chromedp.Click(chromedp.CSS(`.item-group[data-name="create_ticket"] [data-action="compare"]`)))
	before := b.Text(`.item-group[data-name="create_ticket"] .compare .box-before .box-value`)
	after := b.Text(`.item-group[data-name="create_ticket"] .compare .box-after .box-value`)
	var added []string
	b.Eval(`[...document.querySelectorAll('.item-group[data-name="create_ticket"] .compare .box-after .line.ins')].map((n) => n.textContent.trim())`, &added)
	if !strings.Contains(before, `"title"`) || strings.Contains(before, `"project"`) || !strings.Contains(after, `"project"`) || !slices.Contains(added, `"project"`) {
		t.Errorf("full definitions: before %q, after %q, added lines %q", before, after, added)
	}
	b.Screenshot("dashboard-examples.png", 0)

	// The Contract tab lists the served tools, descriptions as text.
	b.Go("#/servers/demo-tools/contract")
	if got := b.Text(`li[data-key="get_forecast"] .def-desc`); got != poisonedForecast {
		t.Errorf("contract tab, get_forecast description: %q", got)
	}
	b.Do(chromedp.Click(chromedp.CSS(`li[data-key="get_forecast"] summary`)))
	b.CheckEscaped()
	b.Screenshot("dashboard-contract.png", 0)
	b.CheckConsole()
}

// The poisoned descriptions stay text with the Content-Security-Policy
// turned off: escaping is the dashboard's own, the policy is the second
// line of defence.
func TestDashboardEscapesWithoutCSP(t *testing.T) {
	t.Parallel()
	b := dashboardtest.Open(t)
	b.BypassCSP()
	url := serveExamples(t, newExampleDrift(t), newExampleImpact(), nil, nil)
	for _, route := range []string{"#/servers/demo-tools", "#/servers/demo-tools/contract"} {
		b.Load(url + route)
		b.CheckEscaped()
	}
	b.Do(chromedp.Click(chromedp.CSS(`li[data-key="get_forecast"] summary`)))
	if got := b.Text(`li[data-key="get_forecast"] .def-desc`); got != poisonedForecast {
		t.Errorf("contract tab, get_forecast description: %q", got)
	}
	b.CheckEscaped()
}

// The API behind the real bearertokenauth extension: the dashboard asks for
// the token, keeps it for the tab, and asks again when an accept is refused.
func TestDashboardAcceptWithBearerToken(t *testing.T) {
	t.Parallel()
	drift, b := openBehindAuth(t, "bearertokenauth", bearerAuth(t))
	route := demoRoute

	if got := b.Text(`[data-error="unauthorized"] h2`); got != "Sign in to the control plane" {
		t.Fatalf("without a token the page shows %q, want a sign-in form", b.Text("main"))
	}
	b.Screenshot("dashboard-signin.png", 900)
	signIn := func(form, token string) {
		b.Rerender(route,
			chromedp.SetValue(chromedp.CSS(form+` input[name="token"]`), token),
			chromedp.Click(chromedp.CSS(form+` button[type="submit"]`)))
	}
	signIn("main form.signin", "wrong-token")
	if b.Text(`[data-error="unauthorized"] h2`) == "" {
		t.Fatalf("a wrong token was let in: %q", b.Text("main"))
	}
	signIn("main form.signin", apiToken)
	if d := b.ReadDrift(); d.ID != "91f3ecb6ead24f65" || len(d.Chips) != 3 {
		t.Fatalf("after signing in: drift %q, chips %q", d.ID, d.Chips)
	}
	if got := b.Text("#auth-button"); got != "Sign out (Bearer)" {
		t.Errorf("auth button: %q", got)
	}

	// Accept; the credential is gone by the time it is sent (another tab
	// signed out, say): the API's 401 brings the sign-in form, and signing
	// in sends the accept again.
	b.Do(chromedp.Click(chromedp.CSS(`[data-action="accept"]`)),
		chromedp.SetValue(chromedp.CSS(`.accept-form textarea[name="comment"]`), "project is required from now on"),
		chromedp.SetValue(chromedp.CSS(`.accept-form input[name="by"]`), "alice"))
	b.Eval(`sessionStorage.clear()`, nil)
	b.Do(chromedp.Click(chromedp.CSS(`[data-action="confirm-accept"]`)))
	b.WaitFor(`!!document.querySelector('.accept form.signin')`)
	b.Screenshot("dashboard-accept-signin.png", 900)
	if len(drift.principals()) != 0 {
		t.Fatal("accepted without a credential")
	}
	signIn(".accept form.signin", apiToken)

	b.Screenshot("dashboard-accepted.png", 900)
	if got := b.Text(".banner.success"); !strings.Contains(got, "Accepted drift 91f3ecb6ead24f65 as alice") {
		t.Errorf("banner after accepting: %q", got)
	}
	d := b.ReadDrift()
	if d.State != "accepted" {
		t.Errorf("after accepting, the drift is %q", d.State)
	}
	// bearertokenauth names nobody: the name is the operator's claim.
	if got := b.Text(".accepted-note"); !strings.Contains(got, "Accepted by alice (as stated; not authenticated)") || !strings.Contains(got, "project is required from now on") {
		t.Errorf("accepted note: %q", got)
	}
	if p := drift.principals(); len(p) != 1 || p[0].Name != "alice" || p[0].Authenticated {
		t.Errorf("accepted by %+v", p)
	}
	if b.Text(`[data-action="accept"]`) != "" {
		t.Error("an accepted drift still offers Accept")
	}
	b.CheckConsole()
}

// The API behind the real basicauth extension: the credential is sent in
// its scheme, and the principal it establishes is who accepted.
func TestDashboardAcceptWithBasicAuth(t *testing.T) {
	t.Parallel()
	drift, b := openBehindAuth(t, "basicauth", basicAuth(t))
	route := demoRoute
	b.Rerender(route,
		chromedp.Click(chromedp.CSS(`main input[name="scheme"][value="basic"]`)),
		chromedp.SetValue(chromedp.CSS(`main input[name="username"]`), "alice"),
		chromedp.SetValue(chromedp.CSS(`main input[name="password"]`), "wonderland"),
		chromedp.Click(chromedp.CSS(`main form.signin button[type="submit"]`)))
	b.Rerender(route,
		chromedp.Click(chromedp.CSS(`[data-action="accept"]`)),
		chromedp.SetValue(chromedp.CSS(`.accept-form input[name="by"]`), "mallory"), // the authenticated name wins
		chromedp.Click(chromedp.CSS(`[data-action="confirm-accept"]`)))
	if got := b.Text(".accepted-note"); !strings.Contains(got, "Accepted by alice (authenticated)") {
		t.Errorf("accepted note: %q", got)
	}
	if p := drift.principals(); len(p) != 1 || p[0] != (controlplane.Principal{Name: "alice", Authenticated: true}) {
		t.Errorf("accepted by %+v", p)
	}
	b.CheckConsole()
}

// A drift that arrived after the page loaded is not accepted unseen: the
// API's 409 is shown, and nothing was accepted.
func TestDashboardAcceptConflict(t *testing.T) {
	t.Parallel()
	drift := newExampleDrift(t)
	b := dashboardtest.Open(t)
	b.Load(serveExamples(t, drift, newExampleImpact(), nil, nil) + "#/servers/demo-tools")
	drift.setOpen("a0a0a0a0a0a0a0a0")
	b.Do(chromedp.Click(chromedp.CSS(`[data-action="accept"]`)),
		chromedp.Click(chromedp.CSS(`[data-action="confirm-accept"]`)))
	b.WaitFor(`!!document.querySelector('.banner.error')`)
	if got := b.Text(".banner.error"); !strings.Contains(got, `drift "91f3ecb6ead24f65" is not the newest open drift of "demo-tools"`) {
		t.Errorf("conflict banner: %q", got)
	}
	if p := drift.principals(); len(p) != 0 {
		t.Errorf("accepted by %+v", p)
	}
}

// A drift accepted elsewhere (the CLI) while the page shows it: the next
// refresh says so, and Reload shows it accepted.
func TestDashboardNoticesAcceptElsewhere(t *testing.T) {
	t.Parallel()
	b := dashboardtest.Open(t)
	url := serveExamples(t, newExampleDrift(t), newExampleImpact(), nil, nil)
	b.Load(url + demoRoute)
	resp, err := http.Post(url+"api/v1/servers/demo-tools/accept", "application/json", strings.NewReader(`{"by":"cli"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("accept: %s", resp.Status)
	}
	b.WaitFor(`(document.querySelector('.banner') || {}).textContent?.includes('This drift is now accepted.')`) // within a refresh (10 s)
	b.Rerender(demoRoute, chromedp.Click(chromedp.CSS(`.banner button.btn-link`)))
	if d := b.ReadDrift(); d.State != "accepted" || !strings.Contains(b.Text(".accepted-note"), "Accepted by cli") || b.Text(".banner") != "" {
		t.Errorf("after reloading: drift %s, note %q, banner %q", d.State, b.Text(".accepted-note"), b.Text(".banner"))
	}
	b.CheckConsole()
}

// Leaving a server's page while its periodic refresh is still loading the
// drift history (a slow Collector, or bad timing) drops the refresh
// quietly: its requests are aborted, nothing is thrown, and the page
// opened shows.
func TestDashboardLeaveDuringRefresh(t *testing.T) {
	t.Parallel()
	x := &heldHistory{exampleDrift: newExampleDrift(t), arrived: make(chan struct{}, 1), release: make(chan struct{})}
	b := dashboardtest.Open(t)
	b.Load(serveExamples(t, x, newExampleImpact(), nil, nil) + demoRoute)
	x.hold.Store(true)
	select {
	case <-x.arrived: // the refresh asked for the history (within 10 s)
	case <-time.After(time.Minute):
		t.Fatal("the page did not refresh the drift history")
	}
	b.Go(demoRoute + "/contract")
	close(x.release)
	if got := b.Text(`li[data-key="get_forecast"] .def-desc`); got != poisonedForecast {
		t.Errorf("contract tab after leaving the drift tab: get_forecast description %q", got)
	}
	b.CheckConsole()
}

// heldHistory holds the drift history requests made once hold is set,
// until release is closed, and says when the first one arrived.
type heldHistory struct {
	*exampleDrift
	hold    atomic.Bool
	arrived chan struct{}
	release chan struct{}
}

func (x *heldHistory) Drifts(name string, q controlplane.DriftQuery) (apiwire.DriftPage, error) {
	if x.hold.Load() {
		select {
		case x.arrived <- struct{}{}:
		default:
		}
		<-x.release
	}
	return x.exampleDrift.Drifts(name, q)
}

// With only a receiver, impact panels say why there is no impact; with
// neither, the server list shows the API's 503 message.
func TestDashboardPartsUnavailable(t *testing.T) {
	t.Parallel()
	b := dashboardtest.Open(t)
	b.Load(serveExamples(t, newExampleDrift(t), nil, nil, nil) + "#/servers/demo-tools")
	d := b.ReadDrift()
	for _, g := range d.Groups {
		if g.Impact == nil || g.Impact.State != "unavailable" || !strings.Contains(g.Impact.Text, msgNoProcessor) {
			t.Errorf("%s impact without a processor: %+v", g.Name, g.Impact)
		}
	}
	if len(d.Chips) != 3 || len(d.Groups) != 3 {
		t.Errorf("the drift itself must still show: chips %q, %d groups", d.Chips, len(d.Groups))
	}
	if !strings.Contains(b.Text("#footer"), "impact: not available") {
		t.Errorf("footer: %q", b.Text("#footer"))
	}

	b.Load(serveExamples(t, nil, nil, nil, nil))
	if got := b.Text(`[data-error="unavailable"]`); !strings.Contains(got, "Not available on this Collector") || !strings.Contains(got, msgNoReceiver) {
		t.Errorf("server list without a receiver: %q", got)
	}
	b.CheckConsole()
}

const demoRoute = "#/servers/demo-tools"

// openBehindAuth serves the examples behind the auth extension auth (one
// of exts) and opens demo-tools' page.
func openBehindAuth(t *testing.T, auth string, exts map[component.ID]component.Component) (*exampleDrift, *dashboardtest.Browser) {
	t.Helper()
	drift := newExampleDrift(t)
	b := dashboardtest.Open(t)
	b.Load(serveExamples(t, drift, newExampleImpact(), withAuth(component.MustNewID(auth)), exts) + demoRoute)
	return drift, b
}

// On a phone (390×844) and a small tablet (768×1024) the first screen of a
// drifted server shows its status, the worst change and the agents it
// hurts; nothing needs a sideways scroll, and the breadcrumb is whole.
func TestDashboardSmallScreens(t *testing.T) {
	t.Parallel()
	b := dashboardtest.Open(t)
	url := serveExamples(t, newExampleDrift(t), newExampleImpact(), nil, nil)
	for _, size := range []struct {
		name          string
		width, height int64
	}{{"phone", 390, 844}, {"tablet", 768, 1024}} {
		b.Viewport(size.width, size.height)
		screen := float64(size.height)
		b.Load(url + demoRoute)
		for _, sel := range []string{".server-title [data-status]", ".next-step .worst", ".agents-hurt li[data-agent=\"planner\"]", ".agents-hurt li[data-agent=\"researcher\"]", ".next-summary"} {
			if r := b.Box(sel); r.Bottom() > screen || r.Right() > float64(size.width) {
				t.Errorf("%s: %s ends at (%.0f, %.0f), off the first %dx%d screen", size.name, sel, r.Right(), r.Bottom(), size.width, size.height)
			}
		}
		if got := b.Text(".next-step [data-step]"); got != "Roll back" {
			t.Errorf("%s: next step %q", size.name, got)
		}
		crumb := b.Box(".crumbs .current")
		if got := b.Text(".crumbs .current"); got != "demo-tools" || crumb.Right() > float64(size.width) {
			t.Errorf("%s: breadcrumb %q ends at x=%.0f", size.name, got, crumb.Right())
		}
		checkFits(t, b, size.name+" drift tab")
		b.Screenshot("dashboard-"+size.name+".png", int(size.height))

		b.Load(url)
		checkFits(t, b, size.name+" server list")
		// A DOWN server says since when, on its first screen.
		b.Go("#/servers/billing")
		if r := b.Box(".down-since"); r.Bottom() > screen || !strings.Contains(b.Text(".down-since"), "auth required") {
			t.Errorf("%s: down since %q at y=%.0f", size.name, b.Text(".down-since"), r.Bottom())
		}
		checkFits(t, b, size.name+" DOWN server")
	}
	b.CheckConsole()
}

// checkFits fails when the page or a table in it is wider than the screen.
func checkFits(t *testing.T, b *dashboardtest.Browser, what string) {
	t.Helper()
	var got struct {
		Scroll int      `json:"scroll"`
		Inner  int      `json:"inner"`
		Wide   []string `json:"wide"`
	}
	b.Eval(`({ scroll: document.documentElement.scrollWidth, inner: innerWidth,
  wide: [...document.querySelectorAll('table, .crumbs .current, pre:not(.box-value)')].filter((n) => n.offsetParent && n.scrollWidth > n.clientWidth + 1)
    .map((n) => n.tagName + '.' + n.className + ' ' + n.scrollWidth + '>' + n.clientWidth) })`, &got)
	if got.Scroll > got.Inner || len(got.Wide) > 0 {
		t.Errorf("%s: page %dpx wide in a %dpx window; cut or scrolling: %q", what, got.Scroll, got.Inner, got.Wide)
	}
}

// A drift of 60 changes to 15 tools shows collapsed: the first items open
// with their first changes, the rest as headings; the filter narrows it
// to a severity and to one tool.
func TestDashboardBigDrift(t *testing.T) {
	t.Parallel()
	x := newExampleDrift(t)
	x.drift.Changes = manyChanges(60, 15)
	x.drift.Summary = contract.Summary{}
	for _, c := range x.drift.Changes {
		switch c.Severity {
		case contract.Breaking:
			x.drift.Summary.Breaking++
		case contract.Warning:
			x.drift.Summary.Warning++
		default:
			x.drift.Summary.Compatible++
		}
	}
	b := dashboardtest.Open(t)
	b.Load(serveExamples(t, x, newExampleImpact(), nil, nil) + demoRoute)
	var got struct {
		Groups    int `json:"groups"`
		Collapsed int `json:"collapsed"`
		Cards     int `json:"cards"`
		Height    int `json:"height"`
	}
	read := func() {
		b.Eval(`({ groups: document.querySelectorAll('.item-group:not([hidden])').length,
  collapsed: document.querySelectorAll('.item-group[data-collapsed="true"]').length,
  cards: [...document.querySelectorAll('.change-card')].filter((c) => c.offsetParent).length,
  height: document.documentElement.scrollHeight })`, &got)
	}
	read()
	if got.Groups != 15 || got.Collapsed != 11 || got.Cards != 12 || got.Height > 9000 {
		t.Errorf("60 changes: %d items, %d collapsed, %d changes shown, %dpx tall (want 15, 11, 12, a few screens)", got.Groups, got.Collapsed, got.Cards, got.Height)
	}
	b.Screenshot("dashboard-big-drift.png", 0)

	// Breaking only: every breaking change, and nothing else.
	b.Do(chromedp.Click(chromedp.CSS(`[data-filter-severity="breaking"]`)))
	read()
	if got.Cards != x.drift.Summary.Breaking || b.Text(`.change-card:not([hidden])[data-severity="warning"]`) != "" {
		t.Errorf("breaking only: %d changes shown, want %d", got.Cards, x.drift.Summary.Breaking)
	}
	// One tool (and breaking): that tool's breaking changes.
	b.Do(chromedp.SetValue(chromedp.CSS(`select[data-filter="item"]`), "14"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('select[data-filter="item"]').dispatchEvent(new Event('change'))`))
	read()
	if got.Groups != 1 || b.Text(`.item-group:not([hidden]) .name`) != "tool_14" || got.Cards != 2 {
		t.Errorf("tool_14, breaking: %d items (%q), %d changes", got.Groups, b.Text(`.item-group:not([hidden]) .name`), got.Cards)
	}
	// Filters off: laid out as at first.
	b.Do(chromedp.Click(chromedp.CSS(`[data-filter-severity="breaking"]`)), chromedp.SetValue(chromedp.CSS(`select[data-filter="item"]`), ""),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('select[data-filter="item"]').dispatchEvent(new Event('change'))`))
	read()
	if got.Groups != 15 || got.Cards < 12 {
		t.Errorf("filters off: %d items, %d changes", got.Groups, got.Cards)
	}
	// An item's other changes are a click away.
	b.Do(chromedp.Click(chromedp.CSS(`.item-group[data-name="tool_0"] [data-action="more-changes"]`)))
	var tool0 int
	b.Eval(`[...document.querySelectorAll('.item-group[data-name="tool_0"] .change-card')].filter((c) => c.offsetParent).length`, &tool0)
	if tool0 != 4 {
		t.Errorf("tool_0 after more: %d changes shown", tool0)
	}
	b.CheckConsole()
}

// manyChanges is a drift of n changes spread over tools tool_0..; each
// tool's first two changes are breaking, the rest warnings.
func manyChanges(n, tools int) []contract.Change {
	out := make([]contract.Change, 0, n)
	for i := range n {
		tool, k := i%tools, i/tools
		sev, rule := contract.Warning, contract.RuleID("tool.description.changed")
		if k < 2 {
			sev, rule = contract.Breaking, "input.property.added_required"
		}
		out = append(out, contract.Change{Rule: rule, Severity: sev, Subject: contract.KindTool, Name: fmt.Sprintf("tool_%d", tool),
			Path: fmt.Sprintf("/inputSchema/properties/p%d", k), After: json.RawMessage(`{"type":"string"}`),
			Message: fmt.Sprintf("agents calling tool_%d without p%d will now get a validation error", tool, k)})
	}
	slices.SortStableFunc(out, func(a, b contract.Change) int { return int(b.Severity) - int(a.Severity) })
	return out
}

// The history pages through the API's cursor to the oldest drift.
func TestDashboardHistoryPaging(t *testing.T) {
	t.Parallel()
	x := newExampleDrift(t)
	x.withHistory(130)
	b := dashboardtest.Open(t)
	b.Load(serveExamples(t, x, newExampleImpact(), nil, nil) + demoRoute)
	for clicks := 0; b.Text(`[data-action="older"]`) != ""; clicks++ {
		if clicks > 3 {
			t.Fatalf("Show older does not end: %d drifts listed", len(b.ReadDrift().History))
		}
		before := len(b.ReadDrift().History)
		b.Do(chromedp.Click(chromedp.CSS(`[data-action="older"]`)))
		b.WaitFor(`document.querySelectorAll('.history a[data-drift]').length > ` + strconv.Itoa(before))
	}
	h := b.ReadDrift().History
	if len(h) != 130 || h[0] != "91f3ecb6ead24f65" || h[129] != fmt.Sprintf("%016x", 0xa000+129) {
		t.Errorf("history lists %d drifts, %q … %q", len(h), h[0], h[len(h)-1])
	}
	b.CheckConsole()
}

// A mixed fleet: the servers list marks it with its worst variant's
// severity, and the server's page lists each variant (share, severity,
// summary, its changes as drift cards); a hostile summary is text. A
// server that is not mixed shows no such section.
func TestDashboardMixedFleet(t *testing.T) {
	t.Parallel()
	x := newExampleDrift(t)
	var changes []contract.Change
	for _, c := range x.drift.Changes {
		if c.Rule == "input.property.added_required" || c.Rule == "tool.description.changed" {
			changes = append(changes, c)
		}
	}
	if len(changes) != 2 {
		t.Fatalf("the example drift lacks the changes the variant reuses: %+v", changes)
	}
	hostile := "create_ticket: required param project added " + poisonScript + poisonImage
	for i, s := range x.servers {
		if s.Name == "demo-tools" {
			x.servers[i].Mixed = true
			x.servers[i].Variants = []apiwire.MixedVariant{
				{Digest: strings.Repeat("a", 64), Count: 30, Share: 0.75, Baseline: true},
				{Digest: strings.Repeat("b", 64), Count: 10, Share: 0.25, Severity: "breaking", Summary: hostile, Changes: changes},
			}
		}
	}
	b := dashboardtest.Open(t)
	url := serveExamples(t, x, newExampleImpact(), nil, nil)
	b.Load(url)
	if got := b.Text(`tr[data-server="demo-tools"] [data-mixed]`); got != "mixed fleet breaking" {
		t.Errorf("the servers list marks demo-tools %q, want the badge and its worst variant's severity", got)
	}
	if got := b.Text(`tr[data-server="files"] [data-mixed]`); got != "" {
		t.Errorf("files is marked mixed: %q", got)
	}

	b.Go("#/servers/demo-tools")
	var panel struct {
		Hidden   bool     `json:"hidden"`
		Head     string   `json:"head"`
		Variants []string `json:"variants"`
	}
	b.Eval(`(() => { const p = document.querySelector('section.mixed');
	  return { hidden: p.hidden, head: p.querySelector('.mixed-head h2').textContent,
	    variants: [...p.querySelectorAll('.variant')].map((v) => [v.dataset.baseline, v.dataset.severity, v.querySelector('.variant-head').textContent].join('|')) }; })()`, &panel)
	want := []string{"true||aaaaaaaaaaaa75.0 %baseline", "false|breaking|bbbbbbbbbbbb25.0 %breaking"}
	if panel.Hidden || panel.Head != "MIXED" || !slices.Equal(panel.Variants, want) {
		t.Errorf("mixed section: %+v, want variants %q", panel, want)
	}
	variant := `.variant[data-baseline="false"]`
	if got := b.Text(variant + ` .variant-summary`); got != hostile {
		t.Errorf("variant summary %q, want the hostile text as text", got)
	}
	// The variant's changes are drift cards: severity, rule, BEFORE / AFTER.
	card := variant + ` .change-card[data-rule="input.property.added_required"]`
	if sev := b.Text(card + ` .change-top [data-severity]`); sev != "breaking" || b.Text(card+` .box-before .box-value`) != "not present" ||
		!strings.Contains(b.Text(card+` .box-after .box-value`), `"description": "project key, e.g. DEMO"`) {
		t.Errorf("the variant's create_ticket card: severity %q, before %q, after %q", sev, b.Text(card+` .box-before .box-value`), b.Text(card+` .box-after .box-value`))
	}
	if got := b.Text(variant + ` .change-card[data-rule="tool.description.changed"] .box-after .box-value`); got != poisonedWeather {
		t.Errorf("the variant's get_weather AFTER %q", got)
	}
	// Who the variant affects (testdata/variant_impact.json): the agent it
	// served, hurt now, then those the baseline served.
	var rows []string
	b.Eval(`[...document.querySelectorAll('.variant[data-baseline="false"] .variant-impact tbody tr')].map((r) => [r.dataset.status, r.dataset.agent, r.dataset.risk, r.querySelector('.sessions').textContent].join('|'))`, &rows)
	wantRows := []string{"hurt_now|release-bot|high|conv-7f3a", "at_risk_on_convergence|triage-agent|medium|conv-19c2, conv-0b77", "at_risk_on_convergence||medium|conv-55d0"}
	if !slices.Equal(rows, wantRows) {
		t.Errorf("variant impact rows %q, want %q", rows, wantRows)
	}
	if got := b.Text(variant + ` .variant-totals .hurt-now`); got != "Hurt now: 1 agent · 1 session · 3 calls" {
		t.Errorf("hurt-now totals %q", got)
	}
	b.CheckEscaped()
	b.Screenshot("dashboard-mixed.png", 0)

	b.Go("#/servers/files")
	var hidden bool
	if b.Eval(`document.querySelector('section.mixed').hidden`, &hidden); !hidden {
		t.Error("a server that is not mixed shows the mixed section")
	}
	b.CheckConsole()
}
