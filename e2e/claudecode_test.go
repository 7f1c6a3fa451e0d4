//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/dashboardtest"
	"github.com/mcpdrift/mcpdrift/dev/messagesapi"
	"github.com/mcpdrift/mcpdrift/dev/quickstart"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// The stale-call judgements of issue 23 with the real Claude Code CLI and
// a Go agent (goagent_stale_test.go): `make e2e` runs them, `make
// e2e-stale` only them.

// ccTicket is Claude Code's name for the quickstart server's create_ticket.
const ccTicket = "mcp__demo-tools__create_ticket"

// TestClaudeCodeStaleCalls: the real Claude Code CLI, its project
// .mcp.json wrapped by `mcpdrift wrap --on-stale refuse`, its model's turns
// scripted by the Messages API stand-in, the quickstart server switching
// from v1 to v2 (create_ticket gains the required `project`) between two
// of its turns, otelcol-mcpdrift probing every 3 s. The model files a
// ticket under v1; the server switches right after a probe; once Claude
// Code has re-listed (its proxy's tools/list span) the model files one
// with `project` at once — before the receiver's next probe — and then one
// planned against v1 (no `project`). Claude Code 2.1.332 keeps offering
// the model the create_ticket it first listed (v1) after its re-list, so
// such plans are what a real host sends. Issue 23's judgements are
// checkStaleJudgements'.
func TestClaudeCodeStaleCalls(t *testing.T) {
	t.Parallel()
	o := binaries(t)
	claude := testservers.ClaudeCode(t)
	mcpdrift := built(t, "bin/mcpdrift")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s := startV1Stack(t, ctx, o)

	api, err := messagesapi.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	host := startClaudeCode(t, ctx, claude, mcpdrift, s, o.Dir, api.URL)

	// Turn 1: v1 is offered; a v1 call, before the change.
	turn := nextTurn(t, ctx, api)
	if v := ticketVersion(t, turn.Request); v != "v1" {
		t.Fatalf("Claude Code's first turn offers create_ticket %s, want v1", v)
	}
	turn.Reply(toolUse(ccTicket, map[string]any{"title": "Printer on fire"}))
	turn = nextTurn(t, ctx, api)
	if r := onlyResult(t, turn.Request); r.IsError || !strings.Contains(r.Text, "DEMO-42") {
		t.Fatalf("the v1 call before the change: %+v", r)
	}

	// The switch, right after a probe: the receiver sees v2 only at its
	// next probe, 3 s later.
	probed(t, o.Dir, "demo-tools", 1)
	switchedAt := time.Now()
	if err := s.SwitchServer(); err != nil {
		t.Fatal(err)
	}
	// Claude Code re-lists on list_changed: its proxy records the
	// tools/list.
	var relisted time.Time
	eventually(t, o.Dir, "Claude Code's re-list after the switch", 30*time.Second, func(out *quickstart.Outputs) bool {
		relisted = firstRequestAfter(out, ccAgent, "tools/list", switchedAt)
		return !relisted.IsZero()
	})

	// A call valid under v2 right away, before the receiver's next probe:
	// fresh, whatever the receiver has seen.
	v2Sent := time.Now()
	turn.Reply(toolUse(ccTicket, map[string]any{"title": "Printer on fire", "project": "DEMO"}))
	turn = nextTurn(t, ctx, api)
	v2Result := onlyResult(t, turn.Request)
	offered := ticketVersion(t, turn.Request)

	// A call planned against v1 (the listing of turn 1), after the re-list.
	v1Sent := time.Now()
	turn.Reply(toolUse(ccTicket, map[string]any{"title": "Toner low"}))
	turn = nextTurn(t, ctx, api)
	v1Result := onlyResult(t, turn.Request)
	// The model does what the envelope says: plans the call again, with
	// project, once the receiver has dated the change (so that the retry
	// is after it, however the probes fall). The session recovers.
	eventually(t, o.Dir, "the drift event", 30*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.Events(semconv.EventDrift)) == 1
	})
	retrySent := time.Now()
	turn.Reply(toolUse(ccTicket, map[string]any{"title": "Toner low", "project": "DEMO"}))
	turn = nextTurn(t, ctx, api)
	if r := onlyResult(t, turn.Request); r.IsError {
		t.Errorf("the re-planned v2 call failed: %q", r.Text)
	}
	turn.Reply(messagesapi.Reply{Text: "Filed."})
	host.wait(t, "demo-tools")
	t.Logf("Claude Code re-listed %s after the switch; after it, the model was still offered create_ticket %s",
		relisted.Sub(switchedAt).Round(time.Millisecond), offered)
	run := staleRun{
		agent: ccAgent, calls: 4,
		switchedAt: switchedAt, v2Sent: v2Sent, v1Sent: v1Sent, retrySent: retrySent,
		v2Failed: v2Result.IsError, v2Answer: v2Result.Text,
		v1Refused: v1Result.IsError && strings.Contains(v1Result.Text, semconv.RefusalStaleToolSchema), v1Answer: v1Result.Text,
	}
	checkStaleJudgements(t, s, o.Dir, run)
	checkRecovery(t, s, o.Dir, run)
}

