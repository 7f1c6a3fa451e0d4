package itest

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const childEnv = "MCPDRIFT_ITEST_SERVER"

// ServeChild makes the test binary a demo MCP server on stdio when it was
// started by ChildCommand. Call it first thing in TestMain.
func ServeChild() {
	var err error
	switch os.Getenv(childEnv) {
	case "":
		return
	case "gosdk":
		err = NewGoServer().Run(context.Background(), &mcp.StdioTransport{})
	case "mcpgo":
		s, _ := NewMCPGoServer()
		err = mcpgoserver.ServeStdio(s)
	default:
		err = fmt.Errorf("unknown demo server %q", os.Getenv(childEnv))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// ChildCommand runs this test binary as the demo server of kind ("gosdk",
// "mcpgo") over stdio.
func ChildCommand(kind string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+kind)
	cmd.Stderr = os.Stderr
	return cmd
}

// Main is TestMain for packages whose tests start demo server children.
func Main(m interface{ Run() int }) {
	ServeChild()
	os.Exit(m.Run())
}

// MutateVia is a Scenario.Change for a server in a child process: it calls
// the server's mutate tool through the client under test and applies the
// same change to the local mirror the expected digests come from.
func MutateVia(c Client, mirrorChange func()) func() {
	return func() {
		c.CallTool(context.Background(), "mutate", nil)
		mirrorChange()
	}
}
