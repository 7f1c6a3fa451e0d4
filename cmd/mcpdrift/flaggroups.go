package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpWidth is the widest line a command's help prints.
const helpWidth = 100

// flagGroupKey is the annotation that names a flag's group in the help.
const flagGroupKey = "mcpdrift_group"

// groupFlags sets each named flag's help group. A command with groups
// prints its flags under one heading per group, in the order given, and
// wrapped to helpWidth (useGroupedFlags).
func groupFlags(cmd *cobra.Command, group string, names ...string) {
	for _, n := range names {
		if err := cmd.Flags().SetAnnotation(n, flagGroupKey, []string{group}); err != nil {
			panic("flag group " + group + ": " + err.Error()) // a programming error: the flag does not exist
		}
	}
}

// useGroupedFlags makes cmd's usage print its flags by group: a flag
// without a group (help) goes last, under "Other flags".
func useGroupedFlags(cmd *cobra.Command, order ...string) {
	cmd.SetUsageFunc(func(c *cobra.Command) error {
		var b strings.Builder
		b.WriteString("Usage:\n  " + c.UseLine() + "\n")
		if c.HasExample() {
			b.WriteString("\nExamples:\n" + c.Example + "\n")
		}
		sets := map[string]*pflag.FlagSet{}
		for _, g := range append(order, "Other flags") {
			sets[g] = pflag.NewFlagSet(g, pflag.ContinueOnError)
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			g := "Other flags"
			if a := f.Annotations[flagGroupKey]; len(a) == 1 && sets[a[0]] != nil {
				g = a[0]
			}
			sets[g].AddFlag(f)
		})
		for _, g := range append(order, "Other flags") {
			if !sets[g].HasFlags() {
				continue
			}
			b.WriteString("\n" + g + ":\n" + sets[g].FlagUsagesWrapped(helpWidth))
		}
		_, err := c.OutOrStderr().Write([]byte(b.String()))
		return err
	})
}
