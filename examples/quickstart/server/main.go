// Command server is the quickstart's drifting MCP server: it serves contract
// v1 over Streamable HTTP, then switches to v2, on a timer (-switch-after)
// or when it receives SIGUSR1. v2 has one breaking change (create_ticket
// gains a required parameter), one warning (get_weather's description is
// rewritten) and one addition (get_forecast, whose description carries
// markup that a dashboard must show as text).
//
//	server -listen 127.0.0.1:8080 -switch-after 20s
//	kill -USR1 <pid>     # switch now
//
// -start v2 starts on v2 (a restart against an unchanged v2 server);
// -log-requests logs every request, for tests that must tell which calls
// reached the server.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "address to serve MCP on (path /mcp)")
	switchAfter := flag.Duration("switch-after", 0, "switch from v1 to v2 after this long (0: only on SIGUSR1)")
	start := flag.String("start", "v1", "contract to start with: v1 or v2")
	logReqs := flag.Bool("log-requests", false, "log every request: method, client, tool and argument names (never values)")
	flag.Parse()
	if *start != "v1" && *start != "v2" {
		fmt.Fprintln(os.Stderr, "server: -start must be v1 or v2")
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))

	d := newDemo()
	if *logReqs {
		d.server.AddReceivingMiddleware(logRequests(logger))
	}
	if *start == "v2" {
		d.switchToV2()
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return d.server }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serve", "error", err)
		}
	}()
	logger.Info("demo MCP server serving", "url", "http://"+l.Addr().String()+"/mcp", "contract", *start)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	var timer <-chan time.Time
	if *switchAfter > 0 && *start == "v1" {
		timer = time.After(*switchAfter)
	}
	for {
		select {
		case <-ctx.Done():
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdown)
			return
		case <-timer:
			d.switchToV2()
			logger.Info("switched to contract v2 (timer)")
		case <-usr1:
			if d.switchToV2() {
				logger.Info("switched to contract v2 (SIGUSR1)")
			}
		}
	}
}

// demo holds the one server whose tools change.
type demo struct {
	server *mcp.Server
	mu     sync.Mutex
	v2     bool
}

func newDemo() *demo {
	s := mcp.NewServer(&mcp.Implementation{Name: "demo-tools", Title: "mcpdrift quickstart server", Version: "1.0.0"},
		&mcp.ServerOptions{Instructions: "Tools for the mcpdrift quickstart: look things up, check the weather, file tickets."})
	s.AddTool(searchDocs, answerFor(searchDocs, "3 documents found"))
	s.AddTool(getWeatherV1, answerFor(getWeatherV1, "sunny, 21°C"))
	s.AddTool(createTicketV1, answerFor(createTicketV1, "ticket DEMO-42 created"))
	return &demo{server: s}
}

// switchToV2 applies v2 once; it reports whether it did. The SDK notifies
// connected clients (tools/list_changed).
func (d *demo) switchToV2() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.v2 {
		return false
	}
	d.v2 = true
	d.server.AddTool(getWeatherV2, answerFor(getWeatherV2, "sunny, 21°C"))
	d.server.AddTool(createTicketV2, answerFor(createTicketV2, "ticket DEMO-43 created"))
	d.server.AddTool(getForecast, answerFor(getForecast, "rain tomorrow"))
	return true
}

var (
	searchDocs = &mcp.Tool{
		Name:        "search_docs",
		Description: "Search the product documentation and return the best matching pages.",
		InputSchema: schema(`{"type":"object","properties":{"query":{"type":"string","description":"what to look for"},"limit":{"type":"integer","minimum":1,"maximum":20,"default":5}},"required":["query"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}
	getWeatherV1 = &mcp.Tool{
		Name:        "get_weather",
		Description: "Get the current weather for a city.",
		InputSchema: schema(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}
	// v2 rewrites the description: a warning (text a model reads changed).
	getWeatherV2 = &mcp.Tool{
		Name:        "get_weather",
		Description: "Current conditions for a city, with temperature in Celsius and wind in km/h.",
		InputSchema: getWeatherV1.InputSchema,
		Annotations: getWeatherV1.Annotations,
	}
	createTicketV1 = &mcp.Tool{
		Name:        "create_ticket",
		Description: "File a support ticket.",
		InputSchema: schema(`{"type":"object","properties":{"title":{"type":"string"},"body":{"type":"string"},"priority":{"type":"string","enum":["low","normal","high"]}},"required":["title"]}`),
	}
	// v2 adds a required parameter: breaking (calls without it now fail).
	createTicketV2 = &mcp.Tool{
		Name:        "create_ticket",
		Description: "File a support ticket.",
		InputSchema: schema(`{"type":"object","properties":{"title":{"type":"string"},"body":{"type":"string"},"priority":{"type":"string","enum":["low","normal","high"]},"project":{"type":"string","description":"project key, e.g. DEMO"}},"required":["title","project"]}`),
	}
	// v2 adds a tool: compatible. Its description carries markup, as a
	// hostile server's could: the dashboard must show it as text, and run
	// none of it (make e2e checks in a real browser).
	getForecast = &mcp.Tool{
		Name:        "get_forecast",
		Description: "Get tomorrow's forecast for a city." + `<script>window.__mcpdriftPoisoned = "script"</script><img src=x onerror="window.__mcpdriftPoisoned = 'img'">`,
		InputSchema: schema(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}
)

// logRequests logs every request the server receives: its method, the
// client that sent it, and for a tool call the tool and the names of its
// arguments (never their values). A test reads the log to tell which calls
// reached the server and which a gate stopped before it.
func logRequests(logger *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			attrs := []any{"method", method}
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
				if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
					attrs = append(attrs, "client", ip.ClientInfo.Name)
				}
				attrs = append(attrs, "session", ss.ID())
			}
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
				var args map[string]json.RawMessage
				_ = json.Unmarshal(p.Arguments, &args)
				attrs = append(attrs, "tool", p.Name, "arguments", slices.Sorted(maps.Keys(args)))
			}
			logger.Info("request", attrs...)
			return next(ctx, method, req)
		}
	}
}

func schema(s string) json.RawMessage { return json.RawMessage(s) }

// answer returns text, after checking the arguments against the tool's
// required parameters, as a real server's input validation would: after the
// switch, calls planned against v1 fail.
func answerFor(t *mcp.Tool, text string) mcp.ToolHandler {
	var required struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(t.InputSchema.(json.RawMessage), &required)
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &args)
		for _, name := range required.Required {
			if _, ok := args[name]; !ok {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "missing required argument: " + name}}}, nil
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	}
}
