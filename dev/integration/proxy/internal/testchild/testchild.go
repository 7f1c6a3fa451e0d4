// Package testchild holds the servers the proxy's tests run as child
// processes (the test binary re-executed): a line-recording echo server for
// the relay's byte-level behaviour, and a go-sdk server whose tool
// definition changes mid-session for the gate. Each logs what reached it,
// so a test can prove a refused call never did.
package testchild

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Env names the child mode; Log the file a child appends what reached it to;
// Listing what the echo child answers tools/list with: "deep" (a
// definition nesting 2,000 levels deep, id last), "big" (a 3,000-byte
// description, id first) or "stringid" (tools a and secret, under the
// request's id written as a string: 2 as "2"); else {"echo":true}.
const (
	Env     = "MCPDRIFT_PROXY_TEST_CHILD"
	Log     = "MCPDRIFT_PROXY_TEST_LOG"
	Listing = "MCPDRIFT_PROXY_TEST_LISTING"
)

// Main runs the child named by Env, if any, and exits; it returns at once
// in the test process itself.
func Main() {
	switch os.Getenv(Env) {
	case "echo":
		os.Exit(echo())
	case "sdk":
		os.Exit(sdk())
	case "sessions":
		os.Exit(sessions())
	}
	if runProxy != nil && os.Getenv(Env) == "proxy" {
		os.Exit(runProxy())
	}
}

// runProxy runs a proxy on this process's stdio (mode "proxy"), for agents
// that launch the proxy themselves; the proxy's tests set it (their
// TestMain), with the modes they start it in.
var runProxy func() int

// SetProxy sets what mode "proxy" runs.
func SetProxy(f func() int) { runProxy = f }

func logLine(s string) {
	f, err := os.OpenFile(os.Getenv(Log), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintln(f, s)
		f.Close()
	}
}

// echo logs every line it reads, answers each request with {"echo":true},
// and exits 7 at the end of its input. It greets with a notification and a
// line that is not JSON. test/exit exits with params.code; test/spawn starts
// a grandchild (sleep) and answers its pid; test/stderr writes to stderr.
func echo() int {
	fmt.Println(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`)
	fmt.Println(`this is not json`)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		logLine(line)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Code int `json:"code"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.ID == nil || m.Method == "" {
			continue
		}
		result := `{"echo":true}`
		switch m.Method {
		case "tools/list":
			switch os.Getenv(Listing) {
			case "deep":
				deep := strings.Repeat("[", 2000) + strings.Repeat("]", 2000)
				fmt.Printf(`{"jsonrpc":"2.0","result":{"tools":[{"name":"a","inputSchema":{"type":"object","default":%s}}]},"id":%s}`+"\n", deep, m.ID)
				continue
			case "stringid":
				fmt.Printf(`{"jsonrpc":"2.0","id":%q,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"secret","inputSchema":{"type":"object"}}]}}`+"\n", m.ID)
				continue
			case "big":
				result = `{"tools":[{"name":"a","description":"` + bigString() + `","inputSchema":{"type":"object"}}]}`
			}
		case "test/exit":
			return m.Params.Code
		case "test/spawn":
			c := exec.Command("sleep", "300")
			if c.Start() != nil {
				return 99
			}
			result = `{"pid":` + strconv.Itoa(c.Process.Pid) + `}`
		case "test/stderr":
			fmt.Fprintln(os.Stderr, "to stderr")
		case "test/big":
			result = `{"big":"` + bigString() + `"}`
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, result)
	}
	return 7
}

func bigString() string {
	b := make([]byte, 3000)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}

// Input schemas of the sdk child's "search" tool before and after
// test "upgrade": the new one requires an argument the old lacked.
var (
	SearchV1 = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
	SearchV2 = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}},"required":["q","limit"]}`)
)

// sdk is a go-sdk stdio server with tools search, echo and upgrade; calling
// upgrade changes search's inputSchema (the SDK then sends list_changed).
// Every tools/call that reaches it is logged by tool name.
func sdk() int {
	s := mcp.NewServer(&mcp.Implementation{Name: "proxy-test", Version: "1"}, nil)
	handler := func(name string) mcp.ToolHandler {
		return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			logLine("tools/call " + name)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + name}}}, nil
		}
	}
	s.AddTool(&mcp.Tool{Name: "search", InputSchema: SearchV1}, handler("search"))
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, handler("echo"))
	s.AddTool(&mcp.Tool{Name: "upgrade", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			logLine("tools/call upgrade")
			s.AddTool(&mcp.Tool{Name: "search", InputSchema: SearchV2}, handler("search"))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "upgraded"}}}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}
