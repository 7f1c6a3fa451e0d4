//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/procs"
	"github.com/mcpdrift/mcpdrift/dev/quickstart"
	"github.com/mcpdrift/mcpdrift/dev/scaleout"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestScaleOut runs docs/scale-out.md: one tier-1 Collector (the extras
// build: load_balancing exporter keyed by mcpdrift.server.name) probing two
// drifting servers, in front of two tier-2 otelcol-mcpdrift instances with
// storage, each exporting to a store of its own; demo agents call both
// servers through tier 1. Each server's drift must be answered by the
// tier-2 instance that owns the server, with an impact that counts every
// call made to it. Then the owner of the second server is killed with
// SIGKILL and restarted on the same storage: that server's drift must
// still count the calls made before the kill (the persisted index), while
// the owner was down (held by tier 1) and after the restart.
func TestScaleOut(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	d := newScaleOut(t, ctx)

	// The ring gives server names to instances by a hash of the tier-2
	// endpoints, whose ports are random: ask a router which instance owns
	// which name, and pick one server for each.
	router := d.startRouter()
	calibrate, stop := context.WithTimeout(ctx, time.Minute)
	owners, err := scaleout.Owners(calibrate, router.Endpoint(), d.tier2, candidateNames)
	stop()
	if err != nil {
		t.Fatal(err)
	}
	router.Stop()
	var servers []*driftingServer
	for _, owner := range d.tier2 {
		i := slices.IndexFunc(candidateNames, func(n string) bool { return owners[n] == owner })
		if i < 0 {
			t.Fatalf("none of %d names hashes to %s", len(candidateNames), owner.Name)
		}
		servers = append(servers, d.startServer(candidateNames[i], owner))
	}
	first, second := servers[0], servers[1]
	d.startTier1(servers)
	for _, s := range servers {
		d.startAgent(s)
	}
	for _, s := range servers {
		waitUntil(t, ctx, "a baseline of "+s.name+" and calls to it at its owner", time.Minute, func() (bool, string) {
			out := s.owner.Store.Outputs()
			snaps := len(eventsOf(out, semconv.EventSnapshot, s.name))
			calls := len(callsOf(out, s.name))
			return snaps >= 1 && calls >= 20, fmt.Sprintf("%d snapshots, %d calls", snaps, calls)
		})
	}

	// The first server drifts; its owner answers with the full impact.
	d.stopAgentsAndSettle(first)
	d.driftAndCheck(first, 2)

	// Kill the second server's owner once it has written its index; call
	// the server while the owner is down (tier 1 holds those spans) and
	// after it has restarted on the same storage; then let it drift.
	d.stopAgentsAndSettle(second)
	d.waitPersisted(second.owner)
	second.owner.Kill()
	killed := time.Now()
	d.startAgent(second)
	log := second.agentLog(len(second.agents))
	waitUntil(t, ctx, "calls to "+second.name+" while its owner is down", time.Minute, func() (bool, string) {
		n, err := quickstart.CallsLogged(log)
		return n >= 10, fmt.Sprint(n, " calls ", err)
	})
	restarting := time.Now()
	if err := second.owner.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, ctx, "calls to "+second.name+" after the restart", time.Minute, func() (bool, string) {
		n, err := quickstart.CallsLogged(log)
		return n >= 40, fmt.Sprint(n, " calls ", err)
	})
	d.stopAgentsAndSettle(second)
	// The calls made while the owner was down reached it after all.
	during := 0
	for _, sp := range callsOf(second.owner.Store.Outputs(), second.name) {
		if sp.Span.StartTimestamp().AsTime().After(killed) && sp.Span.EndTimestamp().AsTime().Before(restarting) {
			during++
		}
	}
	if during == 0 {
		t.Errorf("no call to %s made while %s was down reached it", second.name, second.owner.Name)
	}
	t.Logf("%d calls to %s were made while %s was down", during, second.name, second.owner.Name)
	d.driftAndCheck(second, 4)
}

