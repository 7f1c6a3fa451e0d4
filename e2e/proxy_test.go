//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/quickstart"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestNodeAgentThroughProxy: a Node agent on the TypeScript SDK (no Go, no
// OpenTelemetry of its own) reaches the real npm server-everything through
// `mcpdrift proxy --server-name everything -- <the receiver target's
// command>`, exporting to the distribution, which probes the same server.
// The server is upgraded from 2025.11.25 to 2026.1.26, which renames add to
// get-sum (breaking). The agent's session opened before the upgrade keeps
// its listing and its server process (a stdio server is the session's own
// child: the old release) and calls add again; a session opened after it
// runs the new release and calls get-sum. The impact record for add names
// the agent and its session at risk high; the old session's calls after the
// drift are flagged mcpdrift.tool.stale=true, the new session's are not.
func TestNodeAgentThroughProxy(t *testing.T) {
	t.Parallel()
	o, s, current := startEverything(t, "collector-proxy.yaml", "2025.11.25")
	to := testservers.Everything(t, "2026.1.26")
	mcpdrift := built(t, "bin/mcpdrift")
	defer dumpLogsOnFailure(t, o.Dir)
	eventually(t, o.Dir, "the 2025.11.25 baseline", 60*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.Events(semconv.EventSnapshot)) == 1
	})

	// The receiver's target command, run by the proxy: the spans name the
	// server as the receiver does (name and stdio: URL).
	server := []string{"sh", "-c", `exec node "$(cat "$E2E_CURRENT")" stdio`}
	agentEnv := []string{"E2E_CURRENT=" + current, fmt.Sprintf("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:%d", s.Ports.OTLPHTTP), "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"}
	old := startNodeAgent(t, agentEnv, append([]string{mcpdrift, "proxy", "--server-name", "everything", "--"}, server...))
	old.do(t, `{"op":"call","tool":"add","arguments":{"a":1,"b":2}}`)
	if ev := old.next(t, "call"); ev.Result == nil || ev.Result.IsError {
		t.Fatalf("add before the upgrade: %+v", ev)
	}

	if err := os.WriteFile(current, []byte(to), 0o644); err != nil {
		t.Fatal(err)
	}
	out := eventually(t, o.Dir, "the upgrade's drift and its impact", 120*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.Events(semconv.EventDrift)) >= 1 && len(out.Events(semconv.EventImpact)) >= 1
	})
	drift := out.Events(semconv.EventDrift)[0]
	driftAt := drift.Record.Timestamp().AsTime()

	// The old session still holds add (its listing and its server are the
	// old release's); a new session gets the new release.
	old.do(t, `{"op":"call","tool":"add","arguments":{"a":3,"b":4}}`)
	if ev := old.next(t, "call"); ev.Result == nil || ev.Result.IsError {
		t.Fatalf("add on the old session after the upgrade: %+v", ev)
	}
	fresh := startNodeAgent(t, agentEnv, append([]string{mcpdrift, "proxy", "--server-name", "everything", "--"}, server...))
	if !slices.Contains(fresh.tools, "get-sum") || slices.Contains(fresh.tools, "add") {
		t.Fatalf("the new session lists %v, want the 2026.1.26 tools", fresh.tools)
	}
	fresh.do(t, `{"op":"call","tool":"get-sum","arguments":{"a":5,"b":6}}`)
	if ev := fresh.next(t, "call"); ev.Result == nil || ev.Result.IsError {
		t.Fatalf("get-sum on the new session: %+v", ev)
	}
	old.close(t)
	fresh.close(t)

	// Every call's span arrived (the proxies flushed on exit).
	out = eventually(t, o.Dir, "the three tool-call spans", 60*time.Second, func(out *quickstart.Outputs) bool {
		return len(out.ToolCalls()) >= 3
	})
	sessions := map[string]string{} // tool and time -> client session
	var staleAfter, staleFresh, beforeStale int
	oldSession := ""
	for _, sp := range out.ToolCalls() {
		tool, start := sp.Attr(semconv.GenAIToolName), sp.Span.StartTimestamp().AsTime()
		if sp.ServerName() != "everything" || sp.Attr(semconv.ServerURL) != drift.Attr(semconv.ServerURL) || sp.Attr(semconv.GenAIAgentName) != "node-agent" {
			t.Errorf("span %s: server %q %q (the receiver's: %q), agent %q", tool, sp.ServerName(), sp.Attr(semconv.ServerURL), drift.Attr(semconv.ServerURL), sp.Attr(semconv.GenAIAgentName))
		}
		stale := sp.Attr(semconv.ToolStale) == "true"
		switch {
		case tool == "add" && start.Before(driftAt):
			oldSession = sp.Attr(semconv.ClientSession)
			if stale {
				beforeStale++
			}
		case tool == "add":
			if stale {
				staleAfter++
			}
		case tool == "get-sum" && stale:
			staleFresh++
		}
		sessions[tool+" "+start.Format(time.RFC3339Nano)] = sp.Attr(semconv.ClientSession)
	}
	if staleAfter != 1 || beforeStale != 0 || staleFresh != 0 {
		t.Errorf("stale flags: %d of the old session's add calls after the drift (want 1), %d before it (want 0), %d new-session calls (want 0); sessions %v", staleAfter, beforeStale, staleFresh, sessions)
	}

	// The impact record for add: the Node agent, its old session, risk high.
	found := false
	for _, e := range out.Events(semconv.EventImpact) {
		if e.Attr(semconv.GenAIToolName) != "add" || e.Attr(semconv.GenAIAgentName) != "node-agent" {
			continue
		}
		found = true
		if e.Attr(semconv.DriftSeverity) != "breaking" || e.Attr(semconv.ImpactRisk) != semconv.ImpactRiskHigh {
			t.Errorf("impact for add: severity %q, risk %q, want breaking and high", e.Attr(semconv.DriftSeverity), e.Attr(semconv.ImpactRisk))
		}
		if ids := e.Attr(semconv.ImpactSessionSample); oldSession == "" || !strings.Contains(ids, oldSession) {
			t.Errorf("impact for add lists sessions %s, want the Node agent's %q", ids, oldSession)
		}
	}
	if !found {
		t.Errorf("no impact record for add by node-agent")
	}
}

