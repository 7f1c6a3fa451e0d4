// Command demo runs the quickstart (`make demo`): the drifting demo server,
// the otelcol-mcpdrift collector and the demo agent, and prints the drift
// event and who it hurts as soon as the collector has emitted them; then it
// stops everything.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/quickstart"
)

func main() {
	o := quickstart.Demo()
	flag.StringVar(&o.Collector, "collector", "_build/otelcol-mcpdrift/otelcol-mcpdrift", "otelcol-mcpdrift binary")
	flag.StringVar(&o.Config, "config", "examples/quickstart/collector.yaml", "collector configuration")
	flag.StringVar(&o.Server, "server", "bin/quickstart-server", "demo server binary")
	flag.StringVar(&o.Agent, "agent", "bin/demo-agent", "demo agent binary")
	flag.StringVar(&o.Dir, "dir", "", "working directory (default: a new temporary one, removed afterwards)")
	flag.DurationVar(&o.SwitchAfter, "switch-after", 15*time.Second, "when the server switches from contract v1 to v2")
	timeout := flag.Duration("timeout", 60*time.Second, "give up when nothing was shown by then")
	dashboard := flag.Bool("dashboard", false, "keep the collector and the server running after the summary, with the dashboard on -dashboard-port, until interrupted")
	flag.IntVar(&o.APIPort, "dashboard-port", 13180, "the dashboard's loopback port with -dashboard")
	flag.Parse()
	if !*dashboard {
		o.APIPort = 0 // any free port
	}

	keep := o.Dir != ""
	if !keep {
		dir, err := os.MkdirTemp("", "mcpdrift-demo-")
		if err != nil {
			fail(err)
		}
		o.Dir = dir
		defer os.RemoveAll(dir)
	}
	if err := run(o, *timeout, keep, *dashboard); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		if !keep {
			os.RemoveAll(o.Dir)
		}
		os.Exit(1)
	}
}

func run(o quickstart.Options, timeout time.Duration, keep, dashboard bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	began := time.Now()
	say := func(format string, args ...any) {
		fmt.Printf("[%4.1fs] %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
	}
	s, err := quickstart.Start(ctx, o)
	if err != nil {
		return err
	}
	defer func() {
		s.Stop()
		say("stopped the agent, the collector and the server")
	}()
	say("demo MCP server (contract v1) at %s", s.ServerURL())
	say("collector healthy; mcpdrift probes the server every 3s, mcpimpact indexes the agent's calls")
	say("dashboard and API at %s (mcpdrift status --api %s)", s.APIURL(), s.APIURL())
	say("agents %v calling the server from %d sessions each; the server switches to v2 at %s", o.Agents, o.Sessions, o.SwitchAfter)

	deadline := time.After(timeout - time.Since(began))
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	var driftAt time.Time
	switched := false
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("no drift and impact after %s; see the logs in %s", timeout, o.Dir)
		case <-tick.C:
		}
		if !switched && time.Since(began) > o.SwitchAfter {
			switched = true
			say("the server now serves contract v2: one breaking change, one warning, one new tool")
		}
		out, err := quickstart.ReadOutputs(o.Dir)
		if err != nil {
			return err
		}
		sum := quickstart.Summarize(out)
		if len(sum.Drifts) == 0 || len(sum.Impacts) == 0 {
			continue
		}
		if driftAt.IsZero() {
			driftAt = time.Now()
			say("drift confirmed; letting the agents make a few more calls with their old plans")
		}
		if time.Since(driftAt) < 4*time.Second {
			continue
		}
		s.StopAgent() // flushes its last spans
		time.Sleep(time.Second)
		if out, err = quickstart.ReadOutputs(o.Dir); err != nil {
			return err
		}
		quickstart.Summarize(out).Report(ctx, os.Stdout, s.APIURL())
		if keep {
			fmt.Printf("\nOutputs (OTLP JSON) in %s: logs.jsonl, traces.jsonl, metrics.jsonl\n", filepath.Clean(o.Dir))
		} else {
			fmt.Printf("\n(run with -dir DIR to keep the collector's outputs: logs.jsonl, traces.jsonl, metrics.jsonl)\n")
		}
		if !dashboard {
			fmt.Printf("(run with -dashboard to look at the drift in the dashboard afterwards)\n")
			return nil
		}
		fmt.Printf("\nDashboard: %s — the drift, who it hurts, Accept. Ctrl-C stops the demo.\n", s.APIURL())
		<-ctx.Done()
		return nil
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "demo:", err)
	os.Exit(1)
}
