package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
)

func newStatusCommand() *cobra.Command {
	var af apiFlags
	cmd := &cobra.Command{
		Use:   "status [--api URL] [--format text|json]",
		Short: "List the servers a Collector probes, with their status",
		Long: `List every server the Collector's mcpdrift receivers probe, from its control
plane (the mcpdrift_api extension; docs/api.md): status (UP, DRIFTED, DOWN,
PENDING), last probe, error class, contract digest, protocol generation and
versions, and the open drift.

` + exitStatusHelp("status"),
		Example: `  mcpdrift status
  MCPDRIFT_API=https://otel.example.com:13180 MCPDRIFT_TOKEN=... mcpdrift status --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var list apiwire.ServerList
			err := af.fetch(cmd, http.MethodGet, nil, nil, &list, func(w io.Writer) error { return writeStatus(w, &list) }, "servers")
			if err != nil {
				return err
			}
			return statusExit(&list)
		},
	}
	af.register(cmd)
	return cmd
}

// statusExit is 4 when a server is down, 1 when one has drifted.
func statusExit(list *apiwire.ServerList) error {
	switch {
	case list.Summary.Down > 0:
		return &exitError{code: exitProbe, err: fmt.Errorf("%d of %d servers are DOWN", list.Summary.Down, list.Summary.Total)}
	case list.Summary.Drifted > 0:
		return &exitError{code: exitDrift, err: fmt.Errorf("%d of %d servers have drifted (mcpdrift history SERVER; mcpdrift accept SERVER)", list.Summary.Drifted, list.Summary.Total)}
	}
	return nil
}

// writeStatus prints one row per server.
func writeStatus(w io.Writer, list *apiwire.ServerList) error {
	s := list.Summary
	fmt.Fprintf(w, "mcpdrift: %d servers: %d up, %d drifted, %d down, %d pending\n\n", s.Total, s.Up, s.Drifted, s.Down, s.Pending)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATUS\tLAST PROBE\tERROR\tCONTRACT\tGENERATION\tPROTOCOL\tVERSION\tOPEN DRIFT")
	for _, st := range list.Servers {
		last, class := "-", "-"
		if p := st.Probe; p != nil {
			last, class = when(p.Last), p.ErrorClass
			if p.FailingSince != nil {
				// on call, how long it has been down matters more than
				// when the last probe ran
				class += " since " + when(*p.FailingSince)
			}
		}
		digest, gen, proto, version := "-", "-", "-", "-"
		if c := st.Contract; c != nil {
			digest, gen, proto, version = short(c.Digest), orDash(c.SpecGeneration), orDash(c.ProtocolVersion), orDash(c.ServerInfo.Version)
			if c.BaselineDigest != c.Digest {
				digest += " (baseline " + short(c.BaselineDigest) + ")"
			}
		}
		open := "-"
		if d := st.OpenDrift; d != nil {
			open = d.ID + " " + d.Severity
		}
		status := string(st.Status)
		if st.Mixed {
			status += " (mixed)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", contract.SanitizeText(st.Name), status, last, class, digest,
			gen, contract.SanitizeText(proto), contract.SanitizeText(version), open)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeVariants(w, list)
}

// writeVariants lists the contracts of each mixed fleet under the table.
func writeVariants(w io.Writer, list *apiwire.ServerList) error {
	for i := range list.Servers {
		if err := writeMixed(w, &list.Servers[i]); err != nil {
			return err
		}
	}
	return nil
}

// writeMixed lists a mixed fleet's contracts (nothing when the server is
// not mixed): which share of the probes each serves and what it breaks
// against the baseline, so a canary can be rolled back before it reaches
// 100 %.
func writeMixed(w io.Writer, st *apiwire.ServerStatus) error {
	if len(st.Variants) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s is MIXED:\n", contract.SanitizeText(st.Name))
	for _, v := range st.Variants {
		what := "baseline"
		if !v.Baseline {
			what = orDash(v.Severity) + ": " + orDash(contract.SanitizeText(v.Summary))
		}
		if _, err := fmt.Fprintf(w, "  %s  %5.1f %%  %s\n", short(v.Digest), 100*v.Share, what); err != nil {
			return err
		}
		if err := writeVariantImpact(w, v.Impact); err != nil {
			return err
		}
	}
	return nil
}

// variantStatus says in words whose sessions a variant's impact row counts.
var variantStatus = map[string]string{"hurt_now": "hurt now", "at_risk_on_convergence": "at risk on convergence"}

// writeVariantImpact lists who a variant affects, under its line: the
// totals of each side, then one line per (tool, agent, side).
func writeVariantImpact(w io.Writer, imp *apiwire.VariantImpact) error {
	if imp == nil {
		return nil
	}
	side := func(t apiwire.VariantTotals) string {
		return fmt.Sprintf("agents %d, sessions %d, calls %d", t.Agents, t.Sessions, t.Calls)
	}
	fmt.Fprintf(w, "      hurt now: %s; at risk on convergence: %s (last %g h)\n", side(imp.HurtNow), side(imp.AtRiskOnConvergence), imp.Hours)
	for _, t := range imp.Tools {
		for _, a := range t.Agents {
			agent := "(unnamed agent)"
			if a.Agent != nil {
				agent = contract.SanitizeText(*a.Agent)
			}
			sessions := contract.SanitizeText(strings.Join(a.SessionIDs, ", "))
			if _, err := fmt.Fprintf(w, "      %s  %s  %s, risk %s: calls %d, sessions %s\n", contract.SanitizeText(t.Tool), agent,
				orDash(variantStatus[a.Status]), a.Risk, a.Calls, orDash(sessions)); err != nil {
				return err
			}
		}
	}
	return nil
}

// when formats a time for tables, in UTC to the second.
func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
