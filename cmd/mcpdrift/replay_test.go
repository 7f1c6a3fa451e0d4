package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

type replayJSON struct {
	FailOn  string         `json:"fail_on"`
	Fails   bool           `json:"fails"`
	Summary map[string]int `json:"summary"`
	Results []struct {
		Tool, Outcome, Expect, Detail string
		Arguments                     json.RawMessage
		Rules                         []string
		Fails                         bool
	} `json:"results"`
}

// TestReplayServerEverything replays the 2025.11.25 contract against the
// real 2026.1.26 release (its tools are harmless): renamed and removed
// tools and the narrowed enum are refused with tool errors that name what
// changed; an unchanged call still works; a tool that needs sampling fails
// without saying why; a long-running tool times out. Without
// --yes-call-tools nothing is called.
func TestReplayServerEverything(t *testing.T) {
	t.Parallel()
	node := testservers.Node(t)
	v1, v2 := testservers.Everything(t, "2025.11.25"), testservers.Everything(t, "2026.1.26")
	lock := filepath.Join(t.TempDir(), "mcp.lock.json")
	if code, _, errOut := cli(t, "", "snapshot", "-o", lock, "--stdio", "--", node, v1, "stdio"); code != 0 {
		t.Fatalf("snapshot: %s", errOut)
	}

	code, out, errOut := cli(t, "", "replay", "--lock", lock, "--stdio", "--", node, v2, "stdio")
	if code != 2 || out != "" || !strings.Contains(errOut, `add({"a":0,"b":0})  expect reject  [tool.renamed]`) ||
		!strings.Contains(errOut, "--yes-call-tools") {
		t.Fatalf("without --yes-call-tools: exit %d\n%s\n%s", code, out, errOut)
	}

	args := []string{"replay", "--lock", lock, "--yes-call-tools", "--format", "json"}
	for _, tool := range []string{"add", "get-structured-content", "startElicitation", "echo", "trigger-sampling-request"} {
		args = append(args, "--tool", tool)
	}
	code, out, errOut = cli(t, "", append(args, "--stdio", "--", node, v2, "stdio")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var r replayJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := map[string]string{"add": "graceful", "get-structured-content": "graceful", "startElicitation": "graceful", "echo": "accepted", "trigger-sampling-request": "tool_error"}
	if len(r.Results) != len(want) || r.Fails || r.FailOn != "accepted" {
		t.Fatalf("%s", out)
	}
	for _, res := range r.Results {
		if res.Outcome != want[res.Tool] {
			t.Errorf("%s: %s (%s)", res.Tool, res.Outcome, res.Detail)
		}
		if res.Tool == "get-structured-content" && (string(res.Arguments) != `{"location":"example"}` || !strings.Contains(res.Detail, "location")) {
			t.Errorf("enum witness: %+v", res)
		}
	}

	// A protocol error threshold fails on nothing here; a graceful one on
	// every refusal.
	code, _, _ = cli(t, "", append(args, "--fail-on", "graceful", "--stdio", "--", node, v2, "stdio")...)
	if code != 1 {
		t.Errorf("--fail-on graceful: exit %d", code)
	}

	// The long-running tool takes 10 s by default.
	code, out, _ = cli(t, "", "replay", "--lock", lock, "--yes-call-tools", "--format", "json", "--tool", "trigger-long-running-operation",
		"--request-timeout", "1s", "--stdio", "--", node, v2, "stdio")
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 1 || len(r.Results) != 1 || r.Results[0].Outcome != "timeout" {
		t.Errorf("timeout: exit %d %s", code, out)
	}
}

// TestReplayEarlierReleases: the earlier consecutive releases change no
// schema in a way that breaks a call: every old call of a changed tool is
// still accepted (2025.9.25→2025.11.25 rewords startElicitation, whose
// elicitation the replay client declines), and 2025.7.1→2025.9.25 changes
// no tool at all, so nothing is called.
func TestReplayEarlierReleases(t *testing.T) {
	t.Parallel()
	node := testservers.Node(t)
	for _, c := range []struct {
		old, new string
		calls    int
	}{{"2025.7.1", "2025.9.25", 0}, {"2025.9.25", "2025.11.25", 1}} {
		lock := filepath.Join(t.TempDir(), "mcp.lock.json")
		if code, _, errOut := cli(t, "", "snapshot", "-o", lock, "--stdio", "--", node, testservers.Everything(t, c.old), "stdio"); code != 0 {
			t.Fatalf("snapshot: %s", errOut)
		}
		code, out, errOut := cli(t, "", "replay", "--lock", lock, "--yes-call-tools", "--format", "json", "--fail-on", "tool_error",
			"--stdio", "--", node, testservers.Everything(t, c.new), "stdio")
		var r replayJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || len(r.Results) != c.calls {
			t.Fatalf("%s→%s: exit %d\n%s\n%s", c.old, c.new, code, out, errOut)
		}
		for _, res := range r.Results {
			if res.Outcome != "accepted" || res.Expect != "accept" {
				t.Errorf("%s→%s: %+v", c.old, c.new, res)
			}
		}
	}
}

// TestReplayServerEverythingHTTP: the same over Streamable HTTP, in
// Markdown.
func TestReplayServerEverythingHTTP(t *testing.T) {
	t.Parallel()
	node := testservers.Node(t)
	v1 := testservers.Everything(t, "2025.11.25")
	lock := filepath.Join(t.TempDir(), "mcp.lock.json")
	if code, _, errOut := cli(t, "", "snapshot", "-o", lock, "--stdio", "--", node, v1, "stdio"); code != 0 {
		t.Fatalf("snapshot: %s", errOut)
	}
	url := testservers.EverythingHTTP(t, "2026.1.26", "streamableHttp") + "/mcp"
	code, out, errOut := cli(t, "", "replay", "--lock", lock, "--yes-call-tools", "--format", "markdown", "--tool", "add", "--tool", "get-structured-content", "--url", url)
	if code != 0 || !strings.Contains(out, "### MCP replay: 2 old calls, pass") || strings.Count(out, "| graceful |") != 2 {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestReplayUsage(t *testing.T) {
	dir := t.TempDir()
	lock := writeFile(t, dir, "lock.json", `{}`)
	for _, args := range [][]string{
		{"replay", "--url", "http://127.0.0.1:1/mcp"},                                 // no --lock
		{"replay", "--lock", lock, "--fail-on", "sometimes", "--url", "http://x/mcp"}, // bad threshold
		{"replay", "--lock", lock, "--format", "sarif", "--url", "http://x/mcp"},      // no sarif for replay
	} {
		if code, _, errOut := cli(t, "", args...); code != exitUsage || errOut == "" {
			t.Errorf("%v: exit %d %q", args, code, errOut)
		}
	}
	// A lock that is not a snapshot is an input error, as for check.
	if code, _, errOut := cli(t, "", "replay", "--lock", lock, "--url", "http://127.0.0.1:1/mcp"); code != exitInput || errOut == "" {
		t.Errorf("unusable lock: exit %d %q", code, errOut)
	}
}