// checkRecovery asserts how the impact dates the change and where it puts
// the agent's session after its re-planned call: the drift's log record is
// dated by the receiver's first probe that saw v2 (its first session after
// the switch, as the server logged it), not when the next probe confirmed
// it (confirm_after 2) and it was emitted; the session is recovered (its
// latest call, the retry sent after that date, was made with the current
// definition), not still stale, and its time to recover runs from that
// date to no later than the retry.
func checkRecovery(t *testing.T, s *quickstart.Stack, dir string, run staleRun) {
	t.Helper()
	probes := probeSessions(serverRequests(t, s.LogFile("server")), run.switchedAt)
	out := eventually(t, dir, "the drift event", 30*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.Events(semconv.EventDrift)) == 1
	})
	d := out.Events(semconv.EventDrift)[0].Record
	occurred, emitted := d.Timestamp().AsTime(), d.ObservedTimestamp().AsTime()
	rel := func(at time.Time) time.Duration { return at.Sub(run.switchedAt).Round(time.Millisecond) }
	var b strings.Builder
	for _, p := range probes {
		fmt.Fprintf(&b, " [%s, %s]", rel(p[0]), rel(p[1]))
	}
	t.Logf("drift dated %s after the switch, emitted %s after; the receiver's probes after the switch:%s", rel(occurred), rel(emitted), b.String())
	switch {
	case len(probes) < 2:
		t.Errorf("the server logged %d probes after the switch, want the one that saw v2 and the one that confirmed it", len(probes))
	case occurred.Before(probes[0][0]) || occurred.After(probes[0][1].Add(time.Second)):
		t.Errorf("the drift is dated %s after the switch, want within the first probe that saw v2 [%s, %s]", rel(occurred), rel(probes[0][0]), rel(probes[0][1]))
	case !emitted.After(probes[1][0]):
		t.Errorf("the drift was emitted %s after the switch, before the probe that confirmed it (%s)", rel(emitted), rel(probes[1][0]))
	}

	var im apiwire.Impact
	cliJSON(t, s, 0, &im, "impact", "demo-tools", "--tool", "create_ticket", "--hours", "1")
	row := agentImpact(im, run.agent)
	if row == nil || row.Recovery == nil {
		t.Fatalf("the API's create_ticket impact has no recovery for %s: %+v", run.agent, row)
	}
	r := row.Recovery
	js, _ := json.Marshal(r)
	t.Logf("%s's recovery: %s", run.agent, js)
	if r.Recovered != 1 || r.StillStale != 0 || r.Failed != 0 || r.Idle != 0 {
		t.Errorf("%s's one session after its re-planned v2 call: %s, want recovered", run.agent, js)
	}
	// From the drift's date to the session's first call with v2's digest:
	// the retry at the latest. mcpimpact counts a session that called with
	// v2's digest before the receiver saw v2 (the call right after the
	// switch) as on it at the change: 0 s.
	took := run.retrySent.Sub(occurred).Seconds()
	if m := r.MedianSecondsToRecover; m == nil || *m < 0 || *m > math.Ceil(took)+1 {
		t.Errorf("%s's time to recover: %s, want at most the %.1f s from the drift's date to the retry", run.agent, js, took)
	}
	if tot := im.Totals.Recovery; tot == nil || tot.Recovered != r.Recovered {
		t.Errorf("the totals' recovery %+v does not add up %s's", tot, run.agent)
	}
}

