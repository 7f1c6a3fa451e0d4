package messagesapi

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// post sends a Messages API request and returns the response.
func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/v1/messages?beta=true", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// event is one server-sent event.
type event struct {
	name string
	data map[string]any
}

func readEvents(t *testing.T, r io.Reader) []event {
	t.Helper()
	var out []event
	var cur event
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Errorf("event %s: %v", cur.name, err) // Errorf: called off the test's goroutine
			}
		case line == "":
			if cur.data["type"] != cur.name {
				t.Errorf("event %q carries type %v", cur.name, cur.data["type"])
			}
			out = append(out, cur)
			cur = event{}
		}
	}
	return out
}

const turnRequest = `{"model":"m","max_tokens":100,"stream":true,
	"tools":[{"name":"mcp__demo__create_ticket","description":"File a ticket.","input_schema":{"type":"object","properties":{"title":{"type":"string"}}}}],
	"messages":[{"role":"user","content":"file it"},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"mcp__demo__create_ticket","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":[{"type":"text","text":"STALE_TOOL_SCHEMA"},{"type":"text","text":"re-list"}]}]}]}`

// A request offering tools waits for the test's reply, which streams as
// the Messages API does: the tool's input in input_json_delta pieces that
// join to the input, stop_reason tool_use.
func TestTurnStreamsToolUse(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	got := make(chan []event, 1)
	go func() {
		resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(turnRequest))
		if err != nil {
			got <- nil
			return
		}
		defer resp.Body.Close()
		got <- readEvents(t, resp.Body)
	}()
	turn, err := s.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tool, ok := turn.Request.Tool("mcp__demo__create_ticket"); !ok || !strings.Contains(string(tool.InputSchema), `"title"`) {
		t.Errorf("offered tool: %+v, %v", tool, ok)
	}
	if rs := turn.Request.ToolResults(); len(rs) != 1 || rs[0].ToolUseID != "toolu_1" || !rs[0].IsError || rs[0].Text != "STALE_TOOL_SCHEMA\nre-list" {
		t.Errorf("tool results: %+v", rs)
	}
	input := map[string]any{"title": "Printer on fire — ünïcode", "body": strings.Repeat("x", 40)}
	turn.Reply(Reply{ToolUses: []ToolUse{{Name: "mcp__demo__create_ticket", Input: input}}})
	turn.Reply(Reply{Text: "a second reply is ignored"})

	events := <-got
	var names []string
	var partial strings.Builder
	deltas := 0
	for _, e := range events {
		names = append(names, e.name)
		if d, ok := e.data["delta"].(map[string]any); ok && d["type"] == "input_json_delta" {
			partial.WriteString(d["partial_json"].(string))
			deltas++
		}
	}
	want := "message_start content_block_start" + strings.Repeat(" content_block_delta", deltas) + " content_block_stop message_delta message_stop"
	if strings.Join(names, " ") != want || deltas < 2 {
		t.Fatalf("events %v (%d input deltas)", names, deltas)
	}
	var joined map[string]any
	if err := json.Unmarshal([]byte(partial.String()), &joined); err != nil || joined["title"] != input["title"] || joined["body"] != input["body"] {
		t.Errorf("joined input %q: %v", partial.String(), err)
	}
	block := events[1].data["content_block"].(map[string]any)
	if block["type"] != "tool_use" || block["name"] != "mcp__demo__create_ticket" || !strings.HasPrefix(block["id"].(string), "toolu_") {
		t.Errorf("content_block_start: %v", block)
	}
	if d := events[len(events)-2].data["delta"].(map[string]any); d["stop_reason"] != "tool_use" {
		t.Errorf("message_delta: %v", d)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests kept, want 1", n)
	}
}

// A side request (no tools) is answered at once with text, without a turn;
// a non-streaming request gets the message as JSON.
func TestSideRequestAnsweredAtOnce(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp := post(t, s.URL, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"quota"}]}`)
	var m struct {
		Type       string
		StopReason string `json:"stop_reason"`
		Content    []struct{ Type, Text string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if m.Type != "message" || m.StopReason != "end_turn" || len(m.Content) != 1 || m.Content[0].Type != "text" {
		t.Errorf("side answer: %+v", m)
	}
	resp = post(t, s.URL, `{"model":`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("malformed body: status %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/messages/count_tokens", strings.NewReader(`{"messages":[]}`))
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	if b, _ := io.ReadAll(resp2.Body); !strings.Contains(string(b), "input_tokens") {
		t.Errorf("count_tokens: %s", b)
	}
}

// A turn still waiting when the stand-in closes fails instead of hanging.
func TestCloseAbandonsWaitingTurn(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	status := make(chan int, 1)
	go func() {
		resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(turnRequest))
		if err != nil {
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Next(ctx); err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Close() }()
	if got := <-status; got != http.StatusServiceUnavailable {
		t.Errorf("abandoned turn: status %d, want 503", got)
	}
}
