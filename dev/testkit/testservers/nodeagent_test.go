package testservers

import (
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// agentEvent is one line the Node agent prints.
type agentEvent struct {
	Event      string
	ServerInfo struct{ Name string }
	Tools      []struct{ Name string }
	Tool       string
	N          int
	Result     *struct {
		IsError bool
		Content []struct{ Text string }
	}
	Error *struct {
		Code    int
		Message string
	}
}

func agentCommand(t *testing.T, ctx context.Context, args ...string) *exec.Cmd {
	t.Helper()
	argv, env := NodeAgent(t)
	server := []string{Node(t), Everything(t, "2025.11.25"), "stdio"}
	cmd := exec.CommandContext(ctx, argv[0], append(append(append(argv[1:], args...), "--"), server...)...)
	cmd.Env = env
	return cmd
}

func parseEvents(t *testing.T, out []byte) []agentEvent {
	t.Helper()
	var events []agentEvent
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var e agentEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("not a JSON line: %q: %v", line, err)
		}
		if e.Event != "notification" { // the server logs on its own schedule
			events = append(events, e)
		}
	}
	return events
}

// The agent against the real server-everything, directly: it connects,
// lists, calls echo three times and a tool that does not exist once.
func TestNodeAgentListsAndCalls(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // generous: node start-up on a loaded machine
	defer cancel()
	out, err := agentCommand(t, ctx, "--list", "--call", "echo", "--arguments", `{"message":"drift"}`, "--times", "3").Output()
	if err != nil {
		t.Fatalf("agent: %v\n%s", err, stderrOf(err))
	}
	ev := parseEvents(t, out)
	if len(ev) != 6 || ev[0].Event != "connected" || ev[0].ServerInfo.Name != "example-servers/everything" || ev[1].Event != "tools" || ev[5].Event != "closed" {
		t.Fatalf("events: %s", out)
	}
	names := map[string]bool{}
	for _, tool := range ev[1].Tools {
		names[tool.Name] = true
	}
	if !names["echo"] || !names["add"] {
		t.Errorf("tools: %v", names)
	}
	for i, e := range ev[2:5] {
		if e.Event != "call" || e.Tool != "echo" || e.N != i+1 || e.Result == nil || e.Result.IsError || len(e.Result.Content) != 1 || e.Result.Content[0].Text != "Echo: drift" {
			t.Errorf("call %d: %+v", i+1, e)
		}
	}

	out, err = agentCommand(t, ctx, "--call", "no-such-tool").Output()
	if err != nil {
		t.Fatalf("a call to a missing tool is an answer, not a failure: %v\n%s", err, stderrOf(err))
	}
	ev = parseEvents(t, out)
	if len(ev) != 3 || ev[1].Event != "call" || (ev[1].Error == nil && (ev[1].Result == nil || !ev[1].Result.IsError)) {
		t.Errorf("missing tool: %s", out)
	}
}

// With --stdin a test drives the session one step at a time: each command
// is answered before the next is sent, on one connection.
func TestNodeAgentStepByStep(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := agentCommand(t, ctx, "--call", "echo", "--arguments", `{"message":"first"}`, "--stdin")
	stdin, lines := StartPiped(t, cmd)
	next := func(want string) agentEvent {
		t.Helper()
		for lines.Scan() {
			var e agentEvent
			if err := json.Unmarshal(lines.Bytes(), &e); err != nil {
				t.Fatalf("not a JSON line: %q", lines.Text())
			}
			if e.Event == want {
				return e
			}
			if e.Event != "notification" && e.Event != "connected" {
				t.Fatalf("got %s, want %s: %s", e.Event, want, lines.Text())
			}
		}
		t.Fatalf("the agent stopped before %s: %v", want, lines.Err())
		return agentEvent{}
	}
	if e := next("call"); e.Result == nil || e.Result.Content[0].Text != "Echo: first" {
		t.Fatalf("first call: %+v", e)
	}
	io.WriteString(stdin, `{"op":"call","tool":"echo","arguments":{"message":"second"}}`+"\n")
	if e := next("call"); e.N != 2 || e.Result.Content[0].Text != "Echo: second" {
		t.Fatalf("second call: %+v", e)
	}
	io.WriteString(stdin, `{"op":"list"}`+"\n")
	if e := next("tools"); len(e.Tools) == 0 {
		t.Fatal("no tools listed")
	}
	io.WriteString(stdin, "not json\n")
	next("bad_command")
	stdin.Close()
	next("closed")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("agent: %v", err)
	}
}

func TestNodeAgentUsage(t *testing.T) {
	argv, env := NodeAgent(t)
	for _, args := range [][]string{{}, {"--times", "x", "--", "node"}, {"--arguments", "[]", "--", "node"}, {"--bogus"}} {
		cmd := exec.Command(argv[0], append(argv[1:], args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "usage:") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
