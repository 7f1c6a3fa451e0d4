package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/witness"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/replay"
)

// The servers under test are real go-sdk servers. Version 1 lists
// create_ticket(title), purge(before) (destructive) and echo(message);
// version 2 makes project a required argument of create_ticket, before a
// required one of purge, and rewords echo's description. Version 2 comes
// in one flavour per way of handling the old call create_ticket(title).

const serverEnv = "MCPDRIFT_REPLAY_TEST_SERVER"

// TestMain serves a version-2 stdio server when the test binary is run as
// one (the crash flavour needs a process of its own).
func TestMain(m *testing.M) {
	if flavour := os.Getenv(serverEnv); flavour != "" {
		if err := newServer(2, flavour, nil, nil).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// newServer builds a server of a contract version; flavour says how
// version 2 answers create_ticket without a project. called records the
// calls the server received; the timeout flavour answers only once block
// is closed (or the request is cancelled).
func newServer(version int, flavour string, called func(string), block <-chan struct{}) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "tickets", Version: fmt.Sprint(version)}, nil)
	record := func(name string) {
		if called != nil {
			called(name)
		}
	}
	ticket := `{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`
	purge := `{"type":"object","properties":{"before":{"type":"string","format":"date"}}}`
	echoDesc := "Echo the message"
	if version == 2 {
		ticket = `{"type":"object","properties":{"title":{"type":"string"},"project":{"type":"string"}},"required":["title","project"]}`
		purge = `{"type":"object","properties":{"before":{"type":"string","format":"date"}},"required":["before"]}`
		echoDesc = "Echoes the message back"
	}
	srv.AddTool(&mcp.Tool{Name: "create_ticket", Description: "Create a ticket", InputSchema: json.RawMessage(ticket)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			record("create_ticket")
			var args map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &args)
			if _, ok := args["project"]; ok || version == 1 {
				return text("created"), nil
			}
			switch flavour {
			case "graceful":
				r := text(`missing required argument "project"; refresh tools/list for the current schema. Nothing was created.`)
				r.IsError = true
				return r, nil
			case "tool_error":
				r := text("something went wrong")
				r.IsError = true
				return r, nil
			case "protocol_error":
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params"}
			case "timeout":
				select {
				case <-ctx.Done():
				case <-block:
				}
				return nil, errors.New("too late")
			case "crash":
				os.Exit(3)
			}
			return text("created in the default project"), nil // accepted: silently reinterpreted
		})
	yes := true
	srv.AddTool(&mcp.Tool{Name: "purge", Description: "Delete old tickets", InputSchema: json.RawMessage(purge), Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			record("purge")
			return text("purged"), nil
		})
	srv.AddTool(&mcp.Tool{Name: "echo", Description: echoDesc, InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			record("echo")
			return text("echo"), nil
		})
	return srv
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// serveHTTP serves a server over Streamable HTTP on loopback.
func serveHTTP(t *testing.T, srv *mcp.Server) probe.Target {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return probe.Target{URL: ts.URL}
}

// lock takes the version-1 snapshot.
func lock(t *testing.T) *contract.Snapshot {
	t.Helper()
	s, err := probe.Probe(context.Background(), serveHTTP(t, newServer(1, "", nil, nil)), probe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// replayAgainst plans and runs the replay of the lock against a target.
func replayAgainst(t *testing.T, ctx context.Context, old *contract.Snapshot, target probe.Target, o replay.PlanOptions) *replay.Report {
	t.Helper()
	open := func(ctx context.Context) (*probe.Session, error) { return probe.Open(ctx, target, probe.Options{}) }
	s, err := open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return replay.NewReport("tickets", replay.Accepted, replay.Run(ctx, s, open, planFor(old, s, o)))
}

// planFor plans the replay of the lock against the contract a session listed.
func planFor(old *contract.Snapshot, s *probe.Session, o replay.PlanOptions) []replay.Call {
	live := s.Result().Snapshot
	r := contract.Diff(old, live, nil)
	witness.Report(r, old, live)
	return replay.Plan(r, old, live, o)
}

func resultFor(t *testing.T, rep *replay.Report, tool string) replay.Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.Tool == tool {
			return r
		}
	}
	t.Fatalf("no call to %s in %+v", tool, rep.Results)
	return replay.Result{}
}

