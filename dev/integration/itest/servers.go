package itest

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/contract"
)

// The demo servers offer "search" (version 1: a required query; version 2
// adds a required integer limit), and "fail", which always reports a tool
// error (isError).

type searchV1 struct {
	Query string `json:"query" jsonschema:"what to look for"`
}

type searchV2 struct {
	Query string `json:"query" jsonschema:"what to look for"`
	Limit int    `json:"limit" jsonschema:"how many results"`
}

// GoServer is a go-sdk server; Change (or calling the mutate tool) switches
// search to version 2.
type GoServer struct {
	*mcp.Server
}

// NewGoServer returns the go-sdk demo server.
func NewGoServer() *GoServer {
	s := mcp.NewServer(&mcp.Implementation{Name: "demo-gosdk", Version: "1.0.0"}, &mcp.ServerOptions{Instructions: "a demo"})
	gs := &GoServer{Server: s}
	mcp.AddTool(s, &mcp.Tool{Name: "search", Description: "Search the corpus."}, func(_ context.Context, req *mcp.CallToolRequest, in searchV1) (*mcp.CallToolResult, any, error) {
		return found(in.Query, req.Params.GetMeta()["traceparent"]), nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "mutate", Description: "Changes search.", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		gs.Change()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "changed"}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "Always fails.", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "boom"}}}, nil
	})
	return gs
}

// found is search's result: it echoes the traceparent the server received
// in params._meta, so tests can check propagation even in a child process.
func found(query string, traceparent any) *mcp.CallToolResult {
	tp, _ := traceparent.(string)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found " + query + " tp=" + tp}}}
}

// Change redefines search (a new required parameter) and notifies clients.
func (s *GoServer) Change() {
	mcp.AddTool(s.Server, &mcp.Tool{Name: "search", Description: "Search the corpus, paged."}, func(_ context.Context, req *mcp.CallToolRequest, in searchV2) (*mcp.CallToolResult, any, error) {
		return found(in.Query, req.Params.GetMeta()["traceparent"]), nil, nil
	})
}

// RawToolsList is the tools/list result the server sends, as raw JSON, read
// by an uninstrumented client through the SDK's LoggingTransport.
func (s *GoServer) RawToolsList(t testing.TB) []byte {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	var log LockedBuffer
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, nil).Connect(ctx, &mcp.LoggingTransport{Transport: ct, Writer: &log}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if results := LoggedResults(log.Bytes(), "tools"); len(results) > 0 {
		return results[len(results)-1]
	}
	t.Fatal("no tools/list result in the log")
	return nil
}

// LockedBuffer is a bytes.Buffer safe for concurrent writers.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// NewMCPGoServer returns the mcp-go demo server, and a function switching
// search to version 2 (mcp-go notifies connected clients).
func NewMCPGoServer() (*mcpgoserver.MCPServer, func()) {
	s := mcpgoserver.NewMCPServer("demo-mcpgo", "1.0.0", mcpgoserver.WithToolCapabilities(true), mcpgoserver.WithInstructions("a demo"))
	search := func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		tp := ""
		if m := req.Params.Meta; m != nil {
			tp, _ = m.AdditionalFields["traceparent"].(string)
		}
		return mcpgo.NewToolResultText("found " + req.GetString("query", "") + " tp=" + tp), nil
	}
	s.AddTool(mcpgo.NewTool("search", mcpgo.WithDescription("Search the corpus."),
		mcpgo.WithString("query", mcpgo.Required(), mcpgo.Description("what to look for"))), search)
	s.AddTool(mcpgo.NewTool("fail", mcpgo.WithDescription("Always fails.")), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultError("boom"), nil
	})
	change := func() {
		s.AddTool(mcpgo.NewTool("search", mcpgo.WithDescription("Search the corpus, paged."),
			mcpgo.WithString("query", mcpgo.Required(), mcpgo.Description("what to look for")),
			mcpgo.WithNumber("limit", mcpgo.Required(), mcpgo.Description("how many results"))), search)
	}
	s.AddTool(mcpgo.NewTool("mutate", mcpgo.WithDescription("Changes search.")), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		change()
		return mcpgo.NewToolResultText("changed"), nil
	})
	return s, change
}

// MCPGoRawToolsList is the tools/list result an mcp-go server sends, as its
// transports marshal it.
func MCPGoRawToolsList(t testing.TB, s *mcpgoserver.MCPServer) []byte {
	t.Helper()
	resp := s.HandleMessage(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	raw, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil || msg.Result == nil {
		t.Fatalf("tools/list: %s (%v)", raw, err)
	}
	return msg.Result
}

// Digests are the tool digests and set digest of a raw tools/list result,
// computed with package contract (what `mcpdrift hash` prints).
func Digests(t testing.TB, raw []byte) (map[string]string, string) {
	t.Helper()
	doc, err := contract.ReadDocument(contract.ReadOptions{}, raw)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range doc.Snapshot.Tools {
		out[d.Key] = d.Digest
	}
	return out, doc.Snapshot.Digests.Tools
}

// InMemory connects s to one end of an in-memory pipe and returns the other
// end for a client; the server session closes when the test ends.
func (s *GoServer) InMemory(t testing.TB) mcp.Transport {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	return ct
}
