package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
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
control plane, docs/api.md), newest first: when, which contracts (and the
server versions they carried), the state (open, accepted, reverted,
superseded), who accepted it; for an open drift the next step (roll back,
restart or update the agents it hurts, or accept); then the drift's one-line
description and every change with BEFORE and AFTER as 'mcpdrift diff' prints
them (the history keeps no witnesses: diff two snapshots for those), and the
signature of each tool it added. While the server is a mixed fleet (rolling
deploy, canary) its variants come first, as 'mcpdrift status' lists them.

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
				func(w io.Writer) error {
					server, err := af.serverStatus(cmd, args[0])
					if err != nil {
						return err
					}
					details, err := af.driftDetails(cmd, page.Drifts)
					if err != nil {
						return err
					}
					return writeHistory(w, &page, server, details)
				}, "servers", args[0], "drifts")
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

// serverStatus fetches the server's status, for whether it is a mixed fleet
// now; nil when it went away since the page was read.
func (f *apiFlags) serverStatus(cmd *cobra.Command, name string) (*apiwire.ServerStatus, error) {
	var detail apiwire.ServerDetail
	_, err := f.get(cmd, http.MethodGet, nil, nil, &detail, "servers", name)
	var ee *exitError
	if errors.As(err, &ee) && ee.code == exitNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &detail.ServerStatus, nil
}

// driftDetails fetches what the page leaves out for the drifts that need
// it: an open drift's next step, and the definitions of the tools a drift
// added (for their signatures). Keyed by drift id.
func (f *apiFlags) driftDetails(cmd *cobra.Command, drifts []apiwire.Drift) (map[string]*apiwire.DriftDetail, error) {
	out := map[string]*apiwire.DriftDetail{}
	for _, d := range drifts {
		if d.State != apiwire.DriftOpen && !slices.ContainsFunc(d.Changes, addedTool) {
			continue
		}
		var detail apiwire.DriftDetail
		_, err := f.get(cmd, http.MethodGet, nil, nil, &detail, "drifts", d.ID)
		var ee *exitError
		if errors.As(err, &ee) && ee.code == exitNotFound {
			continue // evicted since the page was read: printed without
		}
		if err != nil {
			return nil, err
		}
		out[d.ID] = &detail
	}
	return out, nil
}

func addedTool(c contract.Change) bool {
	return c.Subject == contract.KindTool && c.Path == "" && diffValue(c.Before) == nil && diffValue(c.After) != nil
}

// writeHistory prints the variants of a mixed fleet (server may be nil),
// then each drift: a header line, the next step of an open one, its
// description, its changes as the diff report prints them, and the
// signatures of the tools it added.
func writeHistory(w io.Writer, page *apiwire.DriftPage, server *apiwire.ServerStatus, details map[string]*apiwire.DriftDetail) error {
	name := contract.SanitizeText(page.Server)
	if len(page.Drifts) == 0 {
		fmt.Fprintf(w, "mcpdrift: %s has no drift in its history\n", name)
	} else {
		fmt.Fprintf(w, "mcpdrift: %s: %d of %d drifts, newest first\n", name, len(page.Drifts), page.Total)
	}
	if server != nil {
		// a mixed fleet has no drift yet: what its variants break is news
		if err := writeMixed(w, server); err != nil {
			return err
		}
	}
	for _, d := range page.Drifts {
		fmt.Fprintf(w, "\n=== drift %s  %s  %s  contract %s -> %s%s\n", d.ID, driftTimes(&d), driftState(&d),
			short(d.PreviousContract), short(d.CurrentContract), versions(&d))
		detail := details[d.ID]
		if detail != nil && detail.NextStep != nil {
			writeNextStep(w, detail.NextStep)
		}
		report := contract.Report{Changes: asDiffed(d.Changes)}
		fmt.Fprintf(w, "%s (%s)\n%s\n", report.Worst(), report.Summary().String(), contract.SafeText(d.Description))
		if d.Truncated {
			fmt.Fprintln(w, "(values were left out to fit the history's byte budget)")
		}
		if _, err := io.WriteString(w, render.TextChanges(&report)); err != nil {
			return err
		}
		if detail != nil {
			writeSignatures(w, detail)
		}
	}
	return nil
}

// versions is " (server 0.9.0 -> 1.0.0)" when the history kept them.
func versions(d *apiwire.Drift) string {
	v := func(s *apiwire.ServerInfo) string {
		if s == nil || s.Version == "" {
			return "?"
		}
		return contract.SanitizeText(s.Version)
	}
	if d.PreviousServer == nil && d.CurrentServer == nil {
		return ""
	}
	return " (server " + v(d.PreviousServer) + " -> " + v(d.CurrentServer) + ")"
}