// staleRun is what an agent did around the server's switch: a v2 call sent
// at v2Sent, right after it re-listed, and a v1-planned call at v1Sent.
type staleRun struct {
	agent                      string
	calls                      int // the tools/call spans its proxy or interceptor records
	switchedAt, v2Sent, v1Sent time.Time
	retrySent                  time.Time // the call re-planned after the envelope; zero when none
	v2Failed                   bool
	v2Answer                   string
	v1Refused                  bool // answered with the STALE_TOOL_SCHEMA envelope
	v1Answer                   string
}

// checkStaleJudgements asserts issue 23's judgements of run, from the
// server's log, the spans, the impact records, the API and the dashboard:
//  1. the v1-planned call got the envelope and never reached the server;
//  2. the v2 call, before the receiver's next probe, is not flagged stale,
//     and is current once the receiver has seen v2;
//  3. the refused call's span says stale, and the impact names the agent
//     at risk high;
//  4. the API's and the dashboard's stale number is the stale spans' count.
func checkStaleJudgements(t *testing.T, s *quickstart.Stack, dir string, run staleRun) {
	t.Helper()
	t.Logf("%s: v2 call sent %s after the switch, answered %q (error %v); v1-planned call sent %s after, answered %q",
		run.agent, run.v2Sent.Sub(run.switchedAt).Round(time.Millisecond), run.v2Answer, run.v2Failed,
		run.v1Sent.Sub(run.switchedAt).Round(time.Millisecond), run.v1Answer)
	requests := serverRequests(t, s.LogFile("server"))
	logServerTimeline(t, requests, run.switchedAt)
	out := eventually(t, dir, "every call's span", 60*time.Second, func(out *quickstart.Outputs) bool {
		return len(agentCalls(out, run.agent)) >= run.calls
	})
	spans := agentCalls(out, run.agent)
	logCalls(t, spans, run.switchedAt)

	// 1.
	if !run.v1Refused {
		t.Errorf("bullet 1: the v1-planned call after the re-list was answered %q, want the %s envelope", run.v1Answer, semconv.RefusalStaleToolSchema)
	}
	if arrived := ticketCallsSince(requests, run.v1Sent, false); len(arrived) > 0 {
		t.Errorf("bullet 1: the server received the v1-planned create_ticket call (no project) at %s: the gate let it through",
			arrived[0].At.Format("15:04:05.000"))
	}

	// 2.
	if run.v2Failed {
		t.Errorf("bullet 2: the v2 call failed: %q", run.v2Answer)
	}
	v2Span, ok := callBetween(spans, "create_ticket", run.v2Sent, run.v1Sent)
	if !ok {
		t.Fatalf("bullet 2: no span of the v2 call among %d", len(spans))
	}
	// The receiver's first listing after the switch (its clientInfo is
	// mcpdrift-probe) came after the v2 call, as the server logged them.
	var probeAt time.Time
	waitUntil(t, context.Background(), "the receiver's first probe after the switch", 30*time.Second, func() (bool, string) {
		requests = serverRequests(t, s.LogFile("server"))
		probeAt = firstListingBy(requests, "mcpdrift-probe", run.switchedAt)
		return !probeAt.IsZero(), "none in the server's log"
	})
	v2At := slices.DeleteFunc(ticketCallsSince(requests, run.switchedAt, true), func(r serverRequest) bool { return !r.At.Before(run.v1Sent) })
	if len(v2At) != 1 || !v2At[0].At.Before(probeAt) {
		t.Errorf("bullet 2 not tested: the v2 call (%+v) did not reach the server before the receiver's first probe after the switch (%s)",
			v2At, probeAt.Format("15:04:05.000"))
	}
	if v2Span.Attr(semconv.ToolStale) == "true" {
		t.Errorf("bullet 2: the v2 call right after the switch is flagged %s=true (digest %.12s, current %.12s)",
			semconv.ToolStale, v2Span.Attr(semconv.ToolDigest), v2Span.Attr(semconv.ToolCurrentDigest))
	}

	// 3.
	if refused, ok := callBetween(spans, "create_ticket", run.v1Sent, run.retrySent); !ok {
		t.Errorf("bullet 3: no span of the v1-planned call")
	} else if refused.Attr(semconv.ToolStale) != "true" {
		t.Errorf("bullet 3: the v1-planned call's span has %s=%q (refusal %q), want true",
			semconv.ToolStale, refused.Attr(semconv.ToolStale), refused.Attr(semconv.GuardRefusal))
	}
	out = eventually(t, dir, "the drift's impact records", 60*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.Events(semconv.EventDrift)) >= 1 && len(out.Events(semconv.EventImpact)) >= 1
	})
	named := false
	for _, e := range out.Events(semconv.EventImpact) {
		if e.Attr(semconv.GenAIToolName) == "create_ticket" && e.Attr(semconv.GenAIAgentName) == run.agent {
			named = true
			if e.Attr(semconv.ImpactRisk) != semconv.ImpactRiskHigh {
				t.Errorf("bullet 3: the create_ticket impact record for %s says risk %q, want high", run.agent, e.Attr(semconv.ImpactRisk))
			}
		}
	}
	if !named {
		t.Errorf("bullet 3: no create_ticket impact record names %s", run.agent)
	}
	var im apiwire.Impact
	cliJSON(t, s, 0, &im, "impact", "demo-tools", "--tool", "create_ticket", "--hours", "1")
	row := agentImpact(im, run.agent)
	if row == nil || row.Risk != semconv.ImpactRiskHigh {
		t.Errorf("bullet 3: the API's create_ticket impact for %s: %+v, want risk high", run.agent, row)
	}

	// 2 (current once probed), 4.
	stale := 0
	for _, sp := range spans {
		if sp.Attr(semconv.GenAIToolName) == "create_ticket" && sp.Attr(semconv.ToolStale) == "true" {
			stale++
		}
	}
	if row != nil {
		if row.Digests.New < 1 {
			t.Errorf("bullet 2: the API counts %d of %s's create_ticket calls as made with the current definition, want the v2 call (digests %+v)", row.Digests.New, run.agent, row.Digests)
		}
		if got := row.Digests.Stale; got != int64(stale) {
			t.Errorf("bullet 4: the API's stale number for %s is %d (digests %+v), the spans mark %d stale", run.agent, got, row.Digests, stale)
		}
	}
	if im.Totals.Stale != int64(stale) { // the agent is the only caller
		t.Errorf("bullet 4: the API's stale total is %d, the spans mark %d stale", im.Totals.Stale, stale)
	}
	if got := dashboardStale(t, s.APIURL(), "create_ticket", run.agent); got != stale {
		t.Errorf("bullet 4: the dashboard's stale number for create_ticket is %d, the spans mark %d stale", got, stale)
	}
}

