package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/render"
	"github.com/mcpdrift/mcpdrift/contract/witness"
	"github.com/mcpdrift/mcpdrift/internal/version"
)

func newDiffCommand() *cobra.Command {
	var rf reportFlags
	var kind string
	cmd := &cobra.Command{
		Use:   "diff [--format text|json|markdown] [--policy NAME] [--config FILE] [--fail-on SEVERITY] OLD NEW",
		Short: "Classify the drift between two contracts, and fail on what breaks",
		Long: `Compare two contracts of one MCP server and classify every change by whom it
hurts: breaking, warning, compatible or info (docs/rules.md lists every rule).

OLD and NEW each accept what 'mcpdrift hash' accepts: a raw tools/list (prompts,
resources, resource templates) result, a JSON array of result pages, a bare array
of definitions, a JSON-RPC response wrapping one, an initialize result, a snapshot,
a directory of such files (read as one contract), or '-' for standard input.
Only the listings both sides carry are compared, and server-level members
(capabilities, instructions, versions) only when both sides carry them.

--format text prints a report for terminals, markdown one for pull-request
comments, json one object:
  {"severity": "breaking|warning|compatible|info|none",
   "summary": {"breaking": N, "warning": N, "compatible": N, "info": N},
   "changes": [{"rule", "severity", "subject", "name", "path", "before",
                "after", "message", "witness"}, ...]}
sarif prints a SARIF 2.1.0 log for code scanning, github GitHub Actions
workflow commands that annotate the compared files.

Each breaking or warning change to a tool's input or output schema gets a
witness: an arguments object (or result) the old schema accepts and the new
one rejects (for a loosening, the reverse), with the validator's reason; a
removed or renamed tool gets the smallest old call. --witness=false skips
them.

--policy picks a named policy: default, strict (warnings become breaking) or
lenient (a rejected extra argument is tolerated). --config reads a policy file,
YAML or JSON, in the shape documented in docs/diff.md (base, severities,
ignore); --policy, when given, replaces its base. --fail-on none never fails.

` + exitStatusHelp("diff"),
		Example: `  mcpdrift diff old/tools-list.json new/tools-list.json
  mcpdrift diff --fail-on warning --format markdown baseline.json snapshot.json
  mcpdrift diff --config drift-policy.yaml old/ new/`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageError("diff takes exactly two contracts, OLD and NEW (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			threshold, policy, err := rf.parse(cmd)
			if err != nil {
				return err
			}
			if args[0] == "-" && args[1] == "-" {
				return usageError("only one of OLD and NEW can be standard input")
			}
			k, err := parseKind(kind)
			if err != nil {
				return err
			}
			var docs [2]*contract.Document
			for i, arg := range args {
				if docs[i], err = readDocument(cmd.InOrStdin(), []string{arg}, contract.ReadOptions{Kind: k}); err != nil {
					return err
				}
			}
			report := contract.DiffDocuments(docs[0], docs[1], policy)
			if rf.witness {
				witness.Report(report, docs[0].Snapshot, docs[1].Snapshot)
			}
			loc := newLocator(args[0], args[1])
			if err := writeReport(cmd.OutOrStdout(), report, rf.format, loc); err != nil {
				return outputError(err)
			}
			if err := rf.writeOutputs(report, loc, func(string) string { return "" }); err != nil {
				return err
			}
			return gate(report, threshold)
		},
	}
	rf.register(cmd)
	cmd.Flags().StringVar(&kind, "kind", "", "kind of bare definition arrays: tool, prompt, resource, resource_template (default: guessed)")
	return cmd
}

// maxConfigBytes bounds a policy file.
const maxConfigBytes = 1 << 20

// loadPolicy builds the policy from --config and --policy (which, when
// given, replaces the file's base).
func loadPolicy(file, name string, nameSet bool) (*contract.Policy, error) {
	var cfg contract.PolicyConfig
	if file == "-" {
		return nil, usageError("--config must name a file")
	}
	if file != "" {
		b, err := readLimited(nil, file, maxConfigBytes)
		if err != nil {
			return nil, asUsage(err)
		}
		if cfg, err = parsePolicyConfig(b); err != nil {
			return nil, usageError("%s: %v", file, err)
		}
	}
	if nameSet || cfg.Base == "" {
		cfg.Base = name
	}
	p, err := contract.NewPolicy(cfg)
	if err != nil {
		if file != "" {
			return nil, usageError("%s: %v", file, err)
		}
		return nil, usageError("%v", err)
	}
	return p, nil
}

