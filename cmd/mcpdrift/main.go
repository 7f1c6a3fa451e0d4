// Command mcpdrift hashes, snapshots and diffs MCP server contracts, and gates
// releases on contract drift. See `mcpdrift --help`.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes shared by every subcommand.
const (
	exitOK      = 0
	exitFailure = 1 // invalid input (hash) or a change at or above --fail-on (diff, check)
	exitUsage   = 2 // bad flags or arguments
)

// exitError carries an exit code up to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func failure(err error) error { return &exitError{code: exitFailure, err: err} }

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the CLI and returns the process exit code; tests call it directly.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) && errors.Is(ee.err, errQuietExit) {
		return ee.code // the proxied server's exit status
	}
	fmt.Fprintln(stderr, "mcpdrift:", err)
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitUsage // cobra's own errors: unknown flags, wrong argument counts
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "mcpdrift",
		Short: "Detect and classify MCP server contract drift",
		Long: `mcpdrift fingerprints what an MCP server advertises (tools, prompts, resources,
instructions, capabilities) and tells you when that contract drifts, what changed,
and whom it breaks.

Digests follow "Tool definition hash, version 1" (RFC 8785 canonical JSON,
SHA-256), so they can be checked by other tools.

Exit codes: 0 success; 1 invalid input (hash), drift at or above --fail-on
(diff, check), a failed probe, changes not approved (approve), an entry left
wrapped (unwrap) or a file that could not be written; 2 usage error, or invalid
input for diff, check, approve, wrap and unwrap.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newHashCommand(), newDiffCommand(), newSnapshotCommand(), newCheckCommand(),
		newApproveCommand(), newWrapCommand(), newUnwrapCommand(), newProxyCommand())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError("%v", err) })
	return root
}
