// Package quickstart runs the quickstart stack — the drifting demo server,
// the otelcol-mcpdrift collector and the demo agent — as child processes,
// reads what the collector's file exporters wrote, and summarises it. `make
// demo` (examples/quickstart/demo) and the end-to-end tests (e2e/) both use it.
package quickstart

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/procs"
)

// Options describe one run of the stack.
type Options struct {
	Dir          string // working directory: config outputs, storage, process logs
	Collector    string // otelcol-mcpdrift binary
	Config       string // collector config (examples/quickstart/collector.yaml)
	Server       string // demo server binary; empty: no demo server
	Agent        string // demo agent binary; empty: no agent
	ServerStart  string // v1 (default) or v2
	SwitchAfter  time.Duration
	Agents       []string // agent names
	Sessions     int      // sessions per agent name
	Rate         float64  // calls per second per session
	ReplanAfter  int      // calls with the old plan after list_changed
	ExtraEnv     []string // added to the collector's environment
	ServerPort   int      // 0: pick a free port (fixed across restarts when set)
	StartTimeout time.Duration
}

// Stack is a running quickstart.
type Stack struct {
	opts  Options
	Ports Ports
	procs []*procs.Proc
}

// Ports are the loopback ports the stack uses.
type Ports struct {
	Server, OTLPHTTP, Health, Prometheus, Telemetry int
}

// ServerURL is the demo server's MCP endpoint.
func (s *Stack) ServerURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", s.Ports.Server)
}

// PrometheusURL is the collector's Prometheus exporter endpoint.
func (s *Stack) PrometheusURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/metrics", s.Ports.Prometheus)
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
	ports, err := procs.FreePorts(5)
	if err != nil {
		return nil, err
	}
	s := &Stack{opts: o, Ports: Ports{Server: ports[0], OTLPHTTP: ports[1], Health: ports[2], Prometheus: ports[3], Telemetry: ports[4]}}
	if o.ServerPort != 0 {
		s.Ports.Server = o.ServerPort
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
		args := []string{
			"-server", s.ServerURL(), "-server-name", "demo-tools",
			"-otlp-endpoint", fmt.Sprintf("http://127.0.0.1:%d", s.Ports.OTLPHTTP),
			"-duration", "0",
		}
		if len(o.Agents) > 0 {
			args = append(args, "-agents", strings.Join(o.Agents, ","))
		}
		if o.Sessions > 0 {
			args = append(args, "-sessions", strconv.Itoa(o.Sessions))
		}
		if o.Rate > 0 {
			args = append(args, "-rate", strconv.FormatFloat(o.Rate, 'f', -1, 64))
		}
		if o.ReplanAfter != 0 {
			args = append(args, "-replan-after", strconv.Itoa(o.ReplanAfter))
		}
		if _, err := s.spawn("agent", o.Agent, args, nil); err != nil {
			return nil, err
		}
	}
	ok = true
	return s, nil
}

func (s *Stack) startServer(ctx context.Context) error {
	start := s.opts.ServerStart
	if start == "" {
		start = "v1"
	}
	args := []string{"-listen", fmt.Sprintf("127.0.0.1:%d", s.Ports.Server), "-start", start}
	if s.opts.SwitchAfter > 0 {
		args = append(args, "-switch-after", s.opts.SwitchAfter.String())
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