// parsePolicyConfig reads a policy from YAML or JSON (JSON is YAML), refusing
// unknown fields so that a typo is an error rather than a silently ignored
// setting.
func parsePolicyConfig(b []byte) (contract.PolicyConfig, error) {
	var cfg contract.PolicyConfig
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return cfg, err
	}
	return cfg, nil
}

// asUsage turns an input error into a usage error: a policy file is part of
// the command line, not an input.
func asUsage(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return &exitError{code: exitUsage, err: ee.err}
	}
	return &exitError{code: exitUsage, err: err}
}

// gate fails (exitDrift) when a change reaches the --fail-on threshold.
func gate(r *contract.Report, threshold contract.Severity) error {
	if threshold != contract.None && r.Worst() >= threshold {
		return &exitError{code: exitDrift, err: fmt.Errorf("drift at or above %s: %s", threshold, r.Summary().String())}
	}
	return nil
}

// reportFlags are the output and gating flags diff and check share.
type reportFlags struct {
	format, policyName, configFile, failOn string
	witness                                bool
	outputs                                []string
}

func (f *reportFlags) register(cmd *cobra.Command) {
	f.registerOutput(cmd)
	cmd.Flags().StringArrayVar(&f.outputs, "output", nil, "also write the report as FORMAT=FILE (repeatable), e.g. markdown=drift.md sarif=drift.sarif: one comparison, several renderings")
	cmd.Flags().StringVar(&f.failOn, "fail-on", "breaking", "exit 1 (drift) when a change is at least: breaking, warning, compatible, info, or none (never)")
}

// registerOutput registers the format, witness and policy flags only, for
// commands that do not gate (approve).
func (f *reportFlags) registerOutput(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.format, "format", "text", "output format: text, json, markdown, sarif (SARIF 2.1.0 for code scanning) or github (workflow-command annotations)")
	cmd.Flags().BoolVar(&f.witness, "witness", true, "show each breaking or warning schema change by example: a value one version accepts and the other rejects (--witness=false skips them)")
	cmd.Flags().StringVar(&f.policyName, "policy", contract.PolicyDefault, "named policy: default, strict or lenient")
	cmd.Flags().StringVar(&f.configFile, "config", "", "policy file (YAML or JSON): base, severities, ignore")
	f.failOn = "none"
}

// parse validates the flags and returns the threshold and the policy.
func (f *reportFlags) parse(cmd *cobra.Command) (contract.Severity, *contract.Policy, error) {
	if !slices.Contains(render.Formats, f.format) {
		return 0, nil, usageError("--format must be one of %s, not %q", strings.Join(render.Formats, ", "), f.format)
	}
	for _, o := range f.outputs {
		format, file, ok := strings.Cut(o, "=")
		if !ok || file == "" || !slices.Contains(render.Formats, format) {
			return 0, nil, usageError("--output wants FORMAT=FILE with FORMAT one of %s, not %q", strings.Join(render.Formats, ", "), o)
		}
	}
	threshold, err := contract.ParseSeverity(f.failOn)
	if err != nil {
		return 0, nil, usageError("--fail-on: %v", err)
	}
	policy, err := loadPolicy(f.configFile, f.policyName, cmd.Flags().Changed("policy"))
	return threshold, policy, err
}

// writeOutputs writes the report to each --output FORMAT=FILE.
func (f *reportFlags) writeOutputs(r *contract.Report, loc *locator, head func(format string) string) error {
	for _, o := range f.outputs {
		format, file, _ := strings.Cut(o, "=")
		var b bytes.Buffer
		b.WriteString(head(format))
		if err := writeReport(&b, r, format, loc); err != nil {
			return err
		}
		if err := writeFileAtomic(file, b.Bytes()); err != nil {
			return outputError(fmt.Errorf("--output %s: %w", o, err))
		}
	}
	return nil
}

// writeReport writes a report in a format; loc places changes in files
// for the sarif and github formats.
func writeReport(w io.Writer, r *contract.Report, format string, loc *locator) error {
	f, err := render.New(format, loc, version.Version())
	if err != nil {
		return err
	}
	return f.Format(w, r)
}
