package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/witness"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/replay"
)

// Replay's defaults for --timeout (the whole session: the listing and
// every call) and --request-timeout (each call: tools do real work).
const (
	replayTimeout        = 5 * time.Minute
	replayRequestTimeout = 30 * time.Second
)

func newReplayCommand() *cobra.Command {
	tf := targetFlags{defaultTimeout: replayTimeout, defaultRequestTimeout: replayRequestTimeout}
	var lock, format, policyName, configFile, failOn string
	var only []string
	var yes, destructive bool
	var maxCalls int
	cmd := &cobra.Command{
		Use:   "replay --lock OLD.json (--url URL ... | --stdio -- CMD [ARGS...]) --yes-call-tools [--include-destructive] [--fail-on OUTCOME] [--format text|json|markdown]",
		Short: "Send the old calls to a new server and grade how it answers them",
		Long: `Replay the calls an agent planned against the locked contract on the live
server: probe it, classify what changed (like 'check'), and for every changed
tool send an old call as a real tools/call. The calls are the witnesses of the
changes (an old call the new schema rejects; an old call to a removed or renamed
tool) or, for a tool whose changes break no call, the smallest call the old
schema accepts. Each answer is graded:

  graceful        a tool execution error (isError) that names what changed or
                  asks for a refresh: an agent can repair the call
  tool_error      a tool execution error that does not say what changed
  protocol_error  a JSON-RPC error (the spec prefers execution errors for
                  invalid input: the model may never see a protocol error)
  accepted        the call succeeded: compatibility kept, or, for a call the
                  new contract rejects, a silent reinterpretation
  timeout, crash  no answer in time; the server exited or dropped the connection

tools/call has side effects: run replay against a test deployment, never
production. It prints the calls it will make first and refuses to make them
without --yes-call-tools. Tools annotated destructiveHint: true are skipped
unless --include-destructive.

--fail-on defaults to accepted: a silently accepted breaking call, a timeout
or a crash fails; none never fails.

` + exitStatusHelp("replay"),
		Example: `  mcpdrift replay --lock mcp.lock.json --yes-call-tools --stdio -- node dist/index.js
  mcpdrift replay --lock mcp.lock.json --yes-call-tools --fail-on protocol_error --url http://localhost:3001/mcp`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if lock == "" {
				return usageError("--lock FILE is required")
			}
			if !slices.Contains([]string{"text", "json", "markdown"}, format) {
				return usageError("--format must be text, json or markdown, not %q", format)
			}
			threshold, err := replay.ParseOutcome(failOn)
			if err != nil {
				return usageError("--fail-on: %v", err)
			}
			policy, err := loadPolicy(configFile, policyName, cmd.Flags().Changed("policy"))
			if err != nil {
				return err
			}
			t, err := tf.target(cmd, args)
			if err != nil {
				return err
			}
			locked, err := readLock(lock, false)
			if err != nil {
				return err
			}
			if t.Name == "" {
				t.Name = locked.Server.Name
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			opts := tf.options(nil)
			open := func(ctx context.Context) (*probe.Session, error) { return probe.Open(ctx, t, opts) }
			s, err := open(ctx)
			if err != nil {
				return probeFailure(err)
			}
			defer s.Close()
			live := s.Result().Snapshot
			report := contract.Diff(locked, live, policy)
			witness.Report(report, locked, live)
			calls := replay.Plan(report, locked, live, replay.PlanOptions{IncludeDestructive: destructive, MaxCalls: maxCalls, Tools: only})
			server := serverLabel(live)
			fmt.Fprint(cmd.ErrOrStderr(), replay.PlanText(server, calls))
			if !yes {
				return usageError("refusing to send %d tools/call requests without --yes-call-tools (they can have side effects: use a test deployment)", len(calls))
			}
			results := replay.Run(ctx, s, open, calls)
			rep := replay.NewReport(server, threshold, results)
			if err := writeReplayReport(cmd.OutOrStdout(), rep, format); err != nil {
				return err
			}
			if rep.Fails() {
				return &exitError{code: exitDrift, err: fmt.Errorf("an answer reached --fail-on %s", failOn)}
			}
			return nil
		},
	}
	tf.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&lock, "lock", "", "the locked (old) contract: a snapshot file")
	fl.BoolVar(&yes, "yes-call-tools", false, "send the planned tools/call requests (they can have side effects)")
	fl.BoolVar(&destructive, "include-destructive", false, "also call tools annotated destructiveHint: true")
	fl.StringVar(&failOn, "fail-on", string(replay.Accepted), "exit 1 when an answer is at least: graceful, tool_error, protocol_error, accepted, timeout, crash, or none (never)")
	fl.StringVar(&format, "format", "text", "output format: text, json or markdown")
	fl.StringVar(&policyName, "policy", contract.PolicyDefault, "named policy: default, strict or lenient")
	fl.StringVar(&configFile, "config", "", "policy file (YAML or JSON): base, severities, ignore")
	fl.IntVar(&maxCalls, "max-calls", replay.DefaultMaxCalls, "send at most this many calls")
	fl.StringArrayVar(&only, "tool", nil, "replay only calls to this tool (old or new name; repeatable)")
	return cmd
}

// probeFailure turns a probe error into exit 4 (probe), with the
// stdio server's stderr tail; other errors are usage errors.
func probeFailure(err error) error {
	var pe *probe.Error
	if errors.As(err, &pe) {
		msg := pe.Error()
		if pe.Stderr != "" {
			msg += "\nserver stderr (tail):\n" + strings.TrimRight(pe.Stderr, "\n")
		}
		return probeError(errors.New(msg))
	}
	return usageError("%v", err)
}

func writeReplayReport(w io.Writer, r *replay.Report, format string) error {
	var out string
	switch format {
	case "json":
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		out = string(b) + "\n"
	case "markdown":
		out = r.Markdown()
	default:
		out = r.Text()
	}
	_, err := io.WriteString(w, out)
	return err
}
