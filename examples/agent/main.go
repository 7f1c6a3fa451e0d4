// Command agent is a small MCP agent for demos and the quickstart: no LLM,
// it plans tool calls from the server's listing and makes them at a steady
// rate, under several agent names and sessions, instrumented with the
// mcpdrift interceptor and exporting OTLP to a collector.
//
//	agent -server http://localhost:8080/mcp -otlp-endpoint http://localhost:4318 \
//	      -agents planner,researcher -sessions 2 -rate 1 -duration 5m
//
// When the server announces a changed tool listing, each session goes on
// calling with its old plan for -replan-after calls before it refreshes:
// those calls are the ones drift hurts, and their spans say so
// (mcpdrift.tools.listing_stale, the old mcpdrift.tool.digest). With
// -relist it lists the tools again at once, as hosts do, while its calls
// still follow the old plan; with -refuse-stale the interceptor's guard
// refuses those calls before they reach the server.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(2)
	}
	level := slog.LevelInfo
	if cfg.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tel, err := setupTelemetry(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	stats, runErr := run(ctx, cfg, tel, logger)
	if err := tel.shutdown(context.Background()); err != nil {
		logger.Warn("flushing telemetry", "error", err)
	}
	fmt.Print(stats.String())
	if runErr != nil {
		fmt.Fprintln(os.Stderr, "agent:", runErr)
		os.Exit(1)
	}
}

// config is the agent's command line.
type config struct {
	serverURL       string
	command         []string
	transport       string // streamable, sse, stdio
	serverName      string
	protocolVersion string
	otlpEndpoint    string
	otlpProtocol    string // http, grpc
	serviceName     string
	agents          []string
	sessions        int
	rate            float64
	duration        time.Duration
	replanAfter     int
	relist          bool
	refuseStale     bool
	staleWindow     time.Duration
	tools           []string
	verbose         bool
}

func parseFlags(args []string) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.StringVar(&cfg.serverURL, "server", "", "MCP server URL (Streamable HTTP endpoint, or the SSE endpoint with -transport sse)")
	command := fs.String("command", "", "run a stdio MCP server instead: its command line, words separated by spaces")
	fs.StringVar(&cfg.transport, "transport", "", "streamable, sse or stdio (default: streamable with -server, stdio with -command)")
	fs.StringVar(&cfg.serverName, "server-name", "", "mcpdrift.server.name on every span (default: the server's serverInfo.name)")
	fs.StringVar(&cfg.protocolVersion, "protocol-version", "", "MCP protocol version to ask for (default: the SDK's newest, falling back to 2025-11-25)")
	fs.StringVar(&cfg.otlpEndpoint, "otlp-endpoint", "", `OTLP endpoint URL (http://host:4318, or host:4317 with -otlp-protocol grpc); empty: the OTEL_EXPORTER_OTLP_* environment; "none": export nothing`)
	fs.StringVar(&cfg.otlpProtocol, "otlp-protocol", "http", "OTLP protocol: http or grpc")
	fs.StringVar(&cfg.serviceName, "service-name", "mcpdrift-demo-agent", "service.name of the agent process")
	agents := fs.String("agents", "planner,researcher", "agent names (gen_ai.agent.name), comma-separated")
	fs.IntVar(&cfg.sessions, "sessions", 2, "sessions (MCP connections, conversations) per agent name")
	fs.Float64Var(&cfg.rate, "rate", 1, "tool calls per second per session")
	fs.DurationVar(&cfg.duration, "duration", time.Minute, "how long to run (0: until interrupted)")
	fs.IntVar(&cfg.replanAfter, "replan-after", 3, "calls a session makes with its old plan after the server announces a change, before it refreshes the listing (-1: never)")
	fs.BoolVar(&cfg.relist, "relist", false, "list the tools again as soon as the server announces a change, keeping the old plan for -replan-after calls (what hosts such as Claude Code do)")
	fs.BoolVar(&cfg.refuseStale, "refuse-stale", false, "have the interceptor refuse calls whose arguments fit only a superseded definition (interceptor.WithStaleRefusal)")
	fs.DurationVar(&cfg.staleWindow, "stale-window", 0, "refuse once the first call to a tool within this long after its definition changed (interceptor.WithStaleWindow; 0: off)")
	tools := fs.String("tools", "", "call only these tools, comma-separated (default: every listed tool)")
	fs.BoolVar(&cfg.verbose, "v", false, "log every call")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.command = strings.Fields(*command)
	cfg.agents = splitList(*agents)
	cfg.tools = splitList(*tools)
	switch {
	case cfg.serverURL == "" && len(cfg.command) == 0:
		return cfg, fmt.Errorf("give -server URL or -command")
	case cfg.serverURL != "" && len(cfg.command) > 0:
		return cfg, fmt.Errorf("give -server or -command, not both")
	case cfg.transport == "" && cfg.serverURL != "":
		cfg.transport = "streamable"
	case cfg.transport == "":
		cfg.transport = "stdio"
	}
	switch {
	case cfg.transport != "streamable" && cfg.transport != "sse" && cfg.transport != "stdio":
		return cfg, fmt.Errorf("-transport must be streamable, sse or stdio, not %q", cfg.transport)
	case (cfg.transport == "stdio") != (len(cfg.command) > 0):
		return cfg, fmt.Errorf("-transport %s does not go with %s", cfg.transport, map[bool]string{true: "-command", false: "-server"}[len(cfg.command) > 0])
	case cfg.otlpProtocol != "http" && cfg.otlpProtocol != "grpc":
		return cfg, fmt.Errorf("-otlp-protocol must be http or grpc, not %q", cfg.otlpProtocol)
	case len(cfg.agents) == 0:
		return cfg, fmt.Errorf("-agents needs at least one name")
	case cfg.sessions < 1:
		return cfg, fmt.Errorf("-sessions must be at least 1")
	case cfg.rate <= 0:
		return cfg, fmt.Errorf("-rate must be positive")
	case cfg.duration < 0:
		return cfg, fmt.Errorf("-duration must not be negative")
	case cfg.staleWindow < 0:
		return cfg, fmt.Errorf("-stale-window must not be negative")
	}
	return cfg, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
