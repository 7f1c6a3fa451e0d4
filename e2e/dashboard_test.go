//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/dev/dashboardtest"
)

// checkDashboard loads the running quickstart's dashboard in a real
// headless Chromium after the drift, which the CLI accepted as acceptedBy,
// and asserts what it rendered: the server UP again, the drift accepted,
// the summary chips, a BEFORE / AFTER pair, the agents that called the
// broken tool, and v2's poisoned get_forecast description shown as text
// with nothing of it run. The screenshots are test artifacts
// (_build/artifacts, or $MCPDRIFT_ARTIFACTS).
func checkDashboard(t *testing.T, base, acceptedBy string) {
	t.Helper()
	b := dashboardtest.Open(t)
	b.Load(base)
	list := b.ReadServers()
	if len(list.Rows) != 1 || list.Rows[0].Name != "demo-tools" || list.Rows[0].Status != "UP" || list.Tiles["up"] != "1" {
		t.Errorf("server list: %+v", list)
	}

	b.Go("#/servers/demo-tools")
	d := b.ReadDrift()
	if d.State != "accepted" || len(d.History) != 1 || d.History[0] != d.ID {
		t.Errorf("drift %q state %q, history %q", d.ID, d.State, d.History)
	}
	if got := b.Text(".accepted-note"); !strings.Contains(got, "Accepted by "+acceptedBy) {
		t.Errorf("accepted note: %q", got)
	}
	if got := strings.Join(d.Chips, " · "); got != "1 breaking · 1 warning · 1 compatible" {
		t.Errorf("summary chips: %q", got)
	}
	ticket := d.Group(t, "tool", "create_ticket")
	c := ticket.Card(t, "input.property.added_required")
	if c.BeforeLabel != "BEFORE" || c.AfterLabel != "AFTER" || c.Before != "not present" || !strings.Contains(c.After, "project key, e.g. DEMO") {
		t.Errorf("create_ticket card: %+v", c)
	}
	w := d.Group(t, "tool", "get_weather").Card(t, "tool.description.changed")
	if w.Before != "Get the current weather for a city." || !strings.HasPrefix(w.After, "Current conditions for a city") {
		t.Errorf("get_weather BEFORE %q AFTER %q", w.Before, w.After)
	}
	// Both agents called create_ticket with v1's definition after the
	// switch: high risk, old-definition calls (before the change, or
	// stale after it) in the split.
	for _, agent := range []string{"planner", "researcher"} {
		row := ticket.Agent(t, agent)
		if row.Risk != "high" || (row.Before == "0" && row.Stale == "0") || row.Cells[1] != "3" {
			t.Errorf("create_ticket caller %s: %+v", agent, row)
		}
	}
	forecast := d.Group(t, "tool", "get_forecast").Card(t, "tool.added")
	if !strings.Contains(forecast.After, `<script>window.__mcpdriftPoisoned`) || !strings.Contains(forecast.After, `<img src=x onerror=`) {
		t.Errorf("get_forecast's description is not shown as text: %q", forecast.After)
	}
	b.CheckEscaped()
	b.CheckConsole()
	b.Screenshot("dashboard.png", 1200)
	b.Screenshot("dashboard-full.png", 0)
}
