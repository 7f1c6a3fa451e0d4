package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/canon"
)

func newHashCommand() *cobra.Command {
	var format, kind string
	var single bool
	cmd := &cobra.Command{
		Use:   "hash [--format text|json] [--kind KIND] FILE...",
		Short: "Print the definition digests and set digest of a listing or snapshot",
		Long: `Print the "Tool definition hash, version 1" digest of every definition in FILE,
then the set digest of the whole listing.

FILE may be:
  - a raw tools/list (or prompts/list, resources/list, resources/templates/list)
    result: {"tools":[...], "nextCursor": ...}
  - a JSON array of such result pages
  - a bare JSON array of definitions (see --kind)
  - a JSON-RPC response wrapping any of these
  - an initialize or server/discover result (adds the instructions digest)
  - a snapshot written by 'mcpdrift snapshot'
  - a directory: every *.json file in it, read as pages of one contract
  - '-' for standard input
Several FILEs are read as pages of one contract.

Text output is one "name<TAB>digest" line per definition, sorted as the set digest
sorts them, then "set<TAB>digest". When the input has more than one kind of
definition, each kind starts with a "# tools" (prompts, resources,
resource_templates) line. Names are shown with control and invisible characters
escaped. JSON output is one object: {"tools": {"name": "digest"}, "tools_set":
"digest", ...}, plus prompts, resources, resource_templates and instructions when
the input has them; a name that two definitions share maps to an array.

With --definition, FILE is a single JSON value (any value, no name required):
text output is "digest<TAB>hex" then "canonical<TAB>..." (the RFC 8785 form that
was hashed), JSON output is {"digest": ..., "canonical": ...}. Use it to see why
two tools disagree on a digest.

` + exitStatusHelp("hash"),
		Example: `  mcpdrift hash testdata/fixtures/server-everything/2025.11.25/tools-list.json
  mcpdrift hash --format json snapshot.json
  curl -s ... | jq .result | mcpdrift hash -`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageError("--format must be text or json, not %q", format)
			}
			if single {
				return hashSingle(cmd, args, format)
			}
			k, err := parseKind(kind)
			if err != nil {
				return err
			}
			doc, err := readDocument(cmd.InOrStdin(), args, contract.ReadOptions{Kind: k})
			if err != nil {
				return err
			}
			if format == "json" {
				return outputError(writeHashJSON(cmd.OutOrStdout(), doc))
			}
			return outputError(writeHashText(cmd.OutOrStdout(), doc))
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	cmd.Flags().BoolVar(&single, "definition", false, "FILE is one JSON value: print its digest and canonical form (no name needed)")
	cmd.Flags().StringVar(&kind, "kind", "", "kind of a bare definition array: tool, prompt, resource, resource_template (default: guessed)")
	return cmd
}

func parseKind(s string) (contract.Kind, error) {
	if s == "" {
		return "", nil
	}
	for _, k := range contract.Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", usageError("--kind must be one of tool, prompt, resource, resource_template, not %q", s)
}

// readDocument reads FILE arguments (files, directories, "-") as one contract.
func readDocument(stdin io.Reader, args []string, opts contract.ReadOptions) (*contract.Document, error) {
	limit := opts.Limits
	if limit.MaxDocumentBytes == 0 {
		limit = contract.DefaultLimits()
	}
	var inputs [][]byte
	for _, arg := range args {
		files := []string{arg}
		if arg != "-" {
			info, err := os.Stat(arg)
			if err != nil {
				return nil, inputError(err)
			}
			if info.IsDir() {
				if files, err = filepath.Glob(filepath.Join(arg, "*.json")); err != nil || len(files) == 0 {
					return nil, inputError(fmt.Errorf("%s: no *.json files", arg))
				}
			}
		}
		for _, f := range files {
			b, err := readLimited(stdin, f, limit.MaxDocumentBytes)
			if err != nil {
				return nil, err
			}
			inputs = append(inputs, b)
		}
	}
	doc, err := contract.ReadDocument(opts, inputs...)
	if err != nil {
		return nil, inputError(fmt.Errorf("%s: %w", strings.Join(args, ", "), err))
	}
	return doc, nil
}

