package probe

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/contract"
)

// Protocol versions the in-process servers are restricted to, so each
// generation is exercised on its own.
var (
	modernOnly = []string{"2026-07-28"}
	legacyOnly = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
)

// serverSpec describes an in-process Go SDK server.
type serverSpec struct {
	tools    int
	versions []string
	pageSize int
	// grow adds this many tools shortly after the first tools/list, so the
	// server changes while it is being probed.
	grow int
}

func testTool(i int) *mcp.Tool {
	return &mcp.Tool{
		Name:        fmt.Sprintf("tool_%03d", i),
		Title:       fmt.Sprintf("Tool %d", i),
		Description: fmt.Sprintf("Tool number %d: looks things up in the catalogue and returns matching records with their prices.", i),
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what to look for"},` +
			`"limit":{"type":"integer","minimum":1,"maximum":100},"mode":{"type":"string","enum":["fast","exact"]}},"required":["query"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}
}

// expectedToolDigests hashes the tools a server built from spec lists, from
// their JSON encoding (independent of the probe).
func expectedToolDigests(t testing.TB, n int) contract.Listing {
	t.Helper()
	raws := make([]json.RawMessage, n)
	for i := range n {
		b, err := json.Marshal(testTool(i))
		if err != nil {
			t.Fatal(err)
		}
		raws[i] = b
	}
	l, err := contract.DefaultLimits().HashDefinitions(contract.KindTool, raws)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func noopTool(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

func newMCPServer(spec serverSpec) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "probe-test", Version: "1.0.0"}, &mcp.ServerOptions{
		Instructions:              "Use the catalogue tools.",
		PageSize:                  spec.pageSize,
		SupportedProtocolVersions: spec.versions,
	})
	for i := range spec.tools {
		s.AddTool(testTool(i), noopTool)
	}
	s.AddPrompt(&mcp.Prompt{Name: "summarize", Description: "Summarize a record",
		Arguments: []*mcp.PromptArgument{{Name: "id", Required: true}}},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
	s.AddResource(&mcp.Resource{URI: "file:///catalogue.json", Name: "catalogue", MIMEType: "application/json"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///records/{id}", Name: "record"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	if spec.grow > 0 {
		var once sync.Once
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				if method == "tools/list" {
					once.Do(func() {
						go func() {
							time.Sleep(20 * time.Millisecond)
							for i := spec.tools; i < spec.tools+spec.grow; i++ {
								s.AddTool(testTool(i), noopTool)
							}
						}()
					})
				}
				return res, err
			}
		})
	}
	return s
}

// httpServer kinds.
const (
	kindStateless = "stateless" // Streamable HTTP, no sessions (2026-07-28 style)
	kindStateful  = "stateful"  // Streamable HTTP with sessions, SSE responses
	kindJSON      = "json"      // Streamable HTTP with sessions, JSON responses
	kindSSE       = "sse"       // legacy HTTP+SSE
)

// serveHTTP serves one Go SDK server over HTTP and returns its endpoint.
func serveHTTP(t testing.TB, kind string, spec serverSpec) string {
	t.Helper()
	srv := newMCPServer(spec)
	get := func(*http.Request) *mcp.Server { return srv }
	var h http.Handler
	switch kind {
	case kindStateless:
		h = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	case kindStateful:
		h = mcp.NewStreamableHTTPHandler(get, nil)
	case kindJSON:
		h = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{JSONResponse: true})
	case kindSSE:
		h = mcp.NewSSEHandler(get, nil)
	default:
		t.Fatalf("unknown server kind %q", kind)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// The test binary doubles as a stdio server: TestMain runs one when
// PROBE_TEST_STDIO names a mode.
const stdioEnv = "PROBE_TEST_STDIO"

func TestMain(m *testing.M) {
	if mode := os.Getenv(stdioEnv); mode != "" {
		os.Exit(runStdioServer(mode))
	}
	if n, _ := strconv.Atoi(os.Getenv(httpServersEnv)); n > 0 {
		os.Exit(runHTTPServers(n))
	}
	if os.Getenv(floodServerEnv) != "" {
		os.Exit(runFloodServer())
	}
	if pidFile := os.Getenv(proberEnv); pidFile != "" {
		os.Exit(runProber(pidFile))
	}
	os.Exit(m.Run())
}

// httpServersEnv makes the test binary serve that many stateless HTTP
// servers of 100 tools, print their URLs, and run until stdin closes: the
// benchmark's servers, in another process so that the benchmark's CPU time
// and allocations are the probe's alone.
const httpServersEnv = "PROBE_TEST_HTTP_SERVERS"

func runHTTPServers(n int) int {
	for range n {
		srv := newMCPServer(serverSpec{tools: 100})
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		go func() { _ = http.Serve(l, h) }()
		fmt.Printf("http://%s/mcp\n", l.Addr())
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// floodServerEnv makes the test binary serve one floodServer (the flood
// size is the URL's n query parameter), print its URL, and run until stdin
// closes: the flood benchmark's server.
const floodServerEnv = "PROBE_TEST_FLOOD_SERVER"

func runFloodServer() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() { _ = http.Serve(l, &floodServer{}) }()
	fmt.Printf("http://%s\n", l.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// proberEnv makes the test binary a Collector's stand-in: it probes a
// silent stdio server, which writes its pid to the file proberEnv names,
// until it is killed.
const proberEnv = "PROBE_TEST_PROBER"

func runProber(pidFile string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	target := Target{Command: exe, Args: []string{"-test.run=^$"}, Env: []string{stdioEnv + "=silent", "PROBE_TEST_PIDFILE=" + pidFile}}
	_, err = Probe(context.Background(), target, Options{Timeout: time.Minute, DiscoverTimeout: time.Minute, RequestTimeout: time.Minute})
	fmt.Fprintln(os.Stderr, "the probe ended before the prober was killed:", err)
	return 1
}

// runStdioServer is the child's main.
func runStdioServer(mode string) int {
	if f := os.Getenv("PROBE_TEST_PIDFILE"); f != "" {
		_ = os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o600)
	}
	if d, err := time.ParseDuration(os.Getenv("PROBE_TEST_DELAY")); err == nil {
		time.Sleep(d) // a slow start: nothing is read from stdin meanwhile
	}
	switch mode {
	case "modern", "legacy":
		versions := modernOnly
		if mode == "legacy" {
			versions = legacyOnly
		}
		n, _ := strconv.Atoi(os.Getenv("PROBE_TEST_TOOLS"))
		srv := newMCPServer(serverSpec{tools: n, versions: versions})
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "deaf-to-discover", "null-id-on-discover":
		// Legacy servers that ignore unknown methods, or answer them with an
		// error without id.
		pr, pw := io.Pipe()
		go func() {
			sc := bufio.NewScanner(os.Stdin)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				switch {
				case !strings.Contains(sc.Text(), `"server/discover"`):
					fmt.Fprintln(pw, sc.Text())
				case mode == "null-id-on-discover":
					fmt.Println(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`)
				}
			}
			pw.Close()
		}()
		srv := newMCPServer(serverSpec{tools: 2, versions: legacyOnly})
		if err := srv.Run(context.Background(), &mcp.IOTransport{Reader: pr, Writer: os.Stdout}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "silent": // reads and never answers, and shrugs off SIGTERM
		signal.Ignore(syscall.SIGTERM)
		buf := make([]byte, 4096)
		for {
			if _, err := os.Stdin.Read(buf); err != nil {
				time.Sleep(time.Hour) // ignore stdin closing too: only a signal ends it
			}
		}
	case "huge": // one line longer than the tests' message cap
		fmt.Println(`{"jsonrpc":"2.0","id":1,"result":{"x":"` + strings.Repeat("y", 64<<10) + `"}}`)
		time.Sleep(time.Hour)
	case "garbage":
		fmt.Println("Server starting... listening on stdio")
		time.Sleep(time.Hour)
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: missing configuration, token", os.Getenv("API_TOKEN"))
		return 3
	}
	return 2
}

// stdioTarget runs this test binary as a stdio server in the given mode.
func stdioTarget(t testing.TB, mode string, env ...string) Target {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Target{Command: exe, Args: []string{"-test.run=^$"}, Env: append([]string{stdioEnv + "=" + mode}, env...)}
}

// reaped reports whether pid no longer exists: killed and waited for (a
// zombie still exists).
func reaped(pid int) bool { return syscall.Kill(pid, 0) != nil }

// killed reports whether pid no longer runs: reaped, or a zombie (killed,
// waiting for init to reap it, which is all a probe can do for an orphan).
func killed(pid int) bool {
	if reaped(pid) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesized command name.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] == 'Z'
	}
	return false
}
