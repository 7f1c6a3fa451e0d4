package interceptor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpdrift/mcpdrift/contract/canon"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// SendFrame records one raw JSON-RPC frame the client is about to send (a
// message or a batch array) and returns the frame to write: frame itself, or
// a copy with trace context added to the params._meta of its requests.
// Nothing else in the frame changes. Frames that are not JSON-RPC pass
// through untouched (and are reported).
func (s *Session) SendFrame(ctx context.Context, frame []byte) []byte {
	if len(frame) > s.ic.cfg.limits.MaxDocumentBytes {
		s.ic.report(fmt.Errorf("outgoing frame of %d bytes not observed (limit %d)", len(frame), s.ic.cfg.limits.MaxDocumentBytes))
		return frame
	}
	out, err := eachMessage(frame, func(msg []byte) []byte { return s.sendMessage(ctx, msg) })
	if err != nil {
		s.ic.report(fmt.Errorf("outgoing frame to %s: %w", s.describe(), err))
		return frame
	}
	return out
}

// ReceiveFrame records one raw JSON-RPC frame received from the server. The
// session may keep references into frame (cached definitions): the caller
// must not modify it afterwards. A frame over the document limit is still
// paired with its requests (a walk over the envelope), but its result is not
// read: a listing in it is cached as unknown.
func (s *Session) ReceiveFrame(frame []byte) {
	if _, err := eachMessage(frame, func(msg []byte) []byte { s.receiveMessage(msg); return nil }); err != nil {
		s.ic.report(fmt.Errorf("incoming frame from %s: %w", s.describe(), err))
	}
}

var errNotJSONRPC = errors.New("not a JSON-RPC message or batch")

// eachMessage calls f on each message of a frame (one object, or a batch
// array of them). When f returns a replacement for a message, the result is
// the frame with that message's bytes replaced; otherwise it is frame.
func eachMessage(frame []byte, f func(msg []byte) []byte) ([]byte, error) {
	i := jsonwire.SkipSpace(frame, 0)
	if i >= len(frame) {
		return frame, errNotJSONRPC
	}
	if frame[i] == '{' {
		end, ok := jsonwire.SkipValue(frame, i)
		if !ok {
			return frame, errNotJSONRPC
		}
		if repl := f(frame[i:end]); repl != nil {
			if i == 0 && end == len(frame) {
				return repl, nil // the message is the frame: its replacement is already a copy
			}
			return splice(frame, []span{{i, end, repl}}), nil
		}
		return frame, nil
	}
	a, ok := jsonwire.NewArray(frame)
	if !ok {
		return frame, errNotJSONRPC
	}
	var edits []span
	for {
		start := jsonwire.SkipSpace(frame, a.Offset())
		if start < len(frame) && frame[start] == ',' {
			start = jsonwire.SkipSpace(frame, start+1)
		}
		elem, ok := a.Next()
		if !ok {
			break
		}
		if len(elem) == 0 || elem[0] != '{' {
			continue
		}
		if repl := f(elem); repl != nil {
			edits = append(edits, span{start, start + len(elem), repl})
		}
	}
	if a.Err() {
		return frame, errNotJSONRPC
	}
	if len(edits) == 0 {
		return frame, nil
	}
	return splice(frame, edits), nil
}

// span is a replacement of frame[start:end].
type span struct {
	start, end int
	with       []byte
}

// splice returns a copy of b with the (ordered, disjoint) spans replaced.
func splice(b []byte, edits []span) []byte {
	n := len(b)
	for _, e := range edits {
		n += len(e.with) - (e.end - e.start)
	}
	out := make([]byte, 0, n)
	prev := 0
	for _, e := range edits {
		out = append(out, b[prev:e.start]...)
		out = append(out, e.with...)
		prev = e.end
	}
	return append(out, b[prev:]...)
}

// message is the envelope of one JSON-RPC message.
type message struct {
	jsonrpc                         bool
	id, method, params, result, err []byte
	paramsEnd                       int // offset just past params' value; 0 when absent
	end                             int // offset of the closing brace
}

func readMessage(msg []byte) (message, bool) {
	var m message
	o, ok := jsonwire.NewObject(msg)
	if !ok {
		return m, false
	}
	for {
		mem, ok := o.Next()
		if !ok {
			break
		}
		switch {
		case jsonwire.KeyIs(mem.Key, "jsonrpc"):
			m.jsonrpc = true
		case jsonwire.KeyIs(mem.Key, "id"):
			m.id = mem.Value
		case jsonwire.KeyIs(mem.Key, "method"):
			m.method = mem.Value
		case jsonwire.KeyIs(mem.Key, "params"):
			m.params, m.paramsEnd = mem.Value, mem.End
		case jsonwire.KeyIs(mem.Key, "result"):
			m.result = mem.Value
		case jsonwire.KeyIs(mem.Key, "error"):
			m.err = mem.Value
		}
	}
	if o.Err() {
		return m, false
	}
	m.end = len(msg) - 1
	return m, true
}

