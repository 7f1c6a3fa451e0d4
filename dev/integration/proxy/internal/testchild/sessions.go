package testchild

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SessionsN and SessionsCalls configure the "sessions" child.
const (
	SessionsN     = "MCPDRIFT_PROXY_TEST_SESSIONS"
	SessionsCalls = "MCPDRIFT_PROXY_TEST_CALLS"
)

// BenchServer is a go-sdk server with an echo tool and tools-1 generated
// ones, each with a schema of a few parameters (a listing of realistic size).
func BenchServer(tools int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo"}}}, nil
		})
	for i := 1; i < tools; i++ {
		schema := fmt.Sprintf(`{"type":"object","properties":{"query":{"type":"string","description":"what to look for in index %d"},"limit":{"type":"integer","minimum":1,"maximum":100},"fields":{"type":"array","items":{"type":"string","enum":["title","body","author"]}}},"required":["query"]}`, i)
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("search_%03d", i), Description: fmt.Sprintf("Searches index %d and returns the matching documents.", i), InputSchema: json.RawMessage(schema)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	return s
}

// sessions is both ends of many concurrent Streamable HTTP sessions, so
// that a proxy between them is alone in its process: it serves a
// 100-tool BenchServer and prints its URL; reads the URL to reach it by
// (the proxy's); opens SessionsN sessions at once, each listing the tools
// and making SessionsCalls calls, and prints "open" (or "failed: …"); on
// the line "notify" it changes its tools and prints "delivered N" once
// every session's standing stream delivered list_changed (or after a
// generous wait); it exits when its input ends.
func sessions() int {
	n, _ := strconv.Atoi(os.Getenv(SessionsN))
	calls, _ := strconv.Atoi(os.Getenv(SessionsCalls))
	srv := BenchServer(100)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 1
	}
	go func() {
		_ = http.Serve(l, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	}()
	fmt.Println("http://" + l.Addr().String())
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() {
		return 1
	}
	url := in.Text()

	notified := make(chan struct{}, n)
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { notified <- struct{}{} },
	})
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 0, n
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		done     int
		firstErr error
	)
	for range n {
		wg.Go(func() {
			err := session(ctx, c, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: t}}, calls)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				done++
			} else if firstErr == nil {
				firstErr = err
			}
		})
	}
	wg.Wait()
	if done != n {
		fmt.Printf("failed: %d of %d sessions did not complete their calls (stalled or failed): %v\n", n-done, n, firstErr)
	} else {
		fmt.Println("open")
	}
	for in.Scan() {
		if in.Text() != "notify" {
			continue
		}
		srv.AddTool(&mcp.Tool{Name: "added", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		got := 0
	wait:
		for got < n {
			select {
			case <-notified:
				got++
			case <-ctx.Done():
				break wait
			}
		}
		fmt.Printf("delivered %d\n", got)
	}
	return 0
}

// session connects (a 2025-11-25 session, which holds a standing GET
// stream), lists the tools and makes calls tools/call requests. The
// session stays open until the process ends.
func session(ctx context.Context, c *mcp.Client, t mcp.Transport, calls int) error {
	cs, err := c.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return err
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return err
	}
	for range calls {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}); err != nil {
			return err
		}
	}
	return nil
}
