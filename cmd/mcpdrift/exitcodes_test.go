package main

import (
	"errors"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
)

var updateREADME = flag.Bool("update", false, "rewrite the exit status table in README.md")

const (
	readmeFile     = "../../README.md"
	exitCodesBegin = "<!-- exit codes: rendered from cmd/mcpdrift/exitcodes.go; go test ./cmd/mcpdrift -run TestExitCodesREADME -update -->\n"
	exitCodesEnd   = "<!-- end of exit codes -->"
)

// The README's table is the code's table.
func TestExitCodesREADME(t *testing.T) {
	b, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, exitCodesBegin), strings.Index(readme, exitCodesEnd)
	if i < 0 || j < i {
		t.Fatalf("%s: no table between %q and %q", readmeFile, exitCodesBegin, exitCodesEnd)
	}
	got, want := readme[i+len(exitCodesBegin):j], exitCodesMarkdown()
	if got == want {
		return
	}
	if *updateREADME {
		if err := os.WriteFile(readmeFile, []byte(readme[:i+len(exitCodesBegin)]+want+readme[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the exit status table in %s is out of date (go test ./cmd/mcpdrift -run TestExitCodesREADME -update); want:\n%s", readmeFile, want)
}

// Every command's help ends with the rows of the table that apply to it,
// and the table names only commands that exist.
func TestExitCodesInHelp(t *testing.T) {
	root := newRootCommand()
	names := []string{""}
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	for _, name := range names {
		args := []string{"--help"}
		if name != "" {
			args = []string{name, "--help"}
		}
		code, out, _ := runCLI(args...)
		if code != exitOK || !strings.Contains(out, exitStatusHelp(name)) {
			t.Errorf("mcpdrift %s --help: exit %d, no exit status table:\n%s", name, code, out)
		}
	}
	for i, c := range exitCodes {
		if c.code != i {
			t.Errorf("row %d has code %d: codes are 0, 1, 2, … in order", i, c.code)
		}
		for _, cmd := range c.commands {
			if !slices.Contains(names, cmd) {
				t.Errorf("exit %d names %q, which is not a command", c.code, cmd)
			}
		}
	}
}

// The root help's table keeps every name apart from its meaning and fits
// 80 columns (it printed "unreachablethe" when a name outgrew the column).
func TestExitStatusHelpColumns(t *testing.T) {
	help := exitStatusHelp("")
	for _, c := range exitCodes {
		if !strings.Contains(help, c.name+"  ") {
			t.Errorf("exit %d: %q runs into its meaning:\n%s", c.code, c.name, help)
		}
	}
	for _, line := range strings.Split(help, "\n") {
		if len(line) > 80 {
			t.Errorf("line over 80 columns: %q", line)
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A result that cannot be written is neither drift nor bad input.
func TestExitOutput(t *testing.T) {
	f := writeFile(t, t.TempDir(), "tools.json", `{"tools":[{"name":"a"}]}`)
	var stderr strings.Builder
	if code := run([]string{"hash", f}, strings.NewReader(""), failingWriter{}, &stderr); code != exitOutput || !strings.Contains(stderr.String(), "disk full") {
		t.Errorf("hash to a failing stdout: exit %d, %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"diff", f, f}, strings.NewReader(""), failingWriter{}, &stderr); code != exitOutput {
		t.Errorf("diff to a failing stdout: exit %d, %s", code, stderr.String())
	}
}
