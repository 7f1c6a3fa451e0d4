package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
)

func newImpactCommand() *cobra.Command {
	var af apiFlags
	var tool string
	var hours float64
	cmd := &cobra.Command{
		Use:   "impact SERVER --tool TOOL [--hours N] [--api URL] [--format text|json]",
		Short: "Show which agents called a tool, and with which definition",
		Long: `Ask the Collector's mcpimpact processor (through its control plane,
docs/api.md) which agents called a tool of a server in the last --hours (at
most the processor's window; default all of it): sessions, calls, errors,
average latency, last call, how many calls used the tool's previous
definition (old, stale after its last change), its current one (new) or
neither (unknown), and the risk, by the same rules as mcpdrift.impact events.
While the server is a mixed fleet (rolling deploy, canary), the variants that
change the tool follow, each with its share of the probes and who it affects
in the same window: the sessions it served (hurt now) and those the baseline
served (at risk on convergence), as 'mcpdrift status' lists them.

` + exitStatusHelp("impact"),
		Example: `  mcpdrift impact demo-tools --tool create_ticket
  mcpdrift impact demo-tools --tool create_ticket --hours 1 --format json`,
		Args: exactArgs("impact", "SERVER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if tool == "" {
				return usageError("--tool is required: the tool whose callers to list")
			}
			q := url.Values{"tool": {tool}}
			if cmd.Flags().Changed("hours") {
				if !(hours > 0) {
					return usageError("--hours must be greater than 0")
				}
				q.Set("hours", strconv.FormatFloat(hours, 'f', -1, 64))
			}
			var imp apiwire.Impact
			return af.fetch(cmd, http.MethodGet, q, nil, &imp, func(w io.Writer) error { return writeImpact(w, &imp) }, "servers", args[0], "impact")
		},
	}
	af.register(cmd)
	cmd.Flags().StringVar(&tool, "tool", "", "the tool's name (required)")
	cmd.Flags().Float64Var(&hours, "hours", 0, "window in hours, ending now (default: the processor's window)")
	return cmd
}

// writeImpact prints the query's header and one row per agent.
func writeImpact(w io.Writer, imp *apiwire.Impact) error {
	fmt.Fprintf(w, "mcpdrift: %s · %s · last %sh (%s to %s UTC)\n", contract.SanitizeText(imp.Server), contract.SanitizeText(imp.Tool),
		strconv.FormatFloat(imp.Hours, 'f', -1, 64), when(imp.From), when(imp.To))
	digest := func(d *string) string {
		if d == nil {
			return "none"
		}
		return short(*d)
	}
	if ch := imp.Change; ch != nil {
		fmt.Fprintf(w, "last change: drift %s, %s, changed %s UTC; definition %s -> %s\n", ch.DriftID, ch.Severity, when(ch.At), digest(imp.PreviousDigest), digest(imp.CurrentDigest))
	} else {
		fmt.Fprintf(w, "no change seen; definition %s\n", digest(imp.CurrentDigest))
	}
	if imp.NoRecentCallers {
		if _, err := fmt.Fprintln(w, "\nNo recent callers — tool may be unused"); err != nil {
			return err
		}
		return writeImpactVariants(w, imp)
	}
	t := imp.Totals
	fmt.Fprintf(w, "%d stale calls; %d agents, %d sessions, %d calls (%d before the change), %d errors\n", t.Stale, t.Agents, t.Sessions, t.Calls, t.Before, t.Errors)
	if r := t.Recovery; r != nil {
		fmt.Fprintf(w, "sessions since the change: %s\n", recoveryText(r))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tSESSIONS\tCALLS\tERRORS\tAVG LATENCY\tLAST CALLED\tSTALE\tBEFORE/NEW/AHEAD/UNKNOWN\tRECOVERED/STILL STALE/FAILED/IDLE\tRISK")
	for _, a := range imp.Agents {
		agent := "(unknown)"
		if a.Agent != nil {
			agent = contract.SanitizeText(*a.Agent)
		}
		latency := "-"
		if a.AvgLatencyMS != nil {
			latency = strconv.FormatFloat(*a.AvgLatencyMS, 'f', 1, 64) + " ms"
		}
		rec := "-"
		if r := a.Recovery; r != nil {
			rec = fmt.Sprintf("%d/%d/%d/%d", r.Recovered, r.StillStale, r.Failed, r.Idle)
		}
		d := a.Digests
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%d\t%d/%d/%d/%d\t%s\t%s\n", agent, a.Sessions, a.Calls, a.Errors, latency, when(a.LastCall),
			d.Stale, d.Before, d.New, d.Ahead, d.Unknown, rec, a.Risk)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeImpactVariants(w, imp)
}

// writeImpactVariants lists, while the server is a mixed fleet, the
// variants that change the tool and who each affects, split as status
// splits them: the sessions a variant served (hurt now) and those the
// baseline served (at risk on convergence).
func writeImpactVariants(w io.Writer, imp *apiwire.Impact) error {
	if len(imp.Variants) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s is MIXED; the variants that change %s:\n", contract.SanitizeText(imp.Server), contract.SanitizeText(imp.Tool))
	for _, v := range imp.Variants {
		severity := "-"
		if len(v.Impact.Tools) > 0 {
			severity = contract.SanitizeText(v.Impact.Tools[0].Severity)
		}
		if _, err := fmt.Fprintf(w, "  %s  %5.1f %%  %s\n", contract.SanitizeText(short(v.Digest)), 100*v.Share, severity); err != nil {
			return err
		}
		if err := writeVariantImpact(w, &v.Impact); err != nil {
			return err
		}
	}
	return nil
}

// recoveryText says where the sessions a change affected stand.
func recoveryText(r *apiwire.Recovery) string {
	s := fmt.Sprintf("%d recovered, %d still stale, %d failed, %d idle", r.Recovered, r.StillStale, r.Failed, r.Idle)
	if r.MedianSecondsToRecover != nil {
		s += fmt.Sprintf("; recovered in %ss (median), %ss (longest)",
			strconv.FormatFloat(*r.MedianSecondsToRecover, 'f', -1, 64), strconv.FormatFloat(*r.MaxSecondsToRecover, 'f', -1, 64))
	}
	return s
}
