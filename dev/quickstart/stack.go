// Package quickstart runs the quickstart stack — the drifting demo server,
// the otelcol-mcpdrift collector and the demo agent — as child processes,
// reads what the collector's file exporters wrote, and summarises it. `make
// demo` (examples/quickstart/demo) and the end-to-end tests (e2e/) both use it.
package quickstart

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/procs"
)

// Options describe one run of the stack.
type Options struct {
	Dir          string // working directory: config outputs, storage, process logs
	Collector    string // otelcol-mcpdrift binary
	Config       string // collector config (examples/quickstart/collector.yaml)
	Server       string // demo server binary; empty: no demo server
	Agent        string // demo agent binary; empty: no agent
	ServerStart  string // v1 (default) or v2
	LogRequests  bool   // the demo server logs every request it receives (server.log)
	SwitchAfter  time.Duration
	Agents       []string // agent names
	Sessions     int      // sessions per agent name
	Rate         float64  // calls per second per session
	ReplanAfter  int      // calls with the old plan after list_changed
	ExtraEnv     []string // added to the collector's environment
	ServerPort   int      // 0: pick a free port (fixed across restarts when set)
	APIPort      int      // the control plane's (dashboard's); 0: pick a free port
	StartTimeout time.Duration
}

// Demo is the agents' part of `make demo`'s options, which the docs tests
// run too (README.md shows the summary of their run): two agents calling from
// three sessions each, twice a second, whose sessions keep their old plan for
// 10 s after the server announces its change, past the drift's confirmation:
// those calls are the stale ones.
func Demo() Options {
	return Options{Agents: []string{"planner", "researcher"}, Sessions: 3, Rate: 2, ReplanAfter: 20}
}

// Stack is a running quickstart.
type Stack struct {
	opts  Options
	Ports Ports
	procs []*procs.Proc
}

// Ports are the loopback ports the stack uses.
type Ports struct {
	Server, OTLPHTTP, Health, Prometheus, Telemetry, API int
}

// APIURL is the collector's control plane (mcpdrift_api): the dashboard at
// /, the API under /api/v1/.
func (s *Stack) APIURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d", s.Ports.API)
}

// ServerURL is the demo server's MCP endpoint.
func (s *Stack) ServerURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", s.Ports.Server)
}

