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
	return exitUsage // cobra's own errors: unknown commands, wrong argument counts
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

'replay' sends the old calls to a new server (a test deployment) and grades
its answers; docs/release-gate.md walks through the whole release gate.

` + exitStatusHelp(""),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newHashCommand(), newDiffCommand(), newSnapshotCommand(), newCheckCommand(), newReplayCommand(),
		newStatusCommand(), newHistoryCommand(), newImpactCommand(), newAcceptCommand(),
		newApproveCommand(), newWrapCommand(), newUnwrapCommand(), newProxyCommand(), newVersionCommand())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError("%v", err) })
	return root
}