// nodeAgent is a live session of the Node agent (testdata/nodeagent), driven
// step by step on its standard input.
type nodeAgent struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Scanner
	tools []string
}

// agentEvent is a line the Node agent prints.
type agentEvent struct {
	Event  string
	Tools  []struct{ Name string }
	Result *struct{ IsError bool }
	Error  *struct{ Message string }
}

// startNodeAgent starts the agent on server (with env added) and waits for
// its listing.
func startNodeAgent(t *testing.T, env, server []string) *nodeAgent {
	t.Helper()
	argv, base := testservers.NodeAgent(t)
	cmd := exec.Command(argv[0], append(append(argv[1:], "--name", "node-agent", "--stdin", "--"), server...)...)
	cmd.Env, cmd.Stderr = append(base, env...), os.Stderr
	in, out := testservers.StartPiped(t, cmd)
	a := &nodeAgent{cmd: cmd, in: in, out: out}
	t.Cleanup(func() { in.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for _, tool := range a.next(t, "tools").Tools {
		a.tools = append(a.tools, tool.Name)
	}
	return a
}

func (a *nodeAgent) do(t *testing.T, command string) {
	t.Helper()
	if _, err := io.WriteString(a.in, command+"\n"); err != nil {
		t.Fatal(err)
	}
}

// next reads the agent's lines up to the next event of this kind.
func (a *nodeAgent) next(t *testing.T, event string) agentEvent {
	t.Helper()
	for a.out.Scan() {
		var ev agentEvent
		if json.Unmarshal(a.out.Bytes(), &ev) == nil && ev.Event == event {
			return ev
		}
	}
	t.Fatalf("the Node agent ended before a %q event: %v", event, a.out.Err())
	return agentEvent{}
}

// close ends the session (the agent closes the proxy's input; the proxy
// flushes its spans and exits) and waits for the agent.
func (a *nodeAgent) close(t *testing.T) {
	t.Helper()
	a.in.Close()
	a.next(t, "closed")
	if err := a.cmd.Wait(); err != nil {
		t.Errorf("the Node agent: %v", err)
	}
}