// candidateNames are server names to choose from: with two instances, the
// chance that all of them hash to one is about 2^-15.
var candidateNames = []string{
	"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
	"iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi",
}

// agentNames call every server; each agent run opens sessionsPerRun
// sessions per name.
var agentNames = []string{"planner", "researcher"}

const sessionsPerRun = 2

// changedTools are the tools the demo server's v2 changes at warning or
// above: the ones its drift's impact counts calls of.
var changedTools = []string{"create_ticket", "get_weather"}

// scaleOut is one run of the two-tier deployment.
type scaleOut struct {
	t                testing.TB
	ctx              context.Context
	dir              string
	tier2            []*scaleout.Tier2
	tier1Bin, agent  string
	server           string
	tier1, routeOnly []string
	tier2Bin         string
	tier2Configs     []string
	tier1Endpoint    string
	processes        []*procs.Proc
}

// driftingServer is a demo server, its tier-2 owner and the agents calling it.
type driftingServer struct {
	name   string
	dir    string // where the logs go
	port   int
	owner  *scaleout.Tier2
	proc   *procs.Proc
	agents []*procs.Proc // runs, the last one current
}

// agentLog is the log of agent run i (from 1).
func (s *driftingServer) agentLog(i int) string {
	return filepath.Join(s.dir, fmt.Sprintf("agent-%s-%d.log", s.name, i))
}

func (s *driftingServer) url() string { return fmt.Sprintf("http://127.0.0.1:%d/mcp", s.port) }

func newScaleOut(t testing.TB, ctx context.Context) *scaleOut {
	root := testservers.RepoRoot()
	docs := filepath.Join(root, "docs", "examples", "scale-out")
	overlays := filepath.Join(root, "e2e", "testdata", "scale-out")
	d := &scaleOut{
		t: t, ctx: ctx, dir: t.TempDir(),
		tier1Bin:  built(t, "_build/otelcol-mcpdrift-extras/otelcol-mcpdrift-extras"),
		server:    built(t, "bin/quickstart-server"),
		agent:     built(t, "bin/demo-agent"),
		tier1:     []string{filepath.Join(docs, "tier1.yaml"), filepath.Join(overlays, "tier1.yaml")},
		routeOnly: []string{filepath.Join(docs, "tier1.yaml"), filepath.Join(overlays, "tier1.yaml"), filepath.Join(overlays, "tier1-route-only.yaml")},
	}
	d.tier2Bin = built(t, "_build/otelcol-mcpdrift/otelcol-mcpdrift")
	d.tier2Configs = []string{filepath.Join(docs, "tier2.yaml"), filepath.Join(overlays, "tier2.yaml")}
	for _, name := range []string{"tier2-a", "tier2-b"} {
		d.tier2 = append(d.tier2, d.startTier2(name))
	}
	// Cleanups run last first: this one, before the tier-2 instances stop.
	t.Cleanup(func() {
		dumpLogsOnFailure(t, d.dir)
		for _, p := range slices.Backward(d.processes) {
			p.Stop(10 * time.Second)
		}
	})
	return d
}

// startTier2 starts a tier-2 instance (stopped at cleanup).
func (d *scaleOut) startTier2(name string) *scaleout.Tier2 {
	t2, err := scaleout.StartTier2(d.ctx, name, d.dir, d.tier2Bin, d.tier2Configs)
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(t2.Close)
	return t2
}

// startRouter starts a tier 1 that probes nothing.
func (d *scaleOut) startRouter() *scaleout.Collector {
	c, err := scaleout.StartTier1(d.ctx, "router", d.dir, d.tier1Bin, d.routeOnly, d.tier2, nil)
	if err != nil {
		d.t.Fatal(err)
	}
	d.processes = append(d.processes, c.Proc())
	return c
}

