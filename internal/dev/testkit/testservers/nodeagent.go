package testservers

import (
	"os"
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
