//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/quickstart"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// The control plane part of the quickstart: the CLI's status, history,
// impact and accept against the running distribution's mcpdrift_api
// extension, after the quickstart's drift.

// mcpdriftCLI runs bin/mcpdrift against the stack's API (MCPDRIFT_API) and
// returns its exit status and output.
func mcpdriftCLI(t *testing.T, s *quickstart.Stack, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(built(t, "bin/mcpdrift"), args...)
	cmd.Env = append(cmd.Environ(), "MCPDRIFT_API="+s.APIURL())
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errOut.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, out.String(), errOut.String()
}

// cliJSON runs the CLI with --format json, wants exit status code and
// decodes the answer.
func cliJSON(t *testing.T, s *quickstart.Stack, code int, v any, args ...string) {
	t.Helper()
	got, out, errOut := mcpdriftCLI(t, s, append(args, "--format", "json")...)
	if got != code {
		t.Fatalf("mcpdrift %s: exit %d, want %d\n%s%s", strings.Join(args, " "), got, code, out, errOut)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("mcpdrift %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// checkControlPlane runs status, history, impact and accept after the
// drift whose event is d, and returns the accepted drift's id.
func checkControlPlane(t *testing.T, s *quickstart.Stack, dir string, d quickstart.Event) string {
	t.Helper()
	driftID := d.Attr(semconv.DriftID)

	var list apiwire.ServerList
	cliJSON(t, s, 1, &list, "status") // 1: a server has drifted
	if list.Summary.Drifted != 1 || list.Servers[0].Name != "demo-tools" || list.Servers[0].OpenDrift == nil ||
		list.Servers[0].Contract.ServerInfo.Version == "" || list.Servers[0].Contract.SpecGeneration == "" {
		t.Fatalf("status: %+v", list)
	}
	if code, out, _ := mcpdriftCLI(t, s, "status"); code != 1 || !strings.Contains(out, "DRIFTED") || !strings.Contains(out, "demo-tools") {
		t.Errorf("status (text): exit %d\n%s", code, out)
	}

	var page apiwire.DriftPage
	cliJSON(t, s, 0, &page, "history", "demo-tools", "--limit", "5")
	if len(page.Drifts) != 1 || page.Drifts[0].DriftID != driftID || page.Drifts[0].State != apiwire.DriftOpen || len(page.Drifts[0].Changes) != 3 {
		t.Fatalf("history: %+v", page)
	}
	if code, out, _ := mcpdriftCLI(t, s, "history", "demo-tools"); code != 0 || !strings.Contains(out, "input.property.added_required") || !strings.Contains(out, "BEFORE:") {
		t.Errorf("history (text): exit %d\n%s", code, out)
	}

	// The live index answers what the impact records said, and more:
	// latency and the split of calls (before the change, stale, new).
	var imp apiwire.Impact
	cliJSON(t, s, 0, &imp, "impact", "demo-tools", "--tool", "create_ticket", "--hours", "1")
	if imp.Change == nil || imp.Change.DriftID != driftID || imp.Change.Severity != "breaking" || imp.Totals.Agents != 2 || imp.Totals.Sessions != 6 {
		t.Fatalf("impact: %+v", imp)
	}
	for _, a := range imp.Agents {
		if a.Agent == nil || a.Risk != "high" || a.Digests.Before+a.Digests.Stale == 0 || a.AvgLatencyMS == nil || a.Sessions != 3 {
			t.Errorf("impact of %v: %+v", a.Agent, a)
		}
	}
	if code, out, _ := mcpdriftCLI(t, s, "impact", "demo-tools", "--tool", "create_ticket"); code != 0 ||
		!strings.Contains(out, "AGENT") || !strings.Contains(out, "AVG LATENCY") || !strings.Contains(out, "planner") {
		t.Errorf("impact (text): exit %d\n%s", code, out)
	}
	if code, _, _ := mcpdriftCLI(t, s, "impact", "demo-tools", "--tool", "no_such_tool"); code != 7 {
		t.Errorf("impact of an unknown tool: exit %d, want 7", code)
	}

	var res apiwire.AcceptResult
	cliJSON(t, s, 0, &res, "accept", "demo-tools", "--drift", page.Drifts[0].ID, "--by", "e2e", "--comment", "create_ticket needs project")
	if res.Status != apiwire.StatusUp || len(res.Accepted) != 1 || res.Accepted[0].State != apiwire.DriftAccepted {
		t.Fatalf("accept: %+v", res)
	}
	eventually(t, dir, "the drift_accepted event", 20*time.Second, func(out *quickstart.Outputs) bool {
		ev := out.Events(semconv.EventDriftAccepted)
		return len(ev) == 1 && ev[0].Attr(semconv.DriftID) == driftID && ev[0].Attr(semconv.AcceptBy) == "e2e"
	})
	if code, _, errOut := mcpdriftCLI(t, s, "accept", "demo-tools"); code != 8 || !strings.Contains(errOut, "no open drift") {
		t.Errorf("second accept: exit %d %s", code, errOut)
	}
	cliJSON(t, s, 0, &list, "status")
	if list.Servers[0].Status != apiwire.StatusUp {
		t.Errorf("status after accept: %s", list.Servers[0].Status)
	}
	return page.Drifts[0].ID
}

// checkHistoryRestored: after a restart the history still holds the drift,
// accepted.
func checkHistoryRestored(t *testing.T, s *quickstart.Stack, id string) {
	t.Helper()
	var page apiwire.DriftPage
	cliJSON(t, s, 0, &page, "history", "demo-tools")
	if len(page.Drifts) != 1 || page.Drifts[0].ID != id || page.Drifts[0].Accepted == nil || page.Drifts[0].Accepted.By != "e2e" {
		t.Errorf("history after a restart: %+v", page)
	}
}
