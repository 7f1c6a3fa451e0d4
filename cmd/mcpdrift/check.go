package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/witness"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
)

func newCheckCommand() *cobra.Command {
	var tf targetFlags
	var rf reportFlags
	var lock string
	var update bool
	cmd := &cobra.Command{
		Use:   "check --lock FILE (--url URL ... | --stdio -- CMD [ARGS...]) [--update] [--fail-on SEVERITY] [--format text|json|markdown|sarif|github]",
		Short: "Release gate: compare a live MCP server with its committed lock",
		Long: `Probe a live MCP server and compare its contract with a committed lock file (a
snapshot written by 'mcpdrift snapshot' or 'mcpdrift check --update'), like
'buf breaking' does for protobuf APIs. Run it in CI against the build you are
about to release: a breaking change fails the job before it reaches agents.

The comparison and the output are those of 'mcpdrift diff': every change is
classified (docs/rules.md) under the policy (--policy, --config), with
witnesses (an old call the new schema rejects, with the validator's reason),
and the Markdown output is ready to post as a pull-request comment. --format
sarif writes SARIF 2.1.0 for code scanning and --format github workflow-command
annotations, both placed on the lock file.

--update writes the live contract to the lock (creating it) after printing what
changed; commit the new lock to accept the drift.

` + exitStatusHelp("check"),
		Example: `  mcpdrift check --lock mcp.lock.json --stdio -- node dist/index.js
  mcpdrift check --lock mcp.lock.json --url http://localhost:3001/mcp --format markdown > drift.md
  mcpdrift check --lock mcp.lock.json --update --stdio -- node dist/index.js`,
		RunE: func(cmd *cobra.Command, args []string) error {
			lp, err := probeAgainstLock(cmd, &tf, &rf, lock, update, args)
			if err != nil {
				return err
			}
			locked, live := lp.locked, lp.live
			report := contract.Diff(locked, live, lp.policy)
			if rf.witness {
				witness.Report(report, locked, live)
			}
			if err := writeCheckReport(cmd.OutOrStdout(), rf.format, lock, locked, live, report); err != nil {
				return outputError(err)
			}
			head := func(format string) string { return checkHead(format, lock, locked, live) }
			if err := rf.writeOutputs(report, lockLocator(lock), head); err != nil {
				return err
			}
			if update {
				data, err := live.Encode()
				if err != nil {
					return outputError(err)
				}
				if err := writeFileAtomic(lock, data); err != nil {
					return outputError(err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "mcpdrift: wrote %s (contract %s)\n", lock, live.Digests.Contract)
				return nil
			}
			return gate(report, lp.threshold)
		},
	}
	tf.register(cmd)
	rf.register(cmd)
	cmd.Flags().StringVar(&lock, "lock", "", "the committed lock: a snapshot file")
	cmd.Flags().BoolVar(&update, "update", false, "write the live contract to the lock (accept the drift)")
	return cmd
}

// lockProbe is a live contract and the lock it is compared with.
type lockProbe struct {
	locked, live *contract.Snapshot // locked is nil when there is no lock yet
	policy       *contract.Policy
	threshold    contract.Severity
}

// probeAgainstLock is what check and approve share: check the flags, read
// the lock (missing is fine when mayCreate) and probe the target, named as
// the lock names it unless --name says otherwise.
func probeAgainstLock(cmd *cobra.Command, tf *targetFlags, rf *reportFlags, lock string, mayCreate bool, args []string) (*lockProbe, error) {
	if lock == "" {
		return nil, usageError("--lock FILE is required")
	}
	threshold, policy, err := rf.parse(cmd)
	if err != nil {
		return nil, err
	}
	t, err := tf.target(cmd, args)
	if err != nil {
		return nil, err
	}
	locked, err := readLock(lock, mayCreate)
	if err != nil {
		return nil, err
	}
	if t.Name == "" && locked != nil {
		t.Name = locked.Server.Name
	}
	res, err := runProbe(cmd, tf, t)
	if err != nil {
		return nil, err
	}
	return &lockProbe{locked: locked, live: res.Snapshot, policy: policy, threshold: threshold}, nil
}

// readLock reads the lock; a missing lock is fine only with --update.
func readLock(path string, update bool) (*contract.Snapshot, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if update {
			return nil, nil
		}
		return nil, inputError(fmt.Errorf("%s does not exist: create it with --update", path))
	}
	b, err := readLimited(nil, path, contract.DefaultMaxDocumentBytes)
	if err != nil {
		return nil, err
	}
	s, err := contract.DecodeSnapshot(b)
	if err != nil {
		return nil, inputError(fmt.Errorf("%s: %w", path, err))
	}
	return s, nil
}

// writeCheckReport prints the diff; text and Markdown name the lock and the
// two contracts first, JSON is diff's object.
func writeCheckReport(w io.Writer, format, lock string, locked, live *contract.Snapshot, r *contract.Report) error {
	if _, err := io.WriteString(w, checkHead(format, lock, locked, live)); err != nil {
		return err
	}
	return writeReport(w, r, format, lockLocator(lock))
}

// checkHead is the line that names the lock and the two contracts, for the
// text and Markdown formats.
func checkHead(format, lock string, locked, live *contract.Snapshot) string {
	switch {
	case format != "text" && format != "markdown":
		return ""
	case locked == nil:
		return fmt.Sprintf("no lock at %s yet: the live contract (%s) becomes the lock\n\n", lock, short(live.Digests.Contract))
	case format == "markdown":
		return fmt.Sprintf("**%s** against `%s` (locked contract `%s`, live `%s`)\n\n",
			contract.SanitizeText(serverLabel(live)), lock, short(locked.Digests.Contract), short(live.Digests.Contract))
	}
	return fmt.Sprintf("%s against %s (locked contract %s, live %s)\n",
		contract.SanitizeText(serverLabel(live)), lock, short(locked.Digests.Contract), short(live.Digests.Contract))
}

// lockLocator places every change in the lock: it is the file a release
// updates.
func lockLocator(lock string) *locator {
	return &locator{oldFiles: []string{lock}, texts: map[string][]byte{}}
}

func serverLabel(s *contract.Snapshot) string {
	switch {
	case s.Server.Name != "":
		return s.Server.Name
	case s.Server.URL != "":
		return s.Server.URL
	case len(s.Server.Command) > 0:
		return serverid.Stdio(s.Server.Command[:1])
	}
	return "server"
}

func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}
