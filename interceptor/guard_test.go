package interceptor_test

import (
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/semconv"
)

func TestArgumentValidation(t *testing.T) {
	w := newWire(t, interceptor.WithArgumentValidation(true))
	w.list(1, "", listResult("", toolA))
	w.call(2, "a", `{"q":"x"}`)
	w.last("tools/call a").want(t, map[string]any{semconv.GuardArgumentsValid: true, semconv.GuardViolation: nil})
	w.call(3, "a", `{}`)
	w.last("tools/call a").want(t, map[string]any{semconv.GuardArgumentsValid: false, semconv.GuardViolation: "/: required", semconv.GuardStaleDefinition: nil})
	w.call(4, "a", `{"q":5}`)
	w.last("tools/call a").want(t, map[string]any{semconv.GuardArgumentsValid: false, semconv.GuardViolation: "/q: type"})

	// The server adds a required parameter; after the refresh a call that
	// the old definition accepts but the new one rejects was planned
	// against the stale definition.
	w.recv(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	w.list(5, "", listResult("", toolA2))
	w.call(6, "a", `{"q":"x"}`)
	w.last("tools/call a").want(t, map[string]any{semconv.GuardArgumentsValid: false, semconv.GuardStaleDefinition: true})
	w.call(7, "a", `{"q":"x","n":1}`)
	w.last("tools/call a").want(t, map[string]any{semconv.GuardArgumentsValid: true, semconv.GuardStaleDefinition: nil})
	if errs := w.tel.Errors(); len(errs) > 0 {
		t.Fatal(errs)
	}
}

func TestValidationNeverLoadsReferences(t *testing.T) {
	w := newWire(t, interceptor.WithArgumentValidation(true))
	w.list(1, "", listResult("",
		`{"name":"remote","inputSchema":{"$ref":"https://example.com/schema.json"}}`,
		`{"name":"file","inputSchema":{"$ref":"file:///etc/passwd"}}`,
		`{"name":"local","inputSchema":{"$defs":{"s":{"type":"string"}},"type":"object","properties":{"q":{"$ref":"#/$defs/s"}}}}`,
		`{"name":"draft7","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","required":["q"]}}`))
	w.call(2, "remote", `{}`)
	w.call(3, "file", `{}`)
	for _, tool := range []string{"tools/call remote", "tools/call file"} {
		w.last(tool).want(t, map[string]any{semconv.GuardArgumentsValid: nil})
	}
	errs := w.tel.Errors()
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "not loaded") {
		t.Errorf("reported: %v", errs)
	}
	w.call(4, "local", `{"q":1}`)
	w.last("tools/call local").want(t, map[string]any{semconv.GuardArgumentsValid: false})
	w.call(5, "draft7", `{}`)
	w.last("tools/call draft7").want(t, map[string]any{semconv.GuardArgumentsValid: false, semconv.GuardViolation: "/: required"})
}

// TestInFlightCallsMarkedStale: a refresh that completes while a call is in
// flight, showing its tool changed, marks that call.
func TestInFlightCallsMarkedStale(t *testing.T) {
	w := newWire(t)
	w.list(1, "", listResult("", toolA, toolB))
	w.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`)
	w.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b"}}`)
	w.list(4, "", listResult("", toolA2, toolB))
	w.recv(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	w.recv(`{"jsonrpc":"2.0","id":3,"result":{}}`)
	w.last("tools/call a").want(t, map[string]any{semconv.GuardStaleDefinition: true})
	w.last("tools/call b").want(t, map[string]any{semconv.GuardStaleDefinition: nil})
}
