package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/witness"
)

func newApproveCommand() *cobra.Command {
	var tf targetFlags
	var rf reportFlags
	var lock string
	var yes bool
	cmd := &cobra.Command{
		Use:   "approve --lock FILE [--yes] (--url URL [--header 'K: V']... | --stdio -- CMD [ARGS...])",
		Short: "Review a server's live contract against its lock, and accept it",
		Long: `Probe a live MCP server, print how its contract differs from the lock (every
change classified, as 'mcpdrift check' does), and on confirmation write the live
contract to the lock: the approve-once flow for 'mcpdrift proxy --lock', which
hides and refuses tools whose definition is not in the lock.

Without a lock, every tool, prompt and resource is shown as added and the lock
is created. The lock is the snapshot 'mcpdrift snapshot' and 'check --lock'
read and write, replaced atomically.

The question is asked on the terminal. When standard input is not a terminal
(CI, a pipe) approve refuses to write unless --yes is given; it still prints the
changes.

` + exitStatusHelp("approve"),
		Example: `  mcpdrift approve --lock mcp.lock.json --stdio -- npx -y @modelcontextprotocol/server-everything
  mcpdrift approve --lock mcp.lock.json --yes --url https://mcp.example.com/mcp -H 'Authorization: Bearer $TOKEN'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			lp, err := probeAgainstLock(cmd, &tf, &rf, lock, true, args)
			if err != nil {
				return err
			}
			locked, live := lp.locked, lp.live
			baseline := locked
			if baseline == nil {
				baseline = withoutDefinitions(live)
			}
			report := contract.Diff(baseline, live, lp.policy)
			if rf.witness {
				witness.Report(report, baseline, live)
			}
			if err := writeCheckReport(cmd.OutOrStdout(), rf.format, lock, locked, live, report); err != nil {
				return outputError(err)
			}
			stderr := cmd.ErrOrStderr()
			if locked != nil && locked.Digests.Contract == live.Digests.Contract {
				fmt.Fprintf(stderr, "mcpdrift: %s is up to date (contract %s)\n", lock, short(live.Digests.Contract))
				return nil
			}
			if !yes {
				if err := confirm(cmd.InOrStdin(), stderr, lock); err != nil {
					return err
				}
			}
			data, err := live.Encode()
			if err != nil {
				return outputError(err)
			}
			if err := writeFileAtomic(lock, data); err != nil {
				return outputError(err)
			}
			fmt.Fprintf(stderr, "mcpdrift: approved: wrote %s (contract %s)\n", lock, live.Digests.Contract)
			return nil
		},
	}
	tf.register(cmd)
	rf.registerOutput(cmd)
	cmd.Flags().StringVar(&lock, "lock", "", "the lock: a snapshot file, created when missing")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve without asking (required when standard input is not a terminal)")
	return cmd
}

// withoutDefinitions is the live contract with nothing listed, so that a
// diff against it shows every definition as added and no server change.
func withoutDefinitions(live *contract.Snapshot) *contract.Snapshot {
	empty := *live
	for _, k := range contract.Kinds {
		empty.SetListing(k, nil)
	}
	return &empty
}

// confirm asks on the terminal whether to write the lock; anything but yes
// is no.
func confirm(stdin io.Reader, prompt io.Writer, lock string) error {
	if f, ok := stdin.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		return usageError("%s was not written: standard input is not a terminal, so no one can approve; rerun with --yes to approve, or use 'mcpdrift check' only to compare", lock)
	}
	fmt.Fprintf(prompt, "Approve this contract and write %s? [y/N] ", lock)
	answer, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return usageError("reading the answer: %v", err)
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return &exitError{code: exitDrift, err: fmt.Errorf("not approved: %s is unchanged", lock)}
}