// readLimited reads a file (or stdin for "-") up to max bytes; more is an error.
func readLimited(stdin io.Reader, name string, max int) ([]byte, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, inputError(err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, inputError(fmt.Errorf("%s: %w", name, err))
	}
	if len(b) > max {
		return nil, inputError(fmt.Errorf("%s: %w: more than %d bytes", name, canon.ErrTooLarge, max))
	}
	return b, nil
}

// kindLabels are the plural names used in output, by kind.
var kindLabels = map[contract.Kind]string{
	contract.KindTool: "tools", contract.KindPrompt: "prompts",
	contract.KindResource: "resources", contract.KindResourceTemplate: "resource_templates",
}

func presentKinds(doc *contract.Document) []contract.Kind {
	var kinds []contract.Kind
	for _, k := range contract.Kinds {
		if doc.Present[k] {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

func writeHashText(w io.Writer, doc *contract.Document) error {
	kinds := presentKinds(doc)
	var b strings.Builder
	for _, k := range kinds {
		if len(kinds) > 1 {
			fmt.Fprintf(&b, "# %s\n", kindLabels[k])
		}
		l := doc.Snapshot.Listing(k)
		for _, d := range l {
			fmt.Fprintf(&b, "%s\t%s\n", contract.SanitizeText(d.Key), d.Digest)
		}
		fmt.Fprintf(&b, "set\t%s\n", l.SetDigest())
	}
	if doc.HasInstructions && doc.Snapshot.Digests.Instructions != nil {
		fmt.Fprintf(&b, "instructions\t%s\n", *doc.Snapshot.Digests.Instructions)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeHashJSON(w io.Writer, doc *contract.Document) error {
	out := map[string]any{}
	for _, k := range presentKinds(doc) {
		l := doc.Snapshot.Listing(k)
		out[kindLabels[k]] = digestsByName(l)
		out[kindLabels[k]+"_set"] = l.SetDigest()
	}
	if doc.HasInstructions {
		out["instructions"] = doc.Snapshot.Digests.Instructions
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// digestsByName is {"name": "digest"} in listing order; a name that several
// definitions share maps to an array. Names are written exactly (an unpaired
// surrogate as its \u escape), so names that differ only there stay apart.
func digestsByName(l contract.Listing) json.RawMessage {
	b := []byte{'{'}
	for i := 0; i < len(l); {
		j := i + 1
		for j < len(l) && l[j].Key == l[i].Key {
			j++
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = canon.AppendJSONKey(b, l[i].Key)
		b = append(b, ':')
		if j-i > 1 {
			b = append(b, '[')
		}
		for n, d := range l[i:j] {
			if n > 0 {
				b = append(b, ',')
			}
			b = canon.AppendJSONKey(b, d.Digest)
		}
		if j-i > 1 {
			b = append(b, ']')
		}
		i = j
	}
	return append(b, '}')
}

// hashSingle prints the digest and canonical form of one JSON value.
func hashSingle(cmd *cobra.Command, args []string, format string) error {
	if len(args) != 1 {
		return usageError("--definition takes exactly one FILE")
	}
	raw, err := readLimited(cmd.InOrStdin(), args[0], contract.DefaultMaxDocumentBytes)
	if err != nil {
		return err
	}
	canonical, err := contract.DefaultLimits().Canon().Canonicalize(nil, raw)
	if err != nil {
		return inputError(fmt.Errorf("%s: %w", args[0], err))
	}
	digest := canon.HashBytes(canonical)
	if format == "json" {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetEscapeHTML(false)
		return outputError(enc.Encode(map[string]string{"digest": digest, "canonical": string(canonical)}))
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "digest\t%s\ncanonical\t%s\n", digest, contract.SanitizeText(string(canonical)))
	return outputError(err)
}