// startV1Stack starts the quickstart's server (logging every request) and
// collector (the agent is the test's) and waits for the receiver's v1
// baseline; everything stops, and on failure the process logs are shown,
// when the test ends.
func startV1Stack(t *testing.T, ctx context.Context, o quickstart.Options) *quickstart.Stack {
	t.Helper()
	o.Agent, o.LogRequests = "", true
	s, err := quickstart.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		dumpLogsOnFailure(t, o.Dir)
	})
	eventually(t, o.Dir, "the v1 baseline", 60*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.Events(semconv.EventSnapshot)) == 1
	})
	return s
}

// ccAgent is the agent name on the proxy's spans: Claude Code's clientInfo.
const ccAgent = "claude-code"

// dashboardStale reads the red stale number of a changed tool's impact
// panel on the server's Drift tab (0 when the panel shows none), and keeps
// a screenshot named after the agent.
func dashboardStale(t *testing.T, base, tool, agent string) int {
	t.Helper()
	b := dashboardtest.Open(t)
	b.Load(base)
	b.Go("#/servers/demo-tools")
	sel := fmt.Sprintf(`.item-group[data-name=%q] .impact`, tool)
	b.WaitFor(fmt.Sprintf(`(() => { const p = document.querySelector(%q); return p && p.dataset.state !== 'loading'; })()`, sel))
	var text string
	b.Eval(fmt.Sprintf(`document.querySelector(%q)?.textContent ?? ''`, sel+" .impact-totals .stale"), &text)
	b.Screenshot("stale-"+agent+".png", 1200)
	if text == "" {
		return 0
	}
	m := regexp.MustCompile(`^\s*(\d+)`).FindStringSubmatch(text)
	if m == nil {
		t.Errorf("the dashboard's stale number for %s: %q", tool, text)
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// startClaudeCode wraps a project .mcp.json naming the stack's server
// (--on-stale refuse) and starts Claude Code in it with a prompt that files
// tickets.
func startClaudeCode(t *testing.T, ctx context.Context, claude, mcpdrift string, s *quickstart.Stack, dir, apiURL string) *claudeHost {
	t.Helper()
	p := newClaudeProject(t, dir, apiURL)
	mcpJSON := filepath.Join(p.project, ".mcp.json")
	write(t, mcpJSON, fmt.Sprintf(`{
  "mcpServers": {
    "demo-tools": {"type": "http", "url": %q}
  }
}
`, s.ServerURL()))
	wrapForCollector(t, mcpdrift, s, mcpJSON, "--on-stale", "refuse")
	return p.start(t, ctx, claude, "File a ticket about the printer, then one about the toner.", "mcp__demo-tools")
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// withoutEnv drops the variables with these prefixes (the developer's own
// API keys and telemetry settings).
func withoutEnv(env []string, prefixes ...string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(kv, p) })
	})
}