// writeNextStep prints what to do about an open drift, with the agents it
// hurts and their sessions.
func writeNextStep(w io.Writer, s *apiwire.NextStep) {
	fmt.Fprintf(w, "next step (%s): %s\n", s.Action, contract.SafeText(s.Summary))
	for _, a := range s.Agents {
		agent := "(unnamed agent)"
		if a.Agent != nil {
			agent = contract.SanitizeText(*a.Agent)
		}
		var parts []string
		if a.StillStale > 0 {
			parts = append(parts, fmt.Sprintf("%d sessions still stale", a.StillStale))
		}
		if a.Failed > 0 {
			parts = append(parts, fmt.Sprintf("%d sessions failed", a.Failed))
		}
		if a.Stale > 0 {
			parts = append(parts, fmt.Sprintf("%d stale calls", a.Stale))
		}
		fmt.Fprintf(w, "  %s (%s risk; %s): %s; sessions %s\n", agent, a.Risk, strings.Join(parts, ", "),
			strings.Join(sanitized(a.Tools), ", "), orDash(strings.Join(sanitized(a.Sessions), ", ")))
	}
}

func sanitized(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = contract.SanitizeText(n)
	}
	return out
}

// writeSignatures prints the call signature of each tool the drift added,
// from its definition as the server sent it.
func writeSignatures(w io.Writer, d *apiwire.DriftDetail) {
	first := true
	for _, def := range d.Definitions {
		if def.Subject != contract.KindTool || diffValue(def.Before) != nil || diffValue(def.After) == nil {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nADDED TOOLS")
			first = false
		}
		sig, desc := toolSignature(def.Name, def.After)
		fmt.Fprintf(w, "  %s\n", sig)
		if desc != "" {
			fmt.Fprintf(w, "      %s\n", desc)
		}
	}
}

// Bounds of a printed signature: a hostile server's definition cannot
// flood the terminal.
const (
	maxSignatureParams = 24
	maxSignatureRunes  = 400
	maxSummaryRunes    = 160
)

// toolSignature is "name(city: string, days?: integer)" from a tool's
// inputSchema (required parameters first as listed, then the optional
// ones), and the first line of its description.
func toolSignature(name string, def json.RawMessage) (string, string) {
	var t struct {
		Description string `json:"description"`
		InputSchema struct {
			Properties map[string]struct {
				Type any   `json:"type"`
				Enum []any `json:"enum"`
			} `json:"properties"`
			Required []string `json:"required"`
		} `json:"inputSchema"`
	}
	if json.Unmarshal(def, &t) != nil {
		return contract.SanitizeText(name) + "(…)", ""
	}
	names := make([]string, 0, len(t.InputSchema.Properties))
	for p := range t.InputSchema.Properties {
		names = append(names, p)
	}
	slices.SortFunc(names, func(a, b string) int {
		ra, rb := slices.Contains(t.InputSchema.Required, a), slices.Contains(t.InputSchema.Required, b)
		if ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	params := make([]string, 0, len(names))
	for i, p := range names {
		if i == maxSignatureParams {
			params = append(params, fmt.Sprintf("… %d more", len(names)-i))
			break
		}
		prop := t.InputSchema.Properties[p]
		typ := "any"
		switch v := prop.Type.(type) {
		case string:
			typ = v
		case []any:
			parts := make([]string, 0, len(v))
			for _, x := range v {
				parts = append(parts, fmt.Sprint(x))
			}
			typ = strings.Join(parts, "|")
		}
		if len(prop.Enum) > 0 {
			typ = "enum"
		}
		opt := "?"
		if slices.Contains(t.InputSchema.Required, p) {
			opt = ""
		}
		params = append(params, p+opt+": "+typ)
	}
	sig := contract.SanitizeText(contract.TruncateRunes(name+"("+strings.Join(params, ", ")+")", maxSignatureRunes))
	desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
	return sig, contract.SanitizeText(contract.TruncateRunes(desc, maxSummaryRunes))
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

// driftTimes labels a drift's two times: when the server changed (as
// `mcpdrift impact` reports a tool's last change) and when the probes
// confirmed it. A control plane older than changed_at gives only the second.
func driftTimes(d *apiwire.Drift) string {
	if d.ChangedAt.IsZero() {
		return "confirmed " + when(d.At) + " UTC"
	}
	confirmed := when(d.At)
	if day, hour, ok := strings.Cut(confirmed, " "); ok && strings.HasPrefix(when(d.ChangedAt), day) {
		confirmed = hour
	}
	return "changed " + when(d.ChangedAt) + " UTC, confirmed " + confirmed
}
