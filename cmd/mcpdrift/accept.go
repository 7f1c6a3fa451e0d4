package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
)

func newAcceptCommand() *cobra.Command {
	var af apiFlags
	var req apiwire.AcceptRequest
	cmd := &cobra.Command{
		Use:   "accept SERVER [--drift ID] [--comment TEXT] [--by NAME] [--api URL]",
		Short: "Accept a server's open drift",
		Long: `Accept a server's open drift through the Collector's control plane
(docs/api.md). With baseline: pinned the contract the server serves becomes
the baseline and the open drift closes (mcpdrift.drift.open back to 0); with
advance the drifts are acknowledged (status back to UP). The history keeps
them, and the Collector emits an mcpdrift.drift_accepted event for audit.

--drift names the drift you reviewed (mcpdrift history): the accept fails if
a newer one arrived since. Who accepts is the principal the Collector's auth
extension establishes; without one, --by (else "anonymous").

` + exitStatusHelp("accept"),
		Example: `  mcpdrift accept demo-tools
  mcpdrift accept demo-tools --drift 3f1d2a9c0b7e6d54 --comment "project is required now"`,
		Args: exactArgs("accept", "SERVER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var res apiwire.AcceptResult
			return af.fetch(cmd, http.MethodPost, nil, req, &res, func(w io.Writer) error { return writeAccept(w, &res) }, "servers", args[0], "accept")
		},
	}
	af.register(cmd)
	cmd.Flags().StringVar(&req.Drift, "drift", "", "the id of the drift you reviewed; refused if it is not the newest open one")
	cmd.Flags().StringVar(&req.Comment, "comment", "", "why; kept with the drift and on the audit event")
	cmd.Flags().StringVar(&req.By, "by", "", "your name, when the Collector's auth extension does not establish one")
	return cmd
}

func writeAccept(w io.Writer, res *apiwire.AcceptResult) error {
	ids := make([]string, len(res.Accepted))
	for i, d := range res.Accepted {
		ids[i] = d.ID + " (" + d.Severity + ")"
	}
	_, err := fmt.Fprintf(w, "mcpdrift: %s accepted %d drift(s) of %s: %s\nbaseline %s; status %s\n", contract.SanitizeText(res.By), len(res.Accepted),
		contract.SanitizeText(res.Server), strings.Join(ids, ", "), short(res.BaselineDigest), res.Status)
	return err
}