func nextTurn(t testing.TB, ctx context.Context, api *messagesapi.Server) *messagesapi.Turn {
	t.Helper()
	turn, err := api.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return turn
}

func toolUse(name string, input map[string]any) messagesapi.Reply {
	return messagesapi.Reply{ToolUses: []messagesapi.ToolUse{{Name: name, Input: input}}}
}

// onlyResult is the one tool result a turn carries.
func onlyResult(t *testing.T, r *messagesapi.Request) messagesapi.ToolResult {
	t.Helper()
	rs := r.ToolResults()
	if len(rs) != 1 {
		t.Fatalf("the turn carries %d tool results, want 1: %+v", len(rs), rs)
	}
	return rs[0]
}

// ticketVersion says which create_ticket the host offered the model: v2
// requires project.
func ticketVersion(t *testing.T, r *messagesapi.Request) string {
	t.Helper()
	tool, ok := r.Tool(ccTicket)
	if !ok {
		t.Fatalf("Claude Code does not offer %s (offered: %d tools)", ccTicket, len(r.Tools))
	}
	var schema struct{ Required []string }
	if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
		t.Fatalf("%s input_schema: %v", ccTicket, err)
	}
	if slices.Contains(schema.Required, "project") {
		return "v2"
	}
	return "v1"
}

// serverRequest is a request line of the quickstart server's log.
type serverRequest struct {
	At                   time.Time
	Method, Client, Tool string
	Session, Arguments   string
	Switch               bool // the "switched to contract v2" line
}

var logAttr = regexp.MustCompile(`(\w+)=("(?:[^"\\]|\\.)*"|\S*)`)

// serverRequests reads the requests (and the switch) from the server's log.
func serverRequests(t *testing.T, path string) []serverRequest {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []serverRequest
	for _, line := range strings.Split(string(raw), "\n") {
		attrs := map[string]string{}
		for _, m := range logAttr.FindAllStringSubmatch(line, -1) {
			v := m[2]
			if uq, err := strconv.Unquote(v); err == nil {
				v = uq
			}
			attrs[m[1]] = v
		}
		at, err := time.Parse(time.RFC3339Nano, attrs["time"])
		if err != nil {
			continue
		}
		r := serverRequest{At: at, Method: attrs["method"], Client: attrs["client"], Tool: attrs["tool"], Session: attrs["session"], Arguments: attrs["arguments"]}
		r.Switch = strings.HasPrefix(attrs["msg"], "switched to contract v2")
		if attrs["msg"] == "request" || r.Switch {
			out = append(out, r)
		}
	}
	return out
}

// ticketCallsSince returns the create_ticket calls the server received
// since, with or without project.
func ticketCallsSince(rs []serverRequest, since time.Time, withProject bool) []serverRequest {
	var out []serverRequest
	for _, r := range rs {
		if r.Method == "tools/call" && r.Tool == "create_ticket" && !r.At.Before(since) && strings.Contains(r.Arguments, "project") == withProject {
			out = append(out, r)
		}
	}
	return out
}

