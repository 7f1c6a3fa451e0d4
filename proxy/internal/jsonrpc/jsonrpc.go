// Package jsonrpc is the JSON-RPC the proxy writes itself — error and result
// responses, batches — and the few facts about a frame every mode needs.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// CodeUpstream is the JSON-RPC error code of a request the upstream could
// not take (JSON-RPC's implementation-defined server error range).
const CodeUpstream = -32000

// Error is a JSON-RPC error response (to id null when id is empty).
func Error(id json.RawMessage, code int, message string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b := make([]byte, 0, 96+len(message))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":`...)
	return append(appendErrorObject(b, code, message), '}')
}

// ErrorObject is a JSON-RPC error object.
func ErrorObject(code int, message string) []byte {
	return appendErrorObject(make([]byte, 0, 48+len(message)), code, message)
}

func appendErrorObject(b []byte, code int, message string) []byte {
	b = append(b, `{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = jsonwire.AppendString(b, message)
	return append(b, '}')
}

// Response is a JSON-RPC result response (to id null when id is empty).
func Response(id, result []byte) []byte {
	if len(id) == 0 {
		id = []byte("null")
	}
	b := make([]byte, 0, 40+len(id)+len(result))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// Array is a batch of the messages elems.
func Array(elems [][]byte) []byte {
	return append(append([]byte{'['}, bytes.Join(elems, []byte{','})...), ']')
}

// IsBatch reports whether body is a JSON array (a batch, or garbage that
// starts like one).
func IsBatch(body []byte) bool {
	i := jsonwire.SkipSpace(body, 0)
	return i < len(body) && body[i] == '['
}

// IsID reports whether raw is a JSON-RPC id: a string or a number.
func IsID(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '"' || raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

// KeyFold reports whether m's name is name in any case (what a client
// decoding with encoding/json reads as name).
func KeyFold(m jsonwire.Member, name string) bool {
	if jsonwire.KeyIs(m.Key, name) {
		return true
	}
	if len(m.Key) < len(name) {
		return false
	}
	if bytes.IndexByte(m.Key, '\\') < 0 {
		return bytes.EqualFold(m.Key, []byte(name)) // as m.Name() would give it, without a copy
	}
	s, ok := m.Name()
	return ok && strings.EqualFold(s, name)
}

// OwnPrefix starts the ids of the proxy's own requests ("mcpdrift-proxy-N"):
// strings no agent uses, so their answers are never confused with the
// agent's.
const OwnPrefix = "mcpdrift-proxy-"

// ownIDStart is how a raw own id starts.
var ownIDStart = []byte(`"` + OwnPrefix)

// IsOwnID reports whether raw (an id as the wire has it) is one of the
// proxy's own.
func IsOwnID(raw []byte) bool { return bytes.HasPrefix(raw, ownIDStart) }

// BOM is the UTF-8 byte order mark a JSON text may start with: clients
// that decode bytes skip it.
var BOM = []byte("\xef\xbb\xbf")
