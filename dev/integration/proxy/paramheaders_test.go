package proxy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/proxy"
)

// TestUpstreamParamHeaders: a go-sdk 2026-07-28 server whose tool marks
// arguments with x-mcp-header rejects a call without the matching
// Mcp-Param-* headers. The agent speaks stdio (no headers there); the
// proxy adds them from the definition the agent was served — nested
// properties, integers, and a value that must ride base64-encoded — and
// omits those of absent arguments. The calls succeed.
func TestUpstreamParamHeaders(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "routed", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "route", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"note":{"type":"string","x-mcp-header":"Note"},
		"opts":{"type":"object","properties":{"tenant":{"type":"integer","x-mcp-header":"Tenant"}}}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "routed"}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	rec := newRecorder(t, hs.URL)
	p := startUpstream(t, proxy.Config{Upstream: rec.URL + "/mcp"}, newTelemetry(t))
	a := connectAgentWith(t, p, &mcp.ClientOptions{}, "")
	a.list(t)

	res := a.call(t, "route", map[string]any{"region": "eu-west-1", "note": " zürich ", "opts": map[string]any{"tenant": 42}})
	if res.IsError {
		t.Fatalf("the call was refused: %v", res.Content)
	}
	h := rec.rpc("tools/call route")[0].header
	for name, want := range map[string]string{
		"Mcp-Param-Region": "eu-west-1",
		"Mcp-Param-Note":   "=?base64?IHrDvHJpY2gg?=",
		"Mcp-Param-Tenant": "42",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if res := a.call(t, "route", map[string]any{"region": "us"}); res.IsError {
		t.Fatalf("the call with absent arguments was refused: %v", res.Content)
	}
	if h := rec.rpc("tools/call route")[1].header; h.Get("Mcp-Param-Note") != "" || h.Get("Mcp-Param-Tenant") != "" {
		t.Errorf("headers for absent arguments: %v", h)
	}
}