// startTier1 starts the tier 1 that probes servers.
func (d *scaleOut) startTier1(servers []*driftingServer) *scaleout.Collector {
	var targets []scaleout.Target
	for _, s := range servers {
		targets = append(targets, scaleout.Target{Name: s.name, Endpoint: s.url()})
	}
	c, err := scaleout.StartTier1(d.ctx, "tier1", d.dir, d.tier1Bin, d.tier1, d.tier2, targets)
	if err != nil {
		d.t.Fatal(err)
	}
	d.processes = append(d.processes, c.Proc())
	d.tier1Endpoint = c.Endpoint()
	return c
}

// startServer starts a demo server on contract v1.
func (d *scaleOut) startServer(name string, owner *scaleout.Tier2) *driftingServer {
	ports, err := procs.FreePorts(1)
	if err != nil {
		d.t.Fatal(err)
	}
	s := &driftingServer{name: name, dir: d.dir, port: ports[0], owner: owner}
	s.proc, err = procs.Start("server-"+name, d.server, quickstart.ServerArgs(s.port, "v1", 0), nil, filepath.Join(d.dir, "server-"+name+".log"))
	if err != nil {
		d.t.Fatal(err)
	}
	d.processes = append(d.processes, s.proc)
	if err := s.proc.WaitHTTP(d.ctx, s.url(), time.Minute, func(int) bool { return true }); err != nil {
		d.t.Fatal(err)
	}
	return s
}

// startAgent starts a demo agent run calling s through tier 1.
func (d *scaleOut) startAgent(s *driftingServer) {
	run := len(s.agents) + 1
	args := quickstart.AgentRun{
		ServerURL: s.url(), ServerName: s.name,
		OTLPEndpoint: d.tier1Endpoint, OTLPProtocol: "grpc",
		Agents: agentNames, Sessions: sessionsPerRun, Rate: 5, Verbose: true,
	}.Args()
	p, err := procs.Start(fmt.Sprintf("agent-%s-%d", s.name, run), d.agent, args, nil, s.agentLog(run))
	if err != nil {
		d.t.Fatal(err)
	}
	d.processes = append(d.processes, p)
	s.agents = append(s.agents, p)
}

// stopAgentsAndSettle stops the current agent run of s (it flushes its
// spans) and waits until the stores hold at least the calls every run
// reported and the count has stopped moving.
func (d *scaleOut) stopAgentsAndSettle(s *driftingServer) {
	d.t.Helper()
	current := s.agents[len(s.agents)-1]
	current.Stop(15 * time.Second)
	var reported int64
	for i := range s.agents {
		calls, err := quickstart.AgentCalls(s.agentLog(i + 1))
		if err != nil {
			d.t.Fatal(err)
		}
		for _, n := range calls {
			reported += n
		}
	}
	last, stableSince := -1, time.Now()
	waitUntil(d.t, d.ctx, fmt.Sprintf("the %d calls to %s the agents reported, in the stores", reported, s.name), time.Minute, func() (bool, string) {
		n := 0
		for _, t2 := range d.tier2 {
			n += len(callsOf(t2.Store.Outputs(), s.name))
		}
		if n != last {
			last, stableSince = n, time.Now()
		}
		return int64(n) >= reported && time.Since(stableSince) >= time.Second, fmt.Sprintf("%d calls stored", n)
	})
}

// waitPersisted waits until t2 has written its index to storage twice
// since now: the second write began after the first ended, so it holds
// every call indexed before now.
func (d *scaleOut) waitPersisted(t2 *scaleout.Tier2) {
	d.t.Helper()
	since := time.Now()
	writes, last := 0, since
	waitUntil(d.t, d.ctx, t2.Name+" writing its index twice", time.Minute, func() (bool, string) {
		file, err := t2.StorageFile()
		if err != nil {
			return false, err.Error()
		}
		info, err := os.Stat(file)
		if err != nil {
			return false, err.Error()
		}
		if info.ModTime().After(last) {
			writes, last = writes+1, info.ModTime()
		}
		return writes >= 2, fmt.Sprintf("%d writes since %s", writes, since.Format(time.StampMilli))
	})
}

