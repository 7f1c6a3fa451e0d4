// Package action tests the GitHub Action (action.yml at the repository
// root) by running its script as the runner would, with GITHUB_OUTPUT and
// GITHUB_STEP_SUMMARY in temporary files, against the quickstart's demo
// server.
package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcpdrift/mcpdrift/dev/procs"
	"github.com/mcpdrift/mcpdrift/dev/testbin"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

var root = testservers.RepoRoot()

// build builds a command of this module (once per test run).
func build(t *testing.T, pkg string) string {
	t.Helper()
	return testbin.Build(t, "action", "./"+pkg)
}

// demoServer starts the quickstart server on a free port with a contract
// (v1 or v2) and returns its URL.
func demoServer(t *testing.T, bin, contract string) string {
	t.Helper()
	ports, err := procs.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	p, err := procs.Start("demo-"+contract, bin, []string{"-listen", addr, "-start", contract}, nil, filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(5 * time.Second) })
	url := "http://" + addr + "/mcp"
	if err := p.WaitHTTP(context.Background(), url, 30*time.Second, func(int) bool { return true }); err != nil {
		t.Fatal(err)
	}
	return url
}

type run struct {
	status          int
	stdout, output  string
	summary, stderr string
}

// runAction runs scripts/action/check.sh with the inputs as the action
// maps them.
func runAction(t *testing.T, env map[string]string) run {
	t.Helper()
	tmp := t.TempDir()
	out, summary := filepath.Join(tmp, "output"), filepath.Join(tmp, "summary")
	cmd := exec.Command(filepath.Join(root, "scripts", "action", "check.sh"))
	cmd.Env = append(os.Environ(), "GITHUB_OUTPUT="+out, "GITHUB_STEP_SUMMARY="+summary, "RUNNER_TEMP="+tmp, "ACTION_PATH="+root)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := run{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.status = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	o, _ := os.ReadFile(out)
	s, _ := os.ReadFile(summary)
	r.output, r.summary = string(o), string(s)
	return r
}

// outputs parses GITHUB_OUTPUT: name=value lines and name<<DELIM blocks.
func outputs(t *testing.T, text string) map[string]string {
	t.Helper()
	m := map[string]string{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if name, delim, ok := strings.Cut(lines[i], "<<"); ok {
			var block []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				block = append(block, lines[i])
			}
			if i == len(lines) {
				t.Fatalf("unterminated %s block", name)
			}
			m[name] = strings.Join(block, "\n")
			continue
		}
		if name, value, ok := strings.Cut(lines[i], "="); ok {
			m[name] = value
		}
	}
	return m
}

// TestActionAgainstTheDemoServer: the quickstart server's v2 adds a
// required parameter: with fail-on breaking the job fails, the change is
// an error annotation on the lock's line of create_ticket, the outputs hold
// the severity, the Markdown report (with the witness) and a SARIF file,
// and the job summary holds the report. fail-on none passes; a policy file
// that makes the change a warning passes with severity warning.
func TestActionAgainstTheDemoServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cli, server := build(t, "cmd/mcpdrift"), build(t, "examples/quickstart/server")
	lock := filepath.Join(dir, "mcp.lock.json")
	if b, err := exec.Command(cli, "snapshot", "--url", demoServer(t, server, "v1"), "-o", lock).CombinedOutput(); err != nil {
		t.Fatalf("snapshot: %v\n%s", err, b)
	}
	v2 := demoServer(t, server, "v2")

	// The CLI is built from the action's checkout, as on a runner.
	r := runAction(t, map[string]string{"INPUT_TARGET": v2, "INPUT_LOCK": lock, "INPUT_FAIL_ON": "breaking"})
	if r.status != 1 {
		t.Fatalf("exit %d\n%s\n%s", r.status, r.stdout, r.stderr)
	}
	line := lockLine(t, lock, "create_ticket")
	want := fmt.Sprintf("::error title=MCP breaking change%%3A input.property.added_required,file=%s,line=%d::tool create_ticket: agents calling create_ticket without project will now get a validation error", lock, line)
	if !strings.Contains(r.stdout, want) {
		t.Errorf("no annotation %q in\n%s", want, r.stdout)
	}
	out := outputs(t, r.output)
	if out["severity"] != "breaking" || !strings.Contains(out["report"], "### MCP contract drift: breaking") ||
		!regexp.MustCompile("`input.property.added_required` \\| arguments `\\{[^`]*\\}` \\| `valid` \\| `missing property 'project'`").MatchString(out["report"]) {
		t.Errorf("outputs: %v", out)
	}
	if r.summary != out["report"]+"\n" && r.summary != out["report"] {
		t.Errorf("summary differs from the report:\n%s\n---\n%s", r.summary, out["report"])
	}
	var sarif struct {
		Version string
		Runs    []struct{ Results []struct{ RuleID string } }
	}
	b, err := os.ReadFile(out["sarif"])
	if err != nil || json.Unmarshal(b, &sarif) != nil || sarif.Version != "2.1.0" || len(sarif.Runs[0].Results) == 0 {
		t.Errorf("sarif %s: %v %s", out["sarif"], err, b)
	}

	r = runAction(t, map[string]string{"MCPDRIFT_BIN": cli, "INPUT_TARGET": v2, "INPUT_LOCK": lock, "INPUT_FAIL_ON": "none"})
	if r.status != 0 || outputs(t, r.output)["severity"] != "breaking" {
		t.Errorf("fail-on none: exit %d %v\n%s", r.status, outputs(t, r.output), r.stderr)
	}

	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("severities:\n  input.property.added_required: warning\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runAction(t, map[string]string{"MCPDRIFT_BIN": cli, "INPUT_TARGET": v2, "INPUT_LOCK": lock, "INPUT_POLICY": policy})
	if r.status != 0 || outputs(t, r.output)["severity"] != "warning" {
		t.Errorf("policy file: exit %d %v\n%s", r.status, outputs(t, r.output), r.stderr)
	}

	// A server that cannot be reached: the probe fails, the job fails, the
	// outputs still say so; exit 4, the CLI's "probe" status.
	r = runAction(t, map[string]string{"MCPDRIFT_BIN": cli, "INPUT_TARGET": "http://127.0.0.1:1/mcp", "INPUT_LOCK": lock})
	if r.status != 4 || outputs(t, r.output)["severity"] != "none" || !strings.Contains(r.summary, "could not check") {
		t.Errorf("unreachable: exit %d %v %q", r.status, outputs(t, r.output), r.summary)
	}
}

