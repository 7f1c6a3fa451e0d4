package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// --upstream-env names the variable that holds the URL (what wrap writes
// for a URL with credentials in it); a missing variable or both flags are
// usage errors that never print the URL.
func TestProxyUpstreamEnv(t *testing.T) {
	t.Setenv("MCPDRIFT_TEST_UPSTREAM", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "--upstream-env", "MCPDRIFT_TEST_UNSET_UPSTREAM"}, "MCPDRIFT_TEST_UNSET_UPSTREAM is not set"},
		{[]string{"proxy", "--upstream-env", "MCPDRIFT_TEST_UPSTREAM"}, "MCPDRIFT_TEST_UPSTREAM is not set"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--upstream-env", "MCPDRIFT_TEST_UPSTREAM"}, "exclusive"},
	} {
		code, _, errOut := cli(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d %q", tc.args, code, errOut)
		}
	}
}

// --oauth through the CLI, against the TypeScript SDK's OAuth example
// server: the agent's initialize waits while the user is shown the
// authorization URL on stderr (no browser here), consents, and the
// session goes on; the token lands in --oauth-store.
func TestProxyOAuth(t *testing.T) {
	upstream := testservers.SDKOAuthServer(t)
	store := filepath.Join(t.TempDir(), "tokens")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"proxy", "--oauth", "--oauth-no-browser", "--oauth-store", store, "--upstream", upstream}, inR, outW, errW)
		outW.Close()
		errW.Close()
	}()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errR)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "http://localhost:") && strings.Contains(line, "/authorize?") {
				urls <- line
			}
		}
	}()
	go func() {
		select {
		case u := <-urls:
			if res, err := http.Get(u); err == nil { // consent, and the redirect to the proxy
				res.Body.Close()
			}
		case <-time.After(60 * time.Second):
		}
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "cli-agent", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("initialize through the proxy: %v", err)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "cli"}}); err != nil {
		t.Errorf("tools/call: %v", err)
	}
	cs.Close()
	if code := <-done; code != exitOK {
		t.Errorf("exit %d", code)
	}
	if files, _ := filepath.Glob(filepath.Join(store, "*.json")); len(files) != 1 {
		t.Errorf("token files %v, want one", files)
	}
}

// --oauth's flags are checked before anything starts.
func TestProxyOAuthUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "--oauth", "--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1/mcp"}, "--oauth is for stdio -> HTTP"},
		{[]string{"proxy", "--oauth", "--upstream", "http://127.0.0.1:1/mcp", "--oauth-client-secret-env", "MCPDRIFT_TEST_UNSET_SECRET"}, "MCPDRIFT_TEST_UNSET_SECRET is not set"},
		{[]string{"proxy", "--oauth", "--upstream", "http://127.0.0.1:1/mcp", "--oauth-redirect-port", "70000"}, "must be a port number"},
	} {
		code, _, errOut := cli(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d %q", tc.args, code, errOut)
		}
	}
}

// The server's command line as flags (what wrap writes): arguments a host
// appends after them are not the server's; they are dropped with a warning,
// and the server answers.
func TestProxyServerCommandFlags(t *testing.T) {
	node, server := testservers.Node(t), testservers.Everything(t, "2026.1.26")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"proxy", "--server-name", "everything", "--server-command", node, "--server-arg=" + server, "--server-arg=stdio", "appended", "by-the-host"}, inR, outW, &stderr)
		outW.Close()
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("initialize through the proxy: %v", err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "flags"}})
	if err != nil || res.IsError {
		t.Errorf("tools/call: %v %+v", err, res)
	}
	cs.Close()
	<-done
	if !strings.Contains(stderr.String(), "mcpdrift proxy: ignoring 2 argument(s) after the flags") {
		t.Errorf("stderr: %s", stderr.String())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "--server-arg=x"}, "--server-arg needs --server-command"},
		{[]string{"proxy", "--server-command", "x", "--", "y"}, "exclusive"},
		{[]string{"proxy", "--bearer-token-env", "MCPDRIFT_TEST_UNSET_TOKEN", "--upstream", "http://127.0.0.1:1/mcp"}, "MCPDRIFT_TEST_UNSET_TOKEN is not set"},
	} {
		code, _, errOut := cli(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d %q", tc.args, code, errOut)
		}
	}
}

// proxy --help lists its flags by mode, each once, within 100 columns
// (it was one list of 23 flags, 24 of its 68 lines wider than that).
func TestProxyHelpGroupedByMode(t *testing.T) {
	code, out, _ := runCLI("proxy", "--help")
	if code != exitOK {
		t.Fatalf("proxy --help: exit %d\n%s", code, out)
	}
	for i, line := range strings.Split(out, "\n") {
		if len(line) > helpWidth {
			t.Errorf("line %d is %d columns: %q", i+1, len(line), line)
		}
	}
	for _, heading := range []string{"stdio -> stdio:", "stdio -> HTTP only:", "HTTP -> HTTP only:", "Every mode: the gate:", "Other flags:"} {
		if !strings.Contains(out, "\n"+heading+"\n") {
			t.Errorf("no %q heading:\n%s", heading, out)
		}
	}
	newProxyCommand().Flags().VisitAll(func(f *pflag.Flag) {
		listed := regexp.MustCompile(`(?m)^\s+(-\w, )?--` + regexp.QuoteMeta(f.Name) + `[ =]`)
		flags := out[strings.Index(out, "\nstdio -> stdio:\n"):]
		if n := len(listed.FindAllString(flags, -1)); n != 1 {
			t.Errorf("--%s is listed %d times", f.Name, n)
		}
		if g := f.Annotations[flagGroupKey]; f.Name != "help" && len(g) != 1 {
			t.Errorf("--%s has no group", f.Name)
		}
	})
}