// driftAndCheck switches s to contract v2 and checks its drift and impact:
// produced by its owner only, counting every call to a changed tool, by
// agent, with sessionsPerAgent sessions each.
func (d *scaleOut) driftAndCheck(s *driftingServer, sessionsPerAgent int64) {
	t := d.t
	t.Helper()
	if err := s.proc.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	want := len(changedTools) * len(agentNames)
	waitUntil(t, d.ctx, "the drift of "+s.name+" and its impact records", time.Minute, func() (bool, string) {
		out := s.owner.Store.Outputs()
		drifts, impacts := eventsOf(out, semconv.EventDrift, s.name), eventsOf(out, semconv.EventImpact, s.name)
		return len(drifts) == 1 && len(impacts) >= want, fmt.Sprintf("%d drifts, %d impact records at %s", len(drifts), len(impacts), s.owner.Name)
	})

	// Everything about s is at its owner, nothing at the other instance.
	for _, t2 := range d.tier2 {
		if t2 == s.owner {
			continue
		}
		out := t2.Store.Outputs()
		for _, name := range []string{semconv.EventSnapshot, semconv.EventDrift, semconv.EventImpact} {
			if n := len(eventsOf(out, name, s.name)); n != 0 {
				t.Errorf("%d %s events of %s at %s, which does not own it", n, name, s.name, t2.Name)
			}
		}
		if n := len(callsOf(out, s.name)); n != 0 {
			t.Errorf("%d calls to %s at %s, which does not own it", n, s.name, t2.Name)
		}
	}

	// The impact counts every call, by (tool, agent).
	out := s.owner.Store.Outputs()
	calls := map[string]int64{}
	for _, sp := range callsOf(out, s.name) {
		calls[sp.Attr(semconv.GenAIToolName)+" "+sp.Attr(semconv.GenAIAgentName)]++
	}
	drift := eventsOf(out, semconv.EventDrift, s.name)[0]
	var total int64
	seen := map[string]bool{}
	for _, e := range eventsOf(out, semconv.EventImpact, s.name) {
		if e.Attr(semconv.DriftID) != drift.Attr(semconv.DriftID) {
			t.Errorf("impact record for drift %s, want %s", e.Attr(semconv.DriftID), drift.Attr(semconv.DriftID))
		}
		key := e.Attr(semconv.GenAIToolName) + " " + e.Attr(semconv.GenAIAgentName)
		seen[key] = true
		total += calls[key]
		if got := e.Int(semconv.ImpactCalls); got != calls[key] || calls[key] == 0 {
			t.Errorf("%s: impact of %s counts %d calls, %s stored %d", s.name, key, got, s.owner.Name, calls[key])
		}
		if got := e.Int(semconv.ImpactSessions); got != sessionsPerAgent {
			t.Errorf("%s: impact of %s counts %d sessions, want %d", s.name, key, got, sessionsPerAgent)
		}
	}
	for _, tool := range changedTools {
		for _, agent := range agentNames {
			if !seen[tool+" "+agent] {
				t.Errorf("%s: no impact record for %s called by %s", s.name, tool, agent)
			}
		}
	}
	if got := drift.Int(semconv.ImpactCalls); got != total {
		t.Errorf("%s: drift record counts %d calls, the stores hold %d calls of the changed tools", s.name, got, total)
	}
	t.Logf("%s (owned by %s): drift impact %d calls, %d sessions, %d agents", s.name, s.owner.Name,
		drift.Int(semconv.ImpactCalls), drift.Int(semconv.ImpactSessions), drift.Int(semconv.ImpactAgents))
}

// eventsOf returns the events named name about server.
func eventsOf(out *quickstart.Outputs, name, server string) []quickstart.Event {
	var of []quickstart.Event
	for _, e := range out.Events(name) {
		if e.Attr(semconv.ServerName) == server {
			of = append(of, e)
		}
	}
	return of
}

// callsOf returns the tool-call spans to server.
func callsOf(out *quickstart.Outputs, server string) []quickstart.Span {
	var of []quickstart.Span
	for _, sp := range out.ToolCalls() {
		if sp.ServerName() == server {
			of = append(of, sp)
		}
	}
	return of
}
