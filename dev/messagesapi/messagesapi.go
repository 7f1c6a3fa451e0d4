// Package messagesapi is a stand-in for the Anthropic Messages API, for
// driving a real agent host (Claude Code) in tests without a model: the host
// is pointed at it with ANTHROPIC_BASE_URL, and the test scripts each of the
// model's turns — a text answer or tool_use blocks — and decides when each
// turn is answered, so a tool call can reach the host at a chosen moment
// (after an MCP server changed, after the host re-listed its tools).
//
// It serves POST /v1/messages, streaming (the SSE events message_start,
// content_block_start, content_block_delta, content_block_stop,
// message_delta, message_stop) or not, and POST /v1/messages/count_tokens.
// A request that offers tools is a turn of the conversation and waits for
// the test (Next, then Turn.Reply); any other request (the host's own
// side requests: titles, quota checks) is answered at once with a short
// text. Every request is kept, so a test can see which tools the host
// offered the model and what each tool call returned.
package messagesapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// maxRequestBytes bounds a request body: a host sends its whole
// conversation and every tool's definition on each turn.
const maxRequestBytes = 16 << 20

// Request is the part of a Messages API request a test looks at.
type Request struct {
	Path      string    `json:"-"`
	Received  time.Time `json:"-"`
	Model     string    `json:"model"`
	MaxTokens int       `json:"max_tokens"`
	Stream    bool      `json:"stream"`
	Messages  []Message `json:"messages"`
	Tools     []Tool    `json:"tools"`
}

// Message is one message of the conversation; Content is a string or an
// array of content blocks.
type Message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// Tool is a tool the host offered the model.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ToolResult is a tool_result block the host sent back: what a tool call
// returned, as the model reads it.
type ToolResult struct {
	ToolUseID string
	IsError   bool
	Text      string // the text blocks, joined by newlines
}

// Tool returns the offered tool named name.
func (r *Request) Tool(name string) (Tool, bool) {
	for _, t := range r.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// ToolResults returns the tool_result blocks of the last message (the
// answers to the previous turn's tool_use blocks).
func (r *Request) ToolResults() []ToolResult {
	if len(r.Messages) == 0 {
		return nil
	}
	var blocks []struct {
		Type      string          `json:"type"`
		ToolUseID string          `json:"tool_use_id"`
		IsError   bool            `json:"is_error"`
		Content   json.RawMessage `json:"content"`
	}
	if json.Unmarshal(r.Messages[len(r.Messages)-1].Content, &blocks) != nil {
		return nil // a plain string: no tool results
	}
	var out []ToolResult
	for _, b := range blocks {
		if b.Type == "tool_result" {
			out = append(out, ToolResult{ToolUseID: b.ToolUseID, IsError: b.IsError, Text: contentText(b.Content)})
		}
	}
	return out
}

// contentText is the text of a content value: a string, or the text of its
// text blocks.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Reply is the model's answer to a turn: text, then tool calls. With no
// tool calls the turn ends the conversation (stop_reason end_turn).
type Reply struct {
	Text     string
	ToolUses []ToolUse
}

// ToolUse is one tool_use block: the tool's name as the host offered it
// (Claude Code names MCP tools mcp__<server>__<tool>) and its input.
type ToolUse struct {
	ID    string // "" for a generated one
	Name  string
	Input any
}

// Turn is a request of the conversation, waiting for its reply.
type Turn struct {
	Request *Request
	reply   chan Reply
	once    sync.Once
}

// Reply answers the turn (once; later calls do nothing). It does not wait
// for the host to read the answer.
func (t *Turn) Reply(r Reply) {
	t.once.Do(func() { t.reply <- r })
}

// Server is a running stand-in.
type Server struct {
	URL string // base URL, for ANTHROPIC_BASE_URL

	srv   *http.Server
	turns chan *Turn
	done  chan struct{}

	mu       sync.Mutex
	requests []*Request
	ids      int
	closed   bool
}

// Start serves the stand-in on a free loopback port.
func Start() (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + l.Addr().String(), turns: make(chan *Turn), done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.countTokens)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// Close stops serving; turns still waiting are abandoned (their requests
// fail).
func (s *Server) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// Next returns the next turn of the conversation, waiting for the host to
// ask.
func (s *Server) Next(ctx context.Context) (*Turn, error) {
	select {
	case t := <-s.turns:
		return t, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the host's next request: %w", ctx.Err())
	}
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

func (s *Server) read(w http.ResponseWriter, r *http.Request) (*Request, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		apiError(w, http.StatusRequestEntityTooLarge, "request_too_large", err.Error())
		return nil, false
	}
	req := &Request{Path: r.URL.Path, Received: time.Now()}
	if err := json.Unmarshal(body, req); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "body: "+err.Error())
		return nil, false
	}
	return req, true
}

