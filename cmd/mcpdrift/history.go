package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/render"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
)

func newHistoryCommand() *cobra.Command {
	var af apiFlags
	var limit int
	cmd := &cobra.Command{
		Use:   "history SERVER [--limit N] [--api URL] [--format text|json]",
		Short: "Show a server's drift history, newest first",
		Long: `Show the drifts the Collector's mcpdrift receiver keeps for a server (its
control plane, docs/api.md), newest first: when, which contracts, the state
(open, accepted, reverted, superseded), who accepted it, and every change with
BEFORE and AFTER, as 'mcpdrift diff' prints them.

` + exitStatusHelp("history"),
		Example: `  mcpdrift history demo-tools
  mcpdrift history demo-tools --limit 5 --format json`,
		Args: exactArgs("history", "SERVER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 || limit > 1000 {
				return usageError("--limit must be from 1 to 1000, not %d", limit)
			}
			var page apiwire.DriftPage
			return af.fetch(cmd, http.MethodGet, url.Values{"limit": {strconv.Itoa(limit)}}, nil, &page,
				func(w io.Writer) error { return writeHistory(w, &page) }, "servers", args[0], "drifts")
		},
	}
	af.register(cmd)
	cmd.Flags().IntVar(&limit, "limit", 20, "how many drifts, newest first (1 to 1000)")
	return cmd
}

// exactArgs asks for exactly the named arguments.
func exactArgs(command string, names ...string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return usageError("%s takes %s (got %d arguments)", command, strings.Join(names, " "), len(args))
		}
		return nil
	}
}

// writeHistory prints each drift: a header line, then its changes as the
// diff report prints them.
func writeHistory(w io.Writer, page *apiwire.DriftPage) error {
	name := contract.SanitizeText(page.Server)
	if len(page.Drifts) == 0 {
		_, err := fmt.Fprintf(w, "mcpdrift: %s has no drift in its history\n", name)
		return err
	}
	fmt.Fprintf(w, "mcpdrift: %s: %d of %d drifts, newest first\n", name, len(page.Drifts), page.Total)
	for _, d := range page.Drifts {
		fmt.Fprintf(w, "\n=== drift %s  %s UTC  %s  contract %s -> %s\n", d.ID, when(d.At), driftState(&d), short(d.PreviousContract), short(d.CurrentContract))
		if d.Truncated {
			fmt.Fprintln(w, "    (values were left out to fit the history's byte budget)")
		}
		report := contract.Report{Changes: asDiffed(d.Changes)}
		if _, err := io.WriteString(w, render.Text(&report)); err != nil {
			return err
		}
	}
	return nil
}

// asDiffed gives changes read from the API the values a diff has: JSON null
// is an absent value, and values are compact.
func asDiffed(changes []contract.Change) []contract.Change {
	for i := range changes {
		changes[i].Before, changes[i].After = diffValue(changes[i].Before), diffValue(changes[i].After)
	}
	return changes
}

func diffValue(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// driftState says what became of a drift, and who accepted it.
func driftState(d *apiwire.Drift) string {
	switch {
	case d.Accepted != nil:
		s := fmt.Sprintf("accepted by %s at %s UTC", contract.SanitizeText(d.Accepted.By), when(d.Accepted.At))
		if !d.Accepted.Authenticated {
			s += " (unauthenticated)"
		}
		if d.Accepted.Comment != nil {
			s += ": " + contract.QuoteForDisplay(*d.Accepted.Comment)
		}
		return s
	case d.State == apiwire.DriftOpen:
		return "OPEN"
	case d.ClosedAt != nil:
		return d.State + " at " + when(*d.ClosedAt) + " UTC"
	}
	return d.State
}
