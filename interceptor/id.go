package interceptor

import (
	"strconv"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// ID is a JSON-RPC request id. Integer and string ids are distinct (1 is
// not "1"), as JSON-RPC says. The zero ID is no id (a notification).
type ID struct {
	kind idKind
	n    int64
	s    string
}

type idKind uint8

const (
	idNone idKind = iota
	idInt
	idString
	idOther // a non-integer number or null: kept as its raw text
)

// IntID is an integer request id.
func IntID(n int64) ID { return ID{kind: idInt, n: n} }

// StringID is a string request id.
func StringID(s string) ID { return ID{kind: idString, s: s} }

// IDFromValue converts an id as SDKs hold it (int64, float64, int, string;
// nil for none).
func IDFromValue(v any) ID {
	switch v := v.(type) {
	case int64:
		return IntID(v)
	case int:
		return IntID(int64(v))
	case float64:
		if v == float64(int64(v)) {
			return IntID(int64(v))
		}
		return ID{kind: idOther, s: strconv.FormatFloat(v, 'g', -1, 64)}
	case string:
		return StringID(v)
	}
	return ID{}
}

// IDFromRaw reads an id from its raw JSON text (a front-end that reads
// frames itself; null and an empty raw are no id).
func IDFromRaw(raw []byte) ID {
	if jsonwire.IsNull(raw) {
		return ID{}
	}
	return rawID(raw)
}

// rawID reads an id from its raw JSON text.
func rawID(raw []byte) ID {
	if len(raw) == 0 {
		return ID{}
	}
	if s, ok := jsonwire.String(raw); ok {
		return StringID(s)
	}
	if n, ok := jsonwire.Int(raw); ok {
		return IntID(n)
	}
	return ID{kind: idOther, s: string(raw)}
}

// Valid reports whether the id is present.
func (id ID) Valid() bool { return id.kind != idNone }

// String is the id as jsonrpc.request.id records it.
func (id ID) String() string {
	if id.kind == idInt {
		return strconv.FormatInt(id.n, 10)
	}
	return id.s
}