func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.read(w, r); !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"input_tokens":100}`)
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	req, ok := s.read(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	reply := Reply{Text: "ok"} // a side request: answered at once
	if len(req.Tools) > 0 {
		t := &Turn{Request: req, reply: make(chan Reply, 1)}
		select {
		case s.turns <- t:
		case <-r.Context().Done():
			return
		case <-s.done:
			apiError(w, http.StatusServiceUnavailable, "overloaded_error", "the stand-in is closing")
			return
		}
		select {
		case reply = <-t.reply:
		case <-r.Context().Done():
			return
		case <-s.done:
			apiError(w, http.StatusServiceUnavailable, "overloaded_error", "the stand-in is closing")
			return
		}
	}
	msg, err := s.message(req, reply)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "api_error", err.Error())
		return
	}
	if req.Stream {
		writeStream(w, msg)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(msg)
}

// message is the reply as a Messages API message object.
type message struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	Role         string  `json:"role"`
	Model        string  `json:"model"`
	Content      []block `json:"content"`
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
	Usage        usage   `json:"usage"`
}

type block struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

type usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

func (s *Server) message(req *Request, r Reply) (*message, error) {
	s.mu.Lock()
	s.ids++
	n := s.ids
	s.mu.Unlock()
	model := req.Model
	if model == "" {
		model = "claude-stand-in"
	}
	m := &message{ID: fmt.Sprintf("msg_standin_%d", n), Type: "message", Role: "assistant", Model: model,
		Usage: usage{InputTokens: 100, OutputTokens: 10}}
	if r.Text != "" || len(r.ToolUses) == 0 {
		text := r.Text
		m.Content = append(m.Content, block{Type: "text", Text: &text})
	}
	for i, u := range r.ToolUses {
		input, err := json.Marshal(u.Input)
		if err != nil {
			return nil, fmt.Errorf("tool_use %s input: %w", u.Name, err)
		}
		if u.Input == nil {
			input = []byte("{}")
		}
		id := u.ID
		if id == "" {
			id = fmt.Sprintf("toolu_standin_%d_%d", n, i)
		}
		m.Content = append(m.Content, block{Type: "tool_use", ID: id, Name: u.Name, Input: input})
	}
	stop := "end_turn"
	if len(r.ToolUses) > 0 {
		stop = "tool_use"
	}
	m.StopReason = &stop
	return m, nil
}

// writeStream writes m as the Messages API's server-sent events: the
// message without content and stop reason, then each block (text as a
// text_delta, a tool's input as input_json_delta chunks, as the real API
// streams them), then the stop reason.
func writeStream(w http.ResponseWriter, m *message) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	start := *m
	start.Content, start.StopReason = []block{}, nil
	start.Usage.OutputTokens = 1
	event("message_start", map[string]any{"type": "message_start", "message": start})
	for i, b := range m.Content {
		switch b.Type {
		case "text":
			empty := ""
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": block{Type: "text", Text: &empty}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": *b.Text}})
		case "tool_use":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": block{Type: "tool_use", ID: b.ID, Name: b.Name, Input: json.RawMessage("{}")}})
			for _, chunk := range chunks(string(b.Input), 16) {
				event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": chunk}})
			}
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": m.StopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": m.Usage.OutputTokens}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

// chunks splits s into pieces of about n bytes, on character boundaries (a
// tool's input arrives in several deltas that the client must join).
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	_, _ = w.Write(b)
}
