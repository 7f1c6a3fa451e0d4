package docscheck

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/procs"
	"github.com/mcpdrift/mcpdrift/dev/quickstart"
	"github.com/mcpdrift/mcpdrift/dev/testbin"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/semconv"
)

var update = flag.Bool("update", false, "rewrite the docs' <!-- output: --> blocks from real runs")

// A block of command output in README.md or docs/*.md is marked with the
// command that produced it:
//
//	<!-- output: mcpdrift check --lock mcp.lock.json --url http://127.0.0.1:18082/mcp -->
//
// and "(excerpt)" after the command when it shows only some consecutive lines
// of the output. TestCommandOutputs runs the command for real and compares.
// The URLs and files the commands name are the scenes below: demoV2URL is the
// quickstart's demo server serving v2, mcp.lock.json the lock `mcpdrift
// snapshot` wrote from its v1; paths are relative to the repository root.
// The control-plane commands (status, history, impact) ask the quickstart's
// collector after its server changed under two agents (stack); a proxy
// command is the result of a stale call through it (proxyRefusal).
const demoV2URL = "http://127.0.0.1:18082/mcp"

// demoCommand marks the summary `make demo` prints (not its progress lines
// before it nor its hints after), taken from the quickstart scene's run.
var demoCommand = []string{"make", "demo"}

// stackServerURL is how the docs write the quickstart server's URL.
const stackServerURL = "http://127.0.0.1:18081/mcp"

// controlPlane are the commands that ask the collector's control plane.
var controlPlane = []string{"status", "history", "impact"}

const outputPrefix = "output: "

// outputCommand is a marked output block's command and whether the block
// is an excerpt.
func outputCommand(marker string) (args []string, excerpt, ok bool) {
	cmd, ok := strings.CutPrefix(marker, outputPrefix)
	if !ok {
		return nil, false, false
	}
	cmd, excerpt = strings.CutSuffix(cmd, " (excerpt)")
	return strings.Fields(cmd), excerpt, true
}

// scene holds what the commands run against, set up on first use.
type scene struct {
	owner   *testing.T // the scene lives until its test ends
	dir     string
	gateDir string            // mcp.lock.json of the demo server's v1
	v2URL   string            // the demo server serving v2
	stack   *quickstart.Stack // the quickstart after the drift
}

// build builds a main package of the root module once per run.
func (s *scene) build(t *testing.T, pkg string) string {
	t.Helper()
	return testbin.Build(t, "docscheck", pkg)
}

