package interceptor

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

// TestSessionsShareListing: sessions served the same listing hold one copy
// of it (a proxy's thousand sessions to one server hold one listing); a
// different listing is its own.
func TestSessionsShareListing(t *testing.T) {
	ic := New()
	served := func(listing string) map[string]toolDef {
		s := ic.NewSession(Endpoint{Pipe: true})
		s.Request(context.Background(), IntID(1), methodToolsList, nil)
		s.Response(IntID(1), json.RawMessage(listing), nil)
		return s.tools.Load().tools
	}
	const v1 = `{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}}]}`
	const v2 = `{"tools":[{"name":"a","inputSchema":{"type":"object","required":["x"]}},{"name":"b","inputSchema":{"type":"object"}}]}`
	one, two, other := served(v1), served(v1), served(v2)
	same := func(a, b map[string]toolDef) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	if !same(one, two) {
		t.Error("two sessions served the same listing hold two copies")
	}
	if same(one, other) || other["a"].digest == one["a"].digest {
		t.Error("a changed listing is shared with the old one")
	}
}
