package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/interceptor/gosdk"
)

// run starts every session and waits for them to finish (the duration
// elapsed or ctx ended).
func run(ctx context.Context, cfg config, tel telemetry, logger *slog.Logger) (*stats, error) {
	if cfg.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.duration)
		defer cancel()
	}
	opts := tel.options()
	if cfg.serverName != "" {
		opts = append(opts, interceptor.WithServerName(cfg.serverName))
	}
	opts = append(opts, interceptor.WithStaleRefusal(cfg.refuseStale), interceptor.WithStaleWindow(cfg.staleWindow))
	inst := gosdk.New(opts...)
	st := &stats{byAgent: map[string]*agentStats{}}
	var wg sync.WaitGroup
	errs := make(chan error, len(cfg.agents)*cfg.sessions)
	for _, name := range cfg.agents {
		for i := range cfg.sessions {
			s := &session{cfg: cfg, inst: inst, logger: logger, stats: st.agent(name),
				agent: interceptor.Agent{Name: name, ID: fmt.Sprintf("%s-%d", name, i+1)}, conversation: newID()}
			wg.Go(func() {
				if err := s.run(ctx); err != nil {
					errs <- fmt.Errorf("%s session %s: %w", s.agent.ID, s.conversation, err)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return st, errors.Join(all...)
}

// session is one conversation of one agent: its own MCP connection, its
// own plan.
type session struct {
	cfg          config
	inst         *gosdk.Instrumentation
	logger       *slog.Logger
	stats        *agentStats
	agent        interceptor.Agent
	conversation string

	changed atomic.Bool // the server announced a new tool listing
}

func (s *session) run(ctx context.Context) error {
	ctx = interceptor.ContextWithAgent(ctx, s.agent)
	ctx = interceptor.ContextWithConversationID(ctx, s.conversation)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpdrift-demo-agent", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { s.changed.Store(true) },
	})
	s.inst.Instrument(client)
	cs, err := client.Connect(ctx, s.inst.Transport(s.transport()), &mcp.ClientSessionOptions{ProtocolVersion: s.cfg.protocolVersion})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("connecting: %w", err)
	}
	defer cs.Close()
	plan, err := s.plan(ctx, cs)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	s.logger.Info("session started", "agent", s.agent.Name, "agent_id", s.agent.ID, "conversation", s.conversation, "tools", len(plan))
	tick := time.NewTicker(time.Duration(float64(time.Second) / s.cfg.rate))
	defer tick.Stop()
	staleCalls := 0
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if s.changed.Load() {
			// The listing changed; this agent acts on its old plan for a
			// while, as agents that cached a contract do, then re-plans.
			if s.cfg.replanAfter >= 0 && staleCalls >= s.cfg.replanAfter {
				s.changed.Store(false)
				staleCalls = 0
				if plan, err = s.plan(ctx, cs); err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return err
				}
				s.logger.Info("re-planned after a listing change", "agent_id", s.agent.ID, "tools", len(plan))
			} else {
				if staleCalls == 0 && s.cfg.relist {
					// The host's listing is fresh; the plan is not.
					if _, err := cs.ListTools(ctx, nil); err != nil && ctx.Err() == nil {
						return fmt.Errorf("listing tools: %w", err)
					}
				}
				staleCalls++
			}
		}
		if len(plan) == 0 {
			continue
		}
		step := plan[i%len(plan)]
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: step.tool, Arguments: step.args})
		if ctx.Err() != nil {
			return nil
		}
		s.stats.record(err != nil || res.IsError)
		s.logger.Debug("called", "agent_id", s.agent.ID, "tool", step.tool, "error", err, "tool_error", err == nil && res.IsError)
	}
}

func (s *session) transport() mcp.Transport {
	switch s.cfg.transport {
	case "sse":
		return &mcp.SSEClientTransport{Endpoint: s.cfg.serverURL}
	case "stdio":
		return &mcp.CommandTransport{Command: exec.Command(s.cfg.command[0], s.cfg.command[1:]...), TerminateDuration: time.Second}
	}
	return &mcp.StreamableClientTransport{Endpoint: s.cfg.serverURL}
}

// step is one planned tool call.
type step struct {
	tool string
	args map[string]any
}

// plan lists the tools and plans one call of each (those -tools allows),
// with arguments made up from each tool's input schema.
func (s *session) plan(ctx context.Context, cs *mcp.ClientSession) ([]step, error) {
	var plan []step
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		if len(s.cfg.tools) > 0 && !slices.Contains(s.cfg.tools, tool.Name) {
			continue
		}
		plan = append(plan, step{tool: tool.Name, args: argumentsFor(tool.InputSchema)})
	}
	sort.Slice(plan, func(i, j int) bool { return plan[i].tool < plan[j].tool })
	return plan, nil
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// stats counts calls per agent name.
type stats struct {
	mu      sync.Mutex
	byAgent map[string]*agentStats
}

type agentStats struct{ calls, errors atomic.Int64 }

func (st *stats) agent(name string) *agentStats {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.byAgent[name] == nil {
		st.byAgent[name] = &agentStats{}
	}
	return st.byAgent[name]
}

func (a *agentStats) record(failed bool) {
	a.calls.Add(1)
	if failed {
		a.errors.Add(1)
	}
}

func (st *stats) String() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	names := make([]string, 0, len(st.byAgent))
	for n := range st.byAgent {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		a := st.byAgent[n]
		fmt.Fprintf(&b, "agent %s: %d calls, %d failed\n", n, a.calls.Load(), a.errors.Load())
	}
	return b.String()
}
