package quickstart

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// AgentCalls reads the demo agent's exit report, among its other log lines;
// CallsLogged counts its -v lines.
func TestAgentLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "agent.log")
	text := `time=2026-12-01T16:00:00Z level=INFO msg="session started" agent=planner
time=2026-12-01T16:00:01Z level=DEBUG msg=called agent_id=planner-1 tool=get_weather error=<nil> tool_error=false
time=2026-12-01T16:00:01Z level=DEBUG msg=called agent_id=researcher-1 tool=search_docs error=<nil> tool_error=false
agent planner: 41 calls, 0 failed
agent researcher: 39 calls, 2 failed
`
	if err := os.WriteFile(log, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	calls, err := AgentCalls(log)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"planner": 41, "researcher": 39}; !reflect.DeepEqual(calls, want) {
		t.Errorf("AgentCalls = %v, want %v", calls, want)
	}
	if n, err := CallsLogged(log); n != 2 || err != nil {
		t.Errorf("CallsLogged = %d, %v; want 2", n, err)
	}

	if err := os.WriteFile(log, []byte("still running\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := AgentCalls(log); err == nil {
		t.Error("AgentCalls of a log without a report: no error")
	}
}

func TestAgentRunArgs(t *testing.T) {
	got := AgentRun{ServerURL: "http://s/mcp", ServerName: "s", OTLPEndpoint: "127.0.0.1:4317", OTLPProtocol: "grpc",
		Agents: []string{"a", "b"}, Sessions: 2, Rate: 2.5, ReplanAfter: -1, Verbose: true}.Args()
	want := []string{"-server", "http://s/mcp", "-server-name", "s", "-otlp-endpoint", "127.0.0.1:4317", "-duration", "0",
		"-otlp-protocol", "grpc", "-agents", "a,b", "-sessions", "2", "-rate", "2.5", "-replan-after", "-1", "-v"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Args = %q\nwant   %q", got, want)
	}
}
