package jsonrpc

import (
	"bytes"
	"encoding/json"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// Message is one frame from the agent or the server as the proxy reads it,
// once: the relay, the gate, the upstream and the session's spans all take
// what they need from it. Its raw members are slices of Frame.
type Message struct {
	// Message is the envelope (zero unless OK), as interceptor.ParseMessage
	// reads it.
	interceptor.Message
	// Frame is the text it was read from.
	Frame []byte
	// OK: Frame is one JSON-RPC message (an object with a jsonrpc member,
	// and a method, if any, that is a string).
	OK bool
	// Batch: Frame is a JSON array (a batch, or garbage that starts like
	// one); nothing else is read of it.
	Batch bool
	// Unclear: a server could take Frame for a tools/call that no gate can
	// judge as one; set whether or not OK. It names its method, params or
	// tool in more than one member, or in a member named in another case
	// (parsers keep the first of repeated members or the last, and servers
	// on encoding/json, mcp-go's, match names in any case: a gate would
	// judge one tool and the server run another), or it has no id (a
	// lenient server may run it all the same).
	Unclear bool

	// The raw arguments and _meta of a request's params (each the first
	// member so named); nil unless OK. Name, URI and Cursor read the rest.
	Arguments, Meta json.RawMessage
	// The raw name, uri and cursor of its params: decoded on demand, so
	// reading a frame allocates nothing for them.
	name, uri, cursor []byte

	paramsEnd int // just past params' value in Frame; 0 when absent
	end       int // the closing brace's offset in Frame
}

// Parse reads frame.
func Parse(frame []byte) Message {
	m := Message{Frame: frame}
	if IsBatch(frame) {
		m.Batch = true
		return m
	}
	o, ok := jsonwire.NewObject(frame)
	if !ok {
		return m
	}
	var (
		hasJSONRPC      bool
		id, method      []byte
		params          []byte
		methods, paramN int    // members named method, params in any case
		exact           = true // each of them named so exactly
		call            bool   // some method member says tools/call
	)
	for {
		mem, more := o.Next()
		if !more {
			break
		}
		switch {
		case jsonwire.KeyIs(mem.Key, "jsonrpc"):
			hasJSONRPC = true
		case jsonwire.KeyIs(mem.Key, "id"):
			id = mem.Value
		case jsonwire.KeyIs(mem.Key, "result"):
			m.Result = mem.Value
		case jsonwire.KeyIs(mem.Key, "error"):
			m.Error = mem.Value
		case KeyFold(mem, "method"):
			methods++
			if jsonwire.KeyIs(mem.Key, "method") {
				method = mem.Value
			} else {
				exact = false
			}
			call = call || isToolsCall(mem.Value)
		case KeyFold(mem, "params"):
			paramN++
			if jsonwire.KeyIs(mem.Key, "params") {
				params, m.paramsEnd = mem.Value, mem.End
			} else {
				exact = false
			}
		}
	}
	nameClear := m.readParams(params)
	if call {
		m.Unclear = o.Err() || !IsID(id) || methods != 1 || paramN != 1 || !exact || !nameClear
	}
	if o.Err() || !hasJSONRPC {
		return Message{Frame: frame, Unclear: m.Unclear}
	}
	if method != nil {
		if m.Method, ok = interceptor.MethodName(method); !ok {
			return Message{Frame: frame, Unclear: m.Unclear}
		}
	}
	m.OK, m.RawID, m.ID, m.Params = true, id, interceptor.IDFromRaw(id), params
	m.end = o.End() - 1
	return m
}

// readParams reads the members of params the proxy uses, and reports
// whether it names one tool, clearly: one member named name in any case,
// named so exactly, a string.
func (m *Message) readParams(params []byte) (nameClear bool) {
	p, _ := jsonwire.NewObject(params)
	names, exact := 0, true
	var name []byte
	for {
		mem, more := p.Next()
		if !more {
			break
		}
		switch {
		case jsonwire.KeyIs(mem.Key, "name"):
			names++
			name = first(name, mem.Value)
		case KeyFold(mem, "name"):
			names, exact = names+1, false
		case jsonwire.KeyIs(mem.Key, "arguments"):
			m.Arguments = first(m.Arguments, mem.Value)
		case jsonwire.KeyIs(mem.Key, mcpwire.Meta):
			m.Meta = first(m.Meta, mem.Value)
		case jsonwire.KeyIs(mem.Key, "cursor"):
			m.cursor = first(m.cursor, mem.Value)
		case jsonwire.KeyIs(mem.Key, "uri"):
			m.uri = first(m.uri, mem.Value)
		}
	}
	m.name = name
	return !p.Err() && names == 1 && exact && isString(name)
}

// isToolsCall reports whether raw is the JSON string tools/call, however
// escaped; it allocates only for one with escapes.
func isToolsCall(raw []byte) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == `"`+mcpwire.MethodToolsCall+`"`
	}
	s, _ := jsonwire.String(raw)
	return s == mcpwire.MethodToolsCall
}

// isString reports whether raw is a JSON string as jsonwire.String reads
// one, allocating only for one with escapes.
func isString(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return true
	}
	_, ok := jsonwire.String(raw)
	return ok
}

// Name is the tool or prompt the params name ("" when none, or not a
// string).
func (m *Message) Name() string { return str(m.name) }

// URI is the resource the params name.
func (m *Message) URI() string { return str(m.uri) }

// Cursor is the page the params ask for ("" for the first).
func (m *Message) Cursor() string { return str(m.cursor) }

func str(raw []byte) string {
	s, _ := jsonwire.String(raw)
	return s
}

func first(kept, v []byte) []byte {
	if kept != nil {
		return kept
	}
	return v
}

// Request reports whether m is a request (it has a method and an id).
func (m *Message) Request() bool { return m.OK && m.Method != "" && m.ID.Valid() }

// WithParams is m's frame with params in place of its params (frame
// itself when they are the same bytes): how the session's trace context
// reaches the server.
func (m *Message) WithParams(params []byte) []byte {
	if SameBytes(params, m.Params) {
		return m.Frame
	}
	if m.paramsEnd > 0 {
		return splice(m.Frame, m.paramsEnd-len(m.Params), m.paramsEnd, params)
	}
	ins := make([]byte, 0, len(params)+11) // no params member: one before the closing brace
	ins = append(append(ins, `,"params":`...), params...)
	return splice(m.Frame, m.end, m.end, ins)
}

// splice is a copy of b with b[start:end] replaced by with.
func splice(b []byte, start, end int, with []byte) []byte {
	out := make([]byte, 0, len(b)-(end-start)+len(with))
	return append(append(append(out, b[:start]...), with...), b[end:]...)
}

// SameBytes reports whether a and b are the same bytes in memory.
func SameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// In is m read from frame, a copy of m.Frame: its raw members are moved to
// the same places in frame (no second reading), so that m outlives the
// bytes it was read from.
func (m Message) In(frame []byte) Message {
	base := cap(m.Frame)
	move := func(s []byte) []byte {
		if s == nil {
			return nil
		}
		at := base - cap(s) // s is a slice of m.Frame
		return frame[at : at+len(s) : at+len(s)]
	}
	m.RawID, m.Params, m.Result, m.Error = move(m.RawID), move(m.Params), move(m.Result), move(m.Error)
	m.Arguments, m.Meta = move(m.Arguments), move(m.Meta)
	m.name, m.uri, m.cursor = move(m.name), move(m.uri), move(m.cursor)
	m.Frame = frame
	return m
}
