package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// TestCheckReleaseGate drives the gate against the real npm server-everything:
// lock one release, check it again, then check the next release.
func TestCheckReleaseGate(t *testing.T) {
	t.Parallel()
	node := testservers.Node(t)
	v1 := testservers.Everything(t, "2025.9.25")
	v2 := testservers.Everything(t, "2025.11.25")
	lock := filepath.Join(t.TempDir(), "mcp.lock.json")
	// check runs the gate on a release. Its --timeout is longer than the
	// default 30 s, which bounds node's start-up (not what is tested): at
	// load 40-50 this test took 22-136 s.
	check := func(release string, args ...string) (int, string, string) {
		args = append([]string{"check", "--lock", lock, "--timeout", "5m"}, args...)
		return cli(t, "", append(args, "--stdio", "--", node, release, "stdio")...)
	}

	if code, _, errOut := check(v1); code != exitInput || !strings.Contains(errOut, "--update") {
		t.Fatalf("missing lock: exit %d, %s", code, errOut)
	}
	if code, _, errOut := check(v1, "--update", "--name", "everything"); code != 0 {
		t.Fatalf("--update: exit %d, %s", code, errOut)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := check(v1)
	if code != 0 || !strings.Contains(out, "no changes") || !strings.Contains(out, "everything") {
		t.Fatalf("same release: exit %d\n%s%s", code, out, errOut)
	}
	// The next release rewrites a description (warning) and adds a tool.
	code, out, errOut = check(v2, "--format", "json")
	var got struct {
		Severity string
		Changes  []struct{ Rule, Name string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Severity != "warning" {
		t.Fatalf("next release with --fail-on breaking: exit %d\n%s%s", code, out, errOut)
	}
	rules := map[string]string{}
	for _, c := range got.Changes {
		rules[c.Name] = c.Rule
	}
	if rules["startElicitation"] != "tool.description.changed" || rules["zip"] != "tool.added" {
		t.Errorf("changes: %+v", got.Changes)
	}
	if code, _, errOut := check(v2, "--fail-on", "warning"); code != exitDrift || !strings.Contains(errOut, "at or above warning") {
		t.Fatalf("--fail-on warning: exit %d %s", code, errOut)
	}
	code, out, errOut = check(v2, "--format", "markdown")
	if code != 0 || !strings.Contains(out, "### MCP contract drift: warning") || !strings.Contains(out, "`"+lock+"`") {
		t.Errorf("markdown: exit %d\n%s%s", code, out, errOut)
	}
	// Accepting the drift: the lock now matches the new release.
	if code, _, errOut := check(v2, "--update"); code != 0 {
		t.Fatalf("update to the new release: exit %d %s", code, errOut)
	}
	if code, out, errOut := check(v2, "--fail-on", "info"); code != 0 {
		t.Fatalf("after accepting: exit %d %s%s", code, out, errOut)
	}
}

func TestCheckUsage(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.json", `{"schema_version":"mcpdrift.snapshot/v9"}`)
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"check", "--url", "http://127.0.0.1:1/mcp"}, exitUsage},                         // no --lock
		{[]string{"check", "--lock", bad, "--url", "http://127.0.0.1:1/mcp"}, exitInput},          // unreadable lock
		{[]string{"check", "--lock", bad, "--format", "xml", "--url", "http://x/mcp"}, exitUsage}, // bad format
		{[]string{"check", "--lock", bad}, exitUsage},                                             // no target
	} {
		if code, _, errOut := cli(t, "", c.args...); code != c.code || errOut == "" {
			t.Errorf("%v: exit %d, want %d: %q", c.args, code, c.code, errOut)
		}
	}
	lock := filepath.Join(dir, "new.json")
	if code, _, errOut := cli(t, "", "check", "--lock", lock, "--update", "--timeout", "2s", "--url", "http://127.0.0.1:1/mcp"); code != exitProbe || !strings.Contains(errOut, "unreachable") {
		t.Errorf("unreachable server: exit %d %s", code, errOut)
	}
	if _, err := os.Stat(lock); err == nil {
		t.Error("a failed probe must not write the lock")
	}
}