// sendMessage records one outgoing message and returns its replacement, or
// nil to keep it.
func (s *Session) sendMessage(ctx context.Context, msg []byte) []byte {
	m, ok := readMessage(msg)
	if !ok {
		return nil
	}
	method, ok := methodName(m.method)
	if !ok {
		return nil // a response to a server request: nothing to record
	}
	id := rawID(m.id)
	if jsonwire.IsNull(m.id) {
		id = ID{}
	}
	params := s.Request(ctx, id, method, m.params)
	if sameBytes(params, m.params) {
		return nil
	}
	if m.paramsEnd > 0 {
		return splice(msg, []span{{m.paramsEnd - len(m.params), m.paramsEnd, params}})
	}
	// No params member: add one before the closing brace.
	ins := make([]byte, 0, len(params)+11)
	ins = append(append(ins, `,"params":`...), params...)
	return splice(msg, []span{{m.end, m.end, ins}})
}

// receiveMessage records one incoming message.
func (s *Session) receiveMessage(msg []byte) {
	m, ok := readMessage(msg)
	if !ok {
		s.ic.report(fmt.Errorf("malformed message from %s", s.describe()))
		return
	}
	if method, ok := methodName(m.method); ok {
		s.Incoming(method, m.params)
		return
	}
	s.response(rawID(m.id), m.result, m.err)
}

// ReceiveMessage records one message received from the server that the
// caller has read already (ParseMessage, or a front-end's own reading with
// the same meaning): nothing is read again. The session may keep
// references into its members.
func (s *Session) ReceiveMessage(m Message) {
	if m.Method != "" {
		s.Incoming(m.Method, m.Params)
		return
	}
	s.response(m.ID, m.Result, m.Error)
}

// response records a response: result, or the raw error member rpcErr.
func (s *Session) response(id ID, result, rpcErr []byte) {
	if rpcErr != nil && !jsonwire.IsNull(rpcErr) {
		e := &RPCError{}
		if code, ok := jsonwire.Int(jsonwire.Lookup(rpcErr, "code")); ok {
			e.Code = code
		}
		e.Message, _ = jsonwire.String(jsonwire.Lookup(rpcErr, "message"))
		s.Response(id, nil, e)
		return
	}
	s.Response(id, result, nil)
}

// MethodName reads a raw method member (a JSON string); the methods the
// session interprets come back as constants, so reading a frame does not
// allocate their names.
func MethodName(raw []byte) (string, bool) { return methodName(raw) }

// methodName reads a raw method member; the methods the session interprets
// come back as constants, so reading a frame does not allocate their names.
func methodName(raw []byte) (string, bool) {
	switch string(raw) {
	case `"` + methodToolsCall + `"`:
		return methodToolsCall, true
	case `"` + methodToolsList + `"`:
		return methodToolsList, true
	case `"` + notifyToolsListChanged + `"`:
		return notifyToolsListChanged, true
	case `"` + methodInitialize + `"`:
		return methodInitialize, true
	case `"` + mcpwire.NotifyInitialized + `"`:
		return mcpwire.NotifyInitialized, true
	case `"` + methodPromptsGet + `"`:
		return methodPromptsGet, true
	}
	return jsonwire.String(raw)
}

func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// BeforeSendFrame runs BeforeToolCall for each tools/call in a raw frame
// about to be sent; see BeforeToolCall. Without a StaleToolHook it returns
// at once.
func (s *Session) BeforeSendFrame(ctx context.Context, frame []byte) (context.Context, error) {
	if s.ic.cfg.staleHook == nil {
		return ctx, nil
	}
	var err error
	_, _ = eachMessage(frame, func(msg []byte) []byte {
		m, ok := readMessage(msg)
		if !ok || err != nil {
			return nil
		}
		if method, _ := methodName(m.method); method == methodToolsCall {
			name, _ := canon.UnquoteKey(jsonwire.Lookup(m.params, "name"))
			ctx, err = s.BeforeToolCall(ctx, name)
		}
		return nil
	})
	return ctx, err
}

// FrameInfo is what Inspect learns about a raw frame.
type FrameInfo struct {
	JSONRPC   bool // it holds at least one JSON-RPC message
	Handshake bool // it opens a connection (initialize or server/discover)
	Requests  []ID // ids of the requests in it (messages with a method and an id)
}

// Inspect reads a raw frame's envelopes, for taps that must route it (to a
// session) before recording it.
func Inspect(frame []byte) FrameInfo {
	var fi FrameInfo
	_, _ = eachMessage(frame, func(msg []byte) []byte {
		m, ok := readMessage(msg)
		if !ok {
			return nil
		}
		fi.JSONRPC = fi.JSONRPC || m.jsonrpc
		if method, ok := methodName(m.method); ok {
			fi.Handshake = fi.Handshake || method == methodInitialize || method == methodDiscover
			if !jsonwire.IsNull(m.id) {
				fi.Requests = append(fi.Requests, rawID(m.id))
			}
		}
		return nil
	})
	return fi
}

// Message is the envelope of one JSON-RPC message, its members raw (nil
// when absent), for front-ends that route or answer messages themselves.
type Message struct {
	ID                    ID
	RawID                 json.RawMessage
	Method                string // "" on responses
	Params, Result, Error json.RawMessage
}

// ParseMessage reads one JSON-RPC message (an object, not a batch).
func ParseMessage(msg []byte) (Message, bool) {
	m, ok := readMessage(msg)
	if !ok || !m.jsonrpc {
		return Message{}, false
	}
	out := Message{RawID: m.id, Params: m.params, Result: m.result, Error: m.err}
	out.ID = IDFromRaw(m.id)
	if m.method != nil {
		if out.Method, ok = methodName(m.method); !ok {
			return Message{}, false
		}
	}
	return out, true
}