// logServerTimeline logs what the server received from a second before the
// switch: who listed when (Claude Code's re-list, the receiver's probes)
// and which calls arrived.
func logServerTimeline(t *testing.T, rs []serverRequest, switchedAt time.Time) {
	t.Helper()
	var b strings.Builder
	for _, r := range rs {
		if r.At.Before(switchedAt.Add(-time.Second)) {
			continue
		}
		at := r.At.Sub(switchedAt).Round(time.Millisecond)
		if r.Switch {
			fmt.Fprintf(&b, "  %+8s switched to v2\n", at)
			continue
		}
		fmt.Fprintf(&b, "  %+8s %-26s client=%-16q session=%.8s %s %s\n", at, r.Method, r.Client, r.Session, r.Tool, r.Arguments)
	}
	t.Logf("the server's requests, relative to the switch:\n%s", b.String())
}

// firstRequestAfter is the start of the first span of a request with this
// method that agent sent after since (zero when none yet).
func firstRequestAfter(out *quickstart.Outputs, agent, method string, since time.Time) time.Time {
	var first time.Time
	for _, tr := range out.Traces {
		for i := 0; i < tr.ResourceSpans().Len(); i++ {
			ss := tr.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				spans := ss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					sp := quickstart.Span{Span: spans.At(k)}
					at := sp.Span.StartTimestamp().AsTime()
					if sp.Attr(semconv.MCPMethodName) == method && sp.Attr(semconv.GenAIAgentName) == agent && at.After(since) && (first.IsZero() || at.Before(first)) {
						first = at
					}
				}
			}
		}
	}
	return first
}

// agentCalls returns the tools/call spans that name agent.
func agentCalls(out *quickstart.Outputs, agent string) []quickstart.Span {
	return slices.DeleteFunc(out.ToolCalls(), func(sp quickstart.Span) bool {
		return sp.Attr(semconv.GenAIAgentName) != agent
	})
}

// callBetween returns the span of the tool's call started in [from, to)
// (to zero: no end); the calls are sent one turn apart.
func callBetween(spans []quickstart.Span, tool string, from, to time.Time) (quickstart.Span, bool) {
	for _, sp := range spans {
		start := sp.Span.StartTimestamp().AsTime()
		if sp.Attr(semconv.GenAIToolName) == tool && !start.Before(from) && (to.IsZero() || start.Before(to)) {
			return sp, true
		}
	}
	return quickstart.Span{}, false
}

func logCalls(t *testing.T, spans []quickstart.Span, switchedAt time.Time) {
	t.Helper()
	var b strings.Builder
	for _, sp := range spans {
		fmt.Fprintf(&b, "  %+8s %-14s digest=%.8s current=%.8s stale=%-5s refusal=%q error=%q\n",
			sp.Span.StartTimestamp().AsTime().Sub(switchedAt).Round(time.Millisecond), sp.Attr(semconv.GenAIToolName),
			sp.Attr(semconv.ToolDigest), sp.Attr(semconv.ToolCurrentDigest), sp.Attr(semconv.ToolStale),
			sp.Attr(semconv.GuardRefusal), sp.Attr(semconv.ErrorType))
	}
	t.Logf("the tools/call spans, relative to the switch:\n%s", b.String())
}

// firstListingBy is when client first listed tools after since, as the
// server logged it (zero when it has not).
func firstListingBy(rs []serverRequest, client string, since time.Time) time.Time {
	for _, r := range rs {
		if r.Method == "tools/list" && r.Client == client && r.At.After(since) {
			return r.At
		}
	}
	return time.Time{}
}

// probeSessions returns the first and last request of each of the
// receiver's probe sessions (its clientInfo is mcpdrift-probe) that began
// after since, in order.
func probeSessions(rs []serverRequest, since time.Time) [][2]time.Time {
	probe, early := map[string]bool{}, map[string]bool{}
	for _, r := range rs {
		probe[r.Session] = probe[r.Session] || r.Client == "mcpdrift-probe"
		early[r.Session] = early[r.Session] || r.At.Before(since)
	}
	var out [][2]time.Time
	index := map[string]int{}
	for _, r := range rs {
		if !probe[r.Session] || early[r.Session] {
			continue
		}
		i, ok := index[r.Session]
		if !ok {
			i = len(out)
			index[r.Session] = i
			out = append(out, [2]time.Time{r.At, r.At})
		}
		out[i][1] = r.At
	}
	return out
}

func agentImpact(im apiwire.Impact, agent string) *apiwire.AgentImpact {
	for i, a := range im.Agents {
		if a.Agent != nil && *a.Agent == agent {
			return &im.Agents[i]
		}
	}
	return nil
}
