// Command sdkserver is a stdio MCP server built on a real SDK, for the
// probe's tests: the go-sdk or mcp-go with its default protocol versions
// (both serve 2026-07-28 and fall back to initialize), two tools, and an
// optional start-up delay before it reads stdin, like a server that loads a
// runtime or a model first. With -legacy, the go-sdk server speaks only the
// initialize-era versions.
//
//	sdkserver -sdk gosdk|mcpgo [-delay 4s] [-legacy]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	sdk := flag.String("sdk", "gosdk", "gosdk or mcpgo")
	delay := flag.Duration("delay", 0, "start-up delay before reading stdin")
	legacy := flag.Bool("legacy", false, "go-sdk: serve only initialize-era protocol versions")
	flag.Parse()
	time.Sleep(*delay)
	var err error
	switch *sdk {
	case "gosdk":
		err = runGoSDK(*legacy)
	case "mcpgo":
		err = runMCPGo()
	default:
		err = fmt.Errorf("unknown SDK %q", *sdk)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func runGoSDK(legacy bool) error {
	var opts *mcp.ServerOptions
	if legacy {
		opts = &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "sdkserver-gosdk", Version: "1.0.0"}, opts)
	for _, name := range []string{"lookup", "search"} {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Looks " + name + " things up."},
			func(context.Context, *mcp.CallToolRequest, struct {
				Query string `json:"query"`
			}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{}, nil, nil
			})
	}
	return s.Run(context.Background(), &mcp.StdioTransport{})
}

func runMCPGo() error {
	s := mcpgoserver.NewMCPServer("sdkserver-mcpgo", "1.0.0", mcpgoserver.WithToolCapabilities(true))
	for _, name := range []string{"lookup", "search"} {
		s.AddTool(mcpgomcp.NewTool(name, mcpgomcp.WithDescription("Looks "+name+" things up."), mcpgomcp.WithString("query")),
			func(context.Context, mcpgomcp.CallToolRequest) (*mcpgomcp.CallToolResult, error) {
				return &mcpgomcp.CallToolResult{}, nil
			})
	}
	return mcpgoserver.ServeStdio(s)
}