// TestOutcomes: the old call create_ticket({"title": ...}) graded for each
// way a new server can answer it; the destructive tool is planned but not
// called; the unchanged-in-schema tool is called and accepted.
func TestOutcomes(t *testing.T) {
	old := lock(t)
	for _, c := range []struct {
		flavour string
		want    replay.Outcome
		fails   bool
	}{
		{"graceful", replay.Graceful, false},
		{"tool_error", replay.ToolError, false},
		{"protocol_error", replay.ProtocolError, false},
		{"accepted", replay.Accepted, true},
		{"timeout", replay.Timeout, true},
	} {
		t.Run(c.flavour, func(t *testing.T) {
			var calls []string
			block := make(chan struct{})
			target := serveHTTP(t, newServer(2, c.flavour, func(name string) { calls = append(calls, name) }, block))
			t.Cleanup(func() { close(block) }) // before the server closes: it waits for its handlers
			ctx := context.Background()
			if c.flavour == "timeout" {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 2*time.Second) // the server never answers
				defer cancel()
			}
			rep := replayAgainst(t, ctx, old, target, replay.PlanOptions{})
			r := resultFor(t, rep, "create_ticket")
			if r.Outcome != c.want || r.Expect != replay.ExpectReject || r.Fails != c.fails || string(r.Arguments) != `{"title":"example"}` {
				t.Errorf("create_ticket: %+v", r)
			}
			if p := resultFor(t, rep, "purge"); p.Outcome != replay.Skipped || !strings.Contains(p.Detail, "destructiveHint") {
				t.Errorf("purge: %+v", p)
			}
			for _, name := range calls {
				if name == "purge" {
					t.Error("the destructive tool was called")
				}
			}
			if c.flavour != "timeout" {
				if e := resultFor(t, rep, "echo"); e.Outcome != replay.Accepted || e.Expect != replay.ExpectAccept || e.Fails {
					t.Errorf("echo: %+v", e)
				}
			}
			if rep.Fails() != c.fails {
				t.Errorf("report fails %v:\n%s", rep.Fails(), rep.Text())
			}
		})
	}
}

// TestCrash: a stdio server that exits on the old call is graded crash;
// replay connects again (a new process) for the calls that remain.
func TestCrash(t *testing.T) {
	old := lock(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	target := probe.Target{Command: exe, Args: []string{"-test.run=^$"}, Env: []string{serverEnv + "=crash"}}
	rep := replayAgainst(t, context.Background(), old, target, replay.PlanOptions{})
	if r := resultFor(t, rep, "create_ticket"); r.Outcome != replay.Crash || !r.Fails || !strings.Contains(r.Detail, "exited") {
		t.Errorf("create_ticket: %+v", r)
	}
	if e := resultFor(t, rep, "echo"); e.Outcome != replay.Accepted {
		t.Errorf("echo after the crash: %+v", e)
	}
}

// TestIncludeDestructive: with the option the destructive tool is called.
func TestIncludeDestructive(t *testing.T) {
	old := lock(t)
	var calls []string
	target := serveHTTP(t, newServer(2, "graceful", func(name string) { calls = append(calls, name) }, nil))
	rep := replayAgainst(t, context.Background(), old, target, replay.PlanOptions{IncludeDestructive: true})
	if p := resultFor(t, rep, "purge"); p.Outcome != replay.Accepted || p.Expect != replay.ExpectReject || !p.Fails {
		t.Errorf("purge: %+v", p)
	}
	if !strings.Contains(strings.Join(calls, ","), "purge") {
		t.Errorf("purge not called: %v", calls)
	}
}

// TestFailOnThresholds: outcomes rank graceful < tool_error <
// protocol_error < accepted < timeout < crash; an accepted call the new
// contract accepts never fails.
func TestFailOnThresholds(t *testing.T) {
	reject := replay.Call{Expect: replay.ExpectReject}
	accept := replay.Call{Expect: replay.ExpectAccept}
	for _, c := range []struct {
		call      replay.Call
		outcome   replay.Outcome
		threshold string
		fails     bool
	}{
		{reject, replay.Graceful, "graceful", true},
		{reject, replay.Graceful, "tool_error", false},
		{reject, replay.ProtocolError, "protocol_error", true},
		{reject, replay.ProtocolError, "accepted", false},
		{reject, replay.Accepted, "accepted", true},
		{accept, replay.Accepted, "graceful", false},
		{accept, replay.ProtocolError, "protocol_error", true},
		{reject, replay.Crash, "timeout", true},
		{reject, replay.Crash, "none", false},
		{reject, replay.Skipped, "graceful", false},
	} {
		th, err := replay.ParseOutcome(c.threshold)
		if err != nil {
			t.Fatal(err)
		}
		if got := (replay.Result{Call: c.call, Outcome: c.outcome}).Reaches(th); got != c.fails {
			t.Errorf("%s %s at --fail-on %s: %v", c.call.Expect, c.outcome, c.threshold, got)
		}
	}
	if _, err := replay.ParseOutcome("bad"); err == nil {
		t.Error("bad threshold accepted")
	}
}

// TestExpiredSessionReopens: when the session's time has run out
// (Options.Timeout, or its context ended: Session.Expired either way), the
// remaining calls go over a fresh session instead of being graded as
// timeouts they never had a chance to avoid. The session's context is
// cancelled rather than left to time out, so the test does not depend on
// how fast a loaded machine opens it.
func TestExpiredSessionReopens(t *testing.T) {
	old := lock(t)
	target := serveHTTP(t, newServer(2, "graceful", nil, nil))
	ctx, expire := context.WithCancel(context.Background())
	s, err := probe.Open(ctx, target, probe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	calls := planFor(old, s, replay.PlanOptions{})
	expire()
	if !s.Expired() {
		t.Fatal("the session outlived its context")
	}
	opens := 0
	open := func(ctx context.Context) (*probe.Session, error) {
		opens++
		return probe.Open(ctx, target, probe.Options{})
	}
	rep := replay.NewReport("tickets", replay.Accepted, replay.Run(context.Background(), s, open, calls))
	if got := resultFor(t, rep, "create_ticket"); got.Outcome != replay.Graceful || opens != 1 {
		t.Errorf("after expiry: %+v, %d sessions opened", got, opens)
	}
}