// Start starts the server, then the collector (waiting for its health
// check), then the agent. On error everything started is stopped.
func Start(ctx context.Context, o Options) (*Stack, error) {
	if o.StartTimeout == 0 {
		o.StartTimeout = 30 * time.Second
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	ports, err := procs.FreePorts(6)
	if err != nil {
		return nil, err
	}
	s := &Stack{opts: o, Ports: Ports{Server: ports[0], OTLPHTTP: ports[1], Health: ports[2], Prometheus: ports[3], Telemetry: ports[4], API: ports[5]}}
	if o.ServerPort != 0 {
		s.Ports.Server = o.ServerPort
	}
	if o.APIPort != 0 {
		s.Ports.API = o.APIPort
	}
	ok := false
	defer func() {
		if !ok {
			s.Stop()
		}
	}()

	if o.Server != "" {
		if err := s.startServer(ctx); err != nil {
			return nil, err
		}
	}

	env := append([]string{
		"DEMO_DIR=" + o.Dir,
		"DEMO_SERVER_PORT=" + strconv.Itoa(s.Ports.Server),
		"DEMO_OTLP_HTTP_PORT=" + strconv.Itoa(s.Ports.OTLPHTTP),
		"DEMO_HEALTH_PORT=" + strconv.Itoa(s.Ports.Health),
		"DEMO_PROMETHEUS_PORT=" + strconv.Itoa(s.Ports.Prometheus),
		"DEMO_TELEMETRY_PORT=" + strconv.Itoa(s.Ports.Telemetry),
		"DEMO_API_PORT=" + strconv.Itoa(s.Ports.API),
	}, o.ExtraEnv...)
	collector, err := s.spawn("collector", o.Collector, []string{"--config", o.Config}, env)
	if err != nil {
		return nil, err
	}
	health := fmt.Sprintf("http://127.0.0.1:%d/", s.Ports.Health)
	if err := collector.WaitHTTP(ctx, health, o.StartTimeout, procs.StatusOK); err != nil {
		return nil, fmt.Errorf("collector did not become healthy (see %s): %w", filepath.Join(o.Dir, "collector.log"), err)
	}

	if o.Agent != "" {
		args := AgentRun{
			ServerURL: s.ServerURL(), ServerName: "demo-tools",
			OTLPEndpoint: fmt.Sprintf("http://127.0.0.1:%d", s.Ports.OTLPHTTP),
			Agents:       o.Agents, Sessions: o.Sessions, Rate: o.Rate, ReplanAfter: o.ReplanAfter,
		}.Args()
		if _, err := s.spawn("agent", o.Agent, args, nil); err != nil {
			return nil, err
		}
	}
	ok = true
	return s, nil
}

func (s *Stack) startServer(ctx context.Context) error {
	args := ServerArgs(s.Ports.Server, s.opts.ServerStart, s.opts.SwitchAfter)
	if s.opts.LogRequests {
		args = append(args, "-log-requests")
	}
	server, err := s.spawn("server", s.opts.Server, args, nil)
	if err != nil {
		return err
	}
	if err := server.WaitHTTP(ctx, s.ServerURL(), s.opts.StartTimeout, func(int) bool { return true }); err != nil {
		return fmt.Errorf("demo server: %w", err)
	}
	return nil
}

// ServerArgs is the demo server's command line: serve on a loopback port,
// start on contract start (v1 when empty), switch to v2 after switchAfter
// (0: only on SIGUSR1).
func ServerArgs(port int, start string, switchAfter time.Duration) []string {
	if start == "" {
		start = "v1"
	}
	args := []string{"-listen", fmt.Sprintf("127.0.0.1:%d", port), "-start", start}
	if switchAfter > 0 {
		args = append(args, "-switch-after", switchAfter.String())
	}
	return args
}

// AgentRun is one run of the demo agent: it calls one server, until stopped.
type AgentRun struct {
	ServerURL    string
	ServerName   string // mcpdrift.server.name on its spans
	OTLPEndpoint string // http://host:port, or host:port with OTLPProtocol grpc
	OTLPProtocol string // http (default) or grpc
	Agents       []string
	Sessions     int     // per agent name; 0: the agent's default
	Rate         float64 // calls per second per session; 0: the agent's default
	ReplanAfter  int     // 0: the agent's default
	Verbose      bool    // log every call (see CallsLogged)
}

// Args is the demo agent's command line for the run.
func (a AgentRun) Args() []string {
	args := []string{"-server", a.ServerURL, "-server-name", a.ServerName, "-otlp-endpoint", a.OTLPEndpoint, "-duration", "0"}
	if a.OTLPProtocol != "" {
		args = append(args, "-otlp-protocol", a.OTLPProtocol)
	}
	if len(a.Agents) > 0 {
		args = append(args, "-agents", strings.Join(a.Agents, ","))
	}
	if a.Sessions > 0 {
		args = append(args, "-sessions", strconv.Itoa(a.Sessions))
	}
	if a.Rate > 0 {
		args = append(args, "-rate", strconv.FormatFloat(a.Rate, 'f', -1, 64))
	}
	if a.ReplanAfter != 0 {
		args = append(args, "-replan-after", strconv.Itoa(a.ReplanAfter))
	}
	if a.Verbose {
		args = append(args, "-v")
	}
	return args
}

// agentReport is the line the demo agent prints per agent name on exiting.
var agentReport = regexp.MustCompile(`(?m)^agent (\S+): (\d+) calls, \d+ failed$`)

// AgentCalls reads, from the log of a demo agent that has exited, the calls
// it reported per agent name.
func AgentCalls(logPath string) (map[string]int64, error) {
	raw, err := os.ReadFile(logPath)
	if err != nil {
		return nil, err
	}
	calls := map[string]int64{}
	for _, m := range agentReport.FindAllSubmatch(raw, -1) {
		n, err := strconv.ParseInt(string(m[2]), 10, 64)
		if err != nil {
			return nil, err
		}
		calls[string(m[1])] = n
	}
	if len(calls) == 0 {
		return nil, fmt.Errorf("%s: the agent reported no calls (did it exit?)", logPath)
	}
	return calls, nil
}

// CallsLogged counts the calls a demo agent run with Verbose has logged so
// far (it may still be running).
func CallsLogged(logPath string) (int, error) {
	raw, err := os.ReadFile(logPath)
	return bytes.Count(raw, []byte(" msg=called ")), err
}

// SwitchServer sends SIGUSR1 to the demo server: switch to v2 now.
func (s *Stack) SwitchServer() error {
	for _, p := range s.procs {
		if p.Name == "server" {
			return p.Signal(syscall.SIGUSR1)
		}
	}
	return errors.New("no server")
}

// StopAgent stops the agent (flushing its telemetry) and waits for it.
func (s *Stack) StopAgent() { s.stop("agent") }

// Stop stops every process, agent first and server last, each with SIGTERM
// and, after a grace period, SIGKILL; it waits for all of them.
func (s *Stack) Stop() {
	for _, name := range []string{"agent", "collector", "server"} {
		s.stop(name)
	}
}

func (s *Stack) stop(name string) {
	for _, p := range s.procs {
		if p.Name == name {
			p.Stop(10 * time.Second)
		}
	}
}

// LogFile returns the path of a process's combined output.
func (s *Stack) LogFile(name string) string { return filepath.Join(s.opts.Dir, name+".log") }

func (s *Stack) spawn(name, bin string, args, env []string) (*procs.Proc, error) {
	p, err := procs.Start(name, bin, args, env, s.LogFile(name))
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, p)
	return p, nil
}