// demoServer starts the quickstart's demo server on a free port, serving
// contract version (v1 or v2; SIGUSR1 switches v1 to v2), until the test ends.
func (s *scene) demoServer(t *testing.T, version string) (string, *procs.Proc) {
	t.Helper()
	bin := s.build(t, "./examples/quickstart/server")
	ports, err := procs.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", ports[0])
	log := filepath.Join(s.dir, "server-"+version+".log")
	p, err := procs.Start("demo server "+version, bin, []string{"-listen", fmt.Sprintf("127.0.0.1:%d", ports[0]), "-start", version}, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	s.owner.Cleanup(func() { p.Stop(10 * time.Second) })
	if err := p.WaitHTTP(context.Background(), url, time.Minute, func(int) bool { return true }); err != nil {
		t.Fatalf("demo server %s: %v (see %s)", version, err, log)
	}
	return url, p
}

// gate is the release gate's scene: a lock of v1, the server at v2.
func (s *scene) gate(t *testing.T) {
	if s.gateDir != "" {
		return
	}
	s.gateDir = filepath.Join(s.dir, "gate")
	if err := os.MkdirAll(s.gateDir, 0o755); err != nil {
		t.Fatal(err)
	}
	v1, _ := s.demoServer(t, "v1")
	s.run(t, s.gateDir, nil, "mcpdrift", "snapshot", "--url", v1, "-o", "mcp.lock.json")
	s.v2URL, _ = s.demoServer(t, "v2")
}

// quickstart is the control plane's scene: the quickstart's collector, its
// demo server switched from v1 to v2 while two agents called it from three
// sessions each, the drift confirmed and its impact recorded, the agents
// stopped.
func (s *scene) quickstart(t *testing.T) {
	t.Helper()
	if s.stack != nil {
		return
	}
	config, err := filepath.Abs(filepath.Join(root, "examples", "quickstart", "collector.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The demo's agents, whose sessions keep their old plans past the
	// drift's confirmation: the stale calls.
	o := quickstart.Demo()
	o.Dir, o.Collector, o.Config = s.quickstartDir(), distribution(t), config
	o.Server, o.Agent = s.build(t, "./examples/quickstart/server"), s.build(t, "./examples/agent")
	st, err := quickstart.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	s.owner.Cleanup(st.Stop)
	s.stack = st
	wait := func(what string, cond func(*quickstart.Outputs) bool) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			out, err := quickstart.ReadOutputs(o.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if cond(out) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("quickstart: no %s after 90s (logs in %s)", what, o.Dir)
			}
			time.Sleep(200 * time.Millisecond) // polling the outputs, not waiting for time
		}
	}
	wait("calls to v1 and a baseline", func(out *quickstart.Outputs) bool {
		return len(out.ToolCalls()) >= 30 && len(out.Events(semconv.EventSnapshot)) >= 1
	})
	if err := st.SwitchServer(); err != nil {
		t.Fatal(err)
	}
	wait("drift with the impact on both agents and a stale call", func(out *quickstart.Outputs) bool {
		agents := map[string]bool{}
		for _, e := range out.Events(semconv.EventImpact) {
			if e.Attr(semconv.GenAIToolName) == "create_ticket" {
				agents[e.Attr(semconv.GenAIAgentName)] = true
			}
		}
		return len(out.Events(semconv.EventDrift)) == 1 && len(agents) == 2 &&
			slices.ContainsFunc(out.ToolCalls(), func(sp quickstart.Span) bool { return sp.Attr(semconv.ToolStale) == "true" })
	})
	// The sessions replan after ReplanAfter calls: let some recover, as the
	// docs tell.
	wait("sessions recovered from the change", func(out *quickstart.Outputs) bool {
		impacts, err := quickstart.Summarize(out).ControlPlaneImpact(context.Background(), st.APIURL())
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(impacts, func(im apiwire.Impact) bool {
			r := im.Totals.Recovery
			return im.Tool == "create_ticket" && r != nil && r.Recovered >= 2
		})
	})
	st.StopAgent()
}

func (s *scene) quickstartDir() string { return filepath.Join(s.dir, "quickstart") }

// demoSummary is what `make demo` prints once the drift is in
// (quickstart.Summary.Report), of the quickstart scene's run: the same
// server, collector configuration and agents as the demo's, run on until
// some sessions recovered.
func (s *scene) demoSummary(t *testing.T) string {
	t.Helper()
	s.quickstart(t)
	out, err := quickstart.ReadOutputs(s.quickstartDir())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	quickstart.Summarize(out).Report(context.Background(), &b, s.stack.APIURL())
	return strings.TrimLeft(b.String(), "\n") // the block starts at the first heading
}

// run runs the CLI and returns what it wrote to stdout. A non-zero exit with
// an answer is an answer (check exits 1 on breaking drift); without one it
// fails the test.
func (s *scene) run(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	bin := s.build(t, "./cmd/mcpdrift") // before the clock starts: a cold build is slow
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args[1:]...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil && stdout.Len() == 0 {
		t.Fatalf("%s: %v, no output\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// produce runs a marked command in its scene and returns its output, with
// the scene's URLs written as the docs write them.
func (s *scene) produce(t *testing.T, args []string) string {
	t.Helper()
	if slices.Equal(args, demoCommand) {
		return s.demoSummary(t)
	}
	if args[0] == jaegerCommand {
		return s.jaegerAnswer(t, args)
	}
	if len(args) < 2 || args[0] != "mcpdrift" {
		t.Fatalf("%q: only mcpdrift commands, %q and Jaeger's answers are run", strings.Join(args, " "), strings.Join(demoCommand, " "))
	}
	if args[1] == "proxy" {
		return s.proxyRefusal(t, args)
	}
	dir := root
	var env []string
	args = slices.Clone(args)
	if slices.Contains(controlPlane, args[1]) {
		s.quickstart(t)
		env = append(env, "MCPDRIFT_API="+s.stack.APIURL())
	}
	if slices.Contains(args, demoV2URL) {
		s.gate(t)
		dir = s.gateDir
		for i, a := range args {
			if a == demoV2URL {
				args[i] = s.v2URL
			}
		}
	}
	out := s.run(t, dir, env, args...)
	if s.v2URL != "" {
		out = strings.ReplaceAll(out, s.v2URL, demoV2URL)
	}
	if s.stack != nil {
		out = strings.ReplaceAll(out, s.stack.ServerURL(), stackServerURL)
	}
	return out
}

// What differs from one run of the quickstart to the next, masked alike in
// the shown and the real output of a control-plane command: times, drift
// ids, counts and durations, the recovery times (present only when a session
// recovered), and so the columns' widths and the order of a table's rows.
var (
	maskTime     = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?Z?`)
	maskID       = regexp.MustCompile(`\b[0-9a-f]{16}\b`)
	maskRecovery = regexp.MustCompile(`; recovered in \S+ \(median\), \S+ \(longest\)`)
	maskNumber   = regexp.MustCompile(`\b\d+(\.\d+)?( ?(ms|s|h))?\b`)
	maskColumns  = regexp.MustCompile(`  +`)
)

// maskDigestsUsed is the demo summary's "digests used" column: which of
// stale, before, new, ahead and unknown a (tool, agent) used depends on when
// its calls fell around the change.
var maskDigestsUsed = regexp.MustCompile(`(stale|before|new|ahead|unknown) <n>(, (stale|before|new|ahead|unknown) <n>)*$`)

// maskDemo masks the demo's summary as mask does a control-plane command's
// output, and its digests-used column too.
func maskDemo(lines []string) []string {
	out := mask(lines)
	for i, l := range out {
		out[i] = maskDigestsUsed.ReplaceAllString(l, "<digests>")
	}
	return out
}

func mask(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		l = maskTime.ReplaceAllString(l, "<time>")
		l = maskID.ReplaceAllString(l, "<id>")
		l = maskRecovery.ReplaceAllString(l, "")
		l = maskNumber.ReplaceAllString(l, "<n>")
		out[i] = maskColumns.ReplaceAllString(l, "  ")
	}
	// Rows of a table (after its header) in a stable order.
	for i := 0; i < len(out); i++ {
		if !strings.Contains(out[i], "  ") || strings.ToUpper(out[i]) != out[i] {
			continue
		}
		j := i + 1
		for j < len(out) && strings.Contains(out[j], "  ") {
			j++
		}
		slices.Sort(out[i+1 : j])
		i = j - 1
	}
	return out
}

// tidy drops trailing blanks of lines, which a page does not keep.
func tidy(text string) []string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return lines
}

// excerptAt returns where want's lines run consecutively in got, or -1.
func excerptAt(got, want []string) int {
	for i := 0; i+len(want) <= len(got); i++ {
		if slices.Equal(got[i:i+len(want)], want) {
			return i
		}
	}
	return -1
}

// TestCommandOutputs runs every command whose output a page shows and
// compares the output with the block; -update rewrites the blocks.
func TestCommandOutputs(t *testing.T) {
	t.Parallel()
	s := &scene{owner: t, dir: t.TempDir()}
	updates := map[string]map[int]string{} // page → opening fence line → new body
	checked := 0
	rewrite := func(b block, body string) {
		if updates[b.page] == nil {
			updates[b.page] = map[int]string{}
		}
		updates[b.page][b.line] = body
	}
	for _, b := range allBlocks(t) {
		if args, subset, ok := jsonSource(b.marker); ok {
			checked++
			t.Run(b.where(), func(t *testing.T) {
				if body := checkJSONBlock(t, s, b, args, subset); body != "" && body != b.body {
					rewrite(b, body)
				}
			})
			continue
		}
		args, excerpt, ok := outputCommand(b.marker)
		if !ok {
			continue
		}
		checked++
		t.Run(b.where(), func(t *testing.T) {
			got := tidy(s.produce(t, args))
			want := tidy(b.body)
			compare := func(lines []string) []string { return lines }
			switch {
			case slices.Equal(args, demoCommand):
				compare = maskDemo
			case args[0] == jaegerCommand || slices.Contains(controlPlane, args[1]):
				compare = mask
			}
			if !*update {
				if excerpt && excerptAt(compare(got), compare(want)) < 0 || !excerpt && !slices.Equal(compare(got), compare(want)) {
					t.Errorf("%s shows output of %q that a run does not produce (go test ./dev/docscheck -run TestCommandOutputs -update rewrites it):\nshown:\n%s\nrun:\n%s",
						b.where(), strings.Join(args, " "), strings.Join(want, "\n"), strings.Join(got, "\n"))
				}
				return
			}
			// -update writes the run as it printed it, masks or not; of an
			// excerpt, as many lines from where the shown ones start.
			if excerpt {
				at := max(slices.Index(compare(got), compare(want)[0]), 0)
				got = got[at:min(at+len(want), len(got))]
			}
			if !slices.Equal(got, want) {
				rewrite(b, strings.Join(got, "\n")+"\n")
			}
		})
	}
	if checked == 0 {
		t.Error("no <!-- output: --> or <!-- json: --> block found: the scan is broken")
	}
	for page, bodies := range updates {
		path := filepath.Join(root, page)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, replaceBlocks(src, bodies), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %d output block(s) of %s", len(bodies), page)
	}
}

// outputLike are the first lines of blocks that show what a command
// printed: an unmarked one fails TestOutputBlocksMarked.
var outputLike = regexp.MustCompile(`^(mcpdrift( replay)?: |\s*tool \S+: |AGENT\s+SESSIONS|SERVER\s+STATUS|http://\S+ against )`)

// TestOutputBlocksMarked: a block that shows command output says which
// command produced it.
func TestOutputBlocksMarked(t *testing.T) {
	for _, b := range allBlocks(t) {
		if b.lang != "" && b.lang != "text" || b.marker != "" {
			continue
		}
		if first, _, _ := strings.Cut(b.body, "\n"); outputLike.MatchString(first) {
			t.Errorf("%s shows command output without saying which command produced it: mark it <!-- output: COMMAND -->", b.where())
		}
	}
}