// TestActionStdioTarget: a target that is not a URL is a stdio command line.
func TestActionStdioTarget(t *testing.T) {
	t.Parallel()
	node := testservers.Node(t)
	v1, v2 := testservers.Everything(t, "2025.9.25"), testservers.Everything(t, "2025.11.25")
	dir := t.TempDir()
	cli := build(t, "cmd/mcpdrift")
	lock := filepath.Join(dir, "mcp.lock.json")
	if b, err := exec.Command(cli, "snapshot", "-o", lock, "--stdio", "--", node, v1, "stdio").CombinedOutput(); err != nil {
		t.Fatalf("snapshot: %v\n%s", err, b)
	}
	r := runAction(t, map[string]string{"MCPDRIFT_BIN": cli, "INPUT_TARGET": node + " " + v2 + " stdio", "INPUT_LOCK": lock, "INPUT_FAIL_ON": "warning"})
	if r.status != 1 || outputs(t, r.output)["severity"] != "warning" || !strings.Contains(r.stdout, "::warning title=MCP warning change%3A tool.description.changed") {
		t.Errorf("exit %d %v\n%s\n%s", r.status, outputs(t, r.output), r.stdout, r.stderr)
	}
}

// lockLine is the line of `"name": "tool"` in the lock.
func lockLine(t *testing.T, lock, tool string) int {
	t.Helper()
	b, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(`"name": "`+tool+`"`))
	if i < 0 {
		t.Fatalf("%s not in the lock", tool)
	}
	return bytes.Count(b[:i], []byte("\n")) + 1
}

// TestActionManifest: every input of action.yml reaches the script as
// INPUT_<NAME>, which the script reads, and every output is one the
// script writes; the script is what the step runs.
func TestActionManifest(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Inputs  map[string]struct{ Required bool }
		Outputs map[string]struct{ Value string }
		Runs    struct {
			Using string
			Steps []struct {
				ID, Run, Uses string
				Env           map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(root, "scripts", "action", "check.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Runs.Using != "composite" {
		t.Errorf("using %q", a.Runs.Using)
	}
	var step *struct {
		ID, Run, Uses string
		Env           map[string]string
	}
	for i := range a.Runs.Steps {
		if a.Runs.Steps[i].ID == "check" {
			step = &a.Runs.Steps[i]
		}
	}
	if step == nil || !strings.Contains(step.Run, "scripts/action/check.sh") {
		t.Fatalf("no check step running the script: %+v", a.Runs.Steps)
	}
	for name := range a.Inputs {
		env := "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		if step.Env[env] != "${{ inputs."+name+" }}" || !strings.Contains(string(script), env) {
			t.Errorf("input %s does not reach the script as %s", name, env)
		}
	}
	for name, o := range a.Outputs {
		if o.Value != "${{ steps.check.outputs."+name+" }}" || !regexp.MustCompile(`echo "`+name+`(=|<<)`).Match(script) {
			t.Errorf("output %s is not written by the script", name)
		}
	}
}
