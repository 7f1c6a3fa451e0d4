package testservers

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sdkInstall is the pinned npm install that holds @modelcontextprotocol/sdk
// (1.32.2) as a direct dependency; the Node agent runs on it.
const sdkInstall = "traceloop-mcp-0.27"

// NodeAgent returns the command line of the Node agent
// (testdata/nodeagent/agent.cjs: an MCP client on the official TypeScript
// SDK that lists tools and calls them, printing JSON lines) and the
// environment it runs in (the process's, with NODE_PATH set to the pinned
// SDK). Append its options, "--" and the server's command line. It skips
// loudly without node and npm, and installs the SDK when needed.
func NodeAgent(t testing.TB) (argv, env []string) {
	t.Helper()
	pkg := NPMPackage(t, sdkInstall, filepath.Join("@modelcontextprotocol", "sdk", "package.json"))
	modules := strings.TrimSuffix(pkg, string(filepath.Separator)+filepath.Join("@modelcontextprotocol", "sdk", "package.json"))
	script := filepath.Join(RepoRoot(), "testdata", "nodeagent", "agent.cjs")
	return []string{Node(t), script}, append(os.Environ(), "NODE_PATH="+modules)
}

// StartPiped starts the agent's cmd with its stdin and stdout as pipes, the
// output read line by line (lines up to 16 MiB): how a test drives it one
// step at a time with --stdin.
func StartPiped(t testing.TB, cmd *exec.Cmd) (io.WriteCloser, *bufio.Scanner) {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	lines.Buffer(make([]byte, 0, 1<<20), 16<<20)
	return in, lines
}
