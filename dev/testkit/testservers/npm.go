// Package testservers locates the real npm MCP servers that tests run. They
// are installed at pinned versions by scripts/install-npm-servers.sh (which
// .ci/run calls) into a cache shared by every checkout, a directory per
// lockfile (the script says which). Tests that need one call Everything; when
// npm is absent it skips the test and says so loudly, and when npm is present
// but the server is not installed yet it installs it.
package testservers

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Versions of @modelcontextprotocol/server-everything with a pinned install
// (testdata/npm) and, for most, a captured contract (testdata/fixtures).
var EverythingVersions = []string{"2025.7.1", "2025.9.25", "2025.11.25", "2026.1.26"}

// RepoRoot returns the repository's root: the nearest directory above the
// test's working directory (its package) that holds go.work. It does not ask
// runtime.Caller, whose file names are module-relative under -trimpath,
// which the Makefile builds with so that tests and the distribution share
// one build cache.
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		panic("testservers: no working directory: " + err.Error())
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			panic("testservers: no go.work above " + dir + ": run the tests from the repository")
		}
	}
}

// Everything returns the path of dist/index.js of the given version of
// @modelcontextprotocol/server-everything; run it as
// `node <path> [stdio|sse|streamableHttp]`.
func Everything(t testing.TB, version string) string {
	t.Helper()
	return npmServer(t, "server-everything-"+version, filepath.Join("@modelcontextprotocol", "server-everything", "dist", "index.js"))
}

// NPMPackage returns the path of entry (relative to node_modules) in the
// pinned install of testdata/npm/<name>, installing it when needed, and skips
// loudly without node and npm.
func NPMPackage(t testing.TB, name, entry string) string {
	t.Helper()
	return npmServer(t, name, entry)
}

// Node returns the path of the node binary, skipping loudly without it.
func Node(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		SkipLoudly(t, "node is not installed, so real-server tests did not run; install Node.js and npm, then run scripts/install-npm-servers.sh")
	}
	return node
}

func npmServer(t testing.TB, name, entry string) string {
	t.Helper()
	Node(t)
	if _, err := exec.LookPath("npm"); err != nil {
		SkipLoudly(t, "npm is not installed, so the real npm MCP server "+name+" cannot be; install Node.js and npm, then run scripts/install-npm-servers.sh")
	}
	dir := npmInstallDir(t, name)
	path := filepath.Join(dir, "node_modules", entry)
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err != nil {
		if out, err := exec.Command(installScript(), name).CombinedOutput(); err != nil {
			t.Fatalf("installing %s: %v\n%s", name, err, out)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is installed but %s is missing: %v", name, path, err)
	}
	return path
}

func installScript() string {
	return filepath.Join(RepoRoot(), "scripts", "install-npm-servers.sh")
}

// npmDirs holds each install's directory, which the install script names
// (from its lockfile's digest): asked once per name and test process.
var npmDirs sync.Map

func npmInstallDir(t testing.TB, name string) string {
	t.Helper()
	if dir, ok := npmDirs.Load(name); ok {
		return dir.(string)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(installScript(), "--dir", name)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("install-npm-servers.sh --dir %s: %v\n%s", name, err, stderr.Bytes())
	}
	dir := string(bytes.TrimSpace(out))
	npmDirs.Store(name, dir)
	return dir
}

// EverythingHTTP starts the given version of server-everything in mode
// ("streamableHttp" or "sse") on a free loopback port, waits until it accepts
// connections and returns its base URL. The process (and anything it
// started) is killed when the test ends.
func EverythingHTTP(t testing.TB, version, mode string) string {
	t.Helper()
	base, _ := EverythingHTTPAt(t, version, mode, FreePort(t))
	return base
}

// EverythingHTTPAt is EverythingHTTP on a given port, with a function that
// stops the server (and waits until it is gone), so a test can start
// another release on the same port: a server upgraded under its clients.
func EverythingHTTPAt(t testing.TB, version, mode string, port int) (base string, stop func()) {
	t.Helper()
	node, entry := Node(t), Everything(t, version)
	stop = startListening(t, "server-everything "+version+" "+mode, exec.Command(node, entry, mode),
		[]string{"PORT=" + strconv.Itoa(port)}, port)
	return "http://127.0.0.1:" + strconv.Itoa(port), stop
}

// SDKOAuthServer starts the TypeScript SDK's example Streamable HTTP server
// with OAuth (simpleStreamableHttp.js --oauth, from the SDK release that
// server-everything 2025.11.25 pins): an MCP server that answers 401
// without a bearer token, with protected resource metadata naming its demo
// authorization server (dynamic client registration, an authorization
// endpoint that consents at once and redirects, PKCE, tokens checked by
// introspection). It returns the MCP endpoint, http://localhost:PORT/mcp.
func SDKOAuthServer(t testing.TB) string {
	t.Helper()
	node := Node(t)
	entry := NPMPackage(t, "server-everything-2025.11.25",
		filepath.Join("@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "simpleStreamableHttp.js"))
	mcpPort, authPort := FreePort(t), FreePort(t)
	startListening(t, "the SDK's OAuth example server", exec.Command(node, entry, "--oauth"),
		[]string{"MCP_PORT=" + strconv.Itoa(mcpPort), "MCP_AUTH_PORT=" + strconv.Itoa(authPort)}, mcpPort, authPort)
	return "http://localhost:" + strconv.Itoa(mcpPort) + "/mcp"
}

// FreePort returns a loopback TCP port nothing listens on (now).
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startListening starts cmd (a server, with env added to this process's)
// in a process group of its own and waits until every port accepts
// connections; the returned function, also run when the test ends, kills
// the group and waits for it.
func startListening(t testing.TB, what string, cmd *exec.Cmd, env []string, ports ...int) (stop func()) {
	t.Helper()
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		})
	}
	t.Cleanup(stop)
	// It listens, exits, or the test runs out of time; a start that is
	// only slow (under load) is waited for.
	deadline, bounded := WaitDeadline(t)
	for _, port := range ports {
		addr := "127.0.0.1:" + strconv.Itoa(port)
		for {
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				break
			}
			select {
			case <-exited:
				t.Fatalf("%s exited before listening on %s:\n%s", what, addr, logs.String())
			default:
			}
			if bounded && time.Now().After(deadline) {
				stop()
				t.Fatalf("%s did not listen on %s:\n%s", what, addr, logs.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return stop
}

// Fixture returns the captured contract of a server-everything release:
// its initialize result and its tools/list result (testdata/fixtures).
func Fixture(t testing.TB, version string) (initialize, toolsList []byte) {
	t.Helper()
	dir := filepath.Join(RepoRoot(), "testdata", "fixtures", "server-everything", version)
	var err error
	if initialize, err = os.ReadFile(filepath.Join(dir, "initialize.json")); err != nil {
		t.Fatal(err)
	}
	if toolsList, err = os.ReadFile(filepath.Join(dir, "tools-list.json")); err != nil {
		t.Fatal(err)
	}
	return initialize, toolsList
}

// ClaudeCodeVersion is the pinned release of the Claude Code CLI
// (testdata/npm/claude-code-<version>): a real agent host for the
// end-to-end tests.
const ClaudeCodeVersion = "2.1.332"

// ClaudeCode returns the path of the pinned Claude Code CLI (`claude`),
// installing it when needed; it skips loudly without node and npm. The npm
// package installs a native executable: node is needed only by npm.
func ClaudeCode(t testing.TB) string {
	t.Helper()
	return npmServer(t, "claude-code-"+ClaudeCodeVersion, filepath.Join("@anthropic-ai", "claude-code", "bin", "claude.exe"))
}
