package main

import (
	"fmt"
	"runtime"

	"github.com/mcpdrift/mcpdrift/internal/version"
	"github.com/spf13/cobra"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the release and commit this binary was built from",
		Long: `Print the release (a tag such as v0.1.0, or (devel) for a build from a
checkout), the commit it was built from, the Go version and the platform.

` + exitStatusHelp("version"),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "mcpdrift %s (commit %s, %s, %s/%s)\n",
				version.Version(), version.Commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
