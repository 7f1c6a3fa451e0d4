package interceptor_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

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

// guardCall asks the guard about a call of tool with args, as a front-end
// above the wire does before sending it.
func (w *wire) guardCall(id int, tool, args string) *interceptor.Refusal {
	return w.sess.GuardCall(w.ctx, interceptor.IntID(int64(id)), json.RawMessage(fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args)))
}

// envelope decodes a refusal's result.
func envelope(t *testing.T, r *interceptor.Refusal) map[string]any {
	t.Helper()
	var res struct {
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
		Content           []struct{ Text string }
	}
	if err := json.Unmarshal(r.Result(), &res); err != nil || !res.IsError || len(res.Content) != 1 || res.Content[0].Text != r.Text() {
		t.Fatalf("result %s: %v", r.Result(), err)
	}
	return res.StructuredContent
}

// TestStaleRefusal: after the agent has listed the changed tool, a call
// whose arguments fit only the old definition is refused with the
// envelope and the witness, and its span says stale; a call written for
// the new definition, and any call without the option, is sent.
func TestStaleRefusal(t *testing.T) {
	w := newWire(t, interceptor.WithStaleRefusal(true))
	w.list(1, "", listResult("", toolA, toolB))
	if r := w.guardCall(2, "a", `{"q":"x"}`); r != nil {
		t.Fatalf("a call to an unchanged tool refused: %v", r)
	}
	w.recv(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	w.list(3, "", listResult("", toolA2, toolB))
	digests, _ := digestsOf(t, listResult("", toolA, toolB))
	digests2, _ := digestsOf(t, listResult("", toolA2, toolB))

	r := w.guardCall(4, "a", `{"q":"x"}`)
	if r == nil {
		t.Fatal("a call planned on the old definition was sent after the re-list")
	}
	sc := envelope(t, r)
	wantWitness := map[string]any{"rule": "input.property.added_required", "path": "", "keyword": "required", "argument": "n"}
	if sc["error_code"] != semconv.RefusalStaleToolSchema || sc["tool"] != "a" || sc["required_action"] != semconv.ActionRefreshTools ||
		sc["side_effect_started"] != false || sc["basis"] != "arguments" || sc["planned_digest"] != digests["a"] ||
		sc["current_digest"] != digests2["a"] || fmt.Sprint(sc["witness"]) != fmt.Sprint(wantWitness) {
		t.Fatalf("envelope %v", sc)
	}
	w.last("tools/call a").want(t, map[string]any{
		semconv.JSONRPCRequestID: "4", semconv.ErrorType: semconv.ErrorTypeRefused, semconv.ToolStale: true,
		semconv.GuardRefusal: semconv.RefusalStaleToolSchema, semconv.GuardStaleBasis: semconv.StaleBasisArguments,
		semconv.GuardWitnessRule: "input.property.added_required", semconv.GuardWitnessArgument: "n",
		semconv.GuardWitnessKeyword: "required", semconv.GuardWitnessPath: "",
		semconv.GuardPlannedDigest: digests["a"], semconv.GuardCurrentDigest: digests2["a"], semconv.ToolDigest: digests2["a"],
	})
	if r := w.guardCall(5, "a", `{"q":"x","n":1}`); r != nil {
		t.Fatalf("a call written for the new definition refused: %v", r)
	}
	if r := w.guardCall(6, "b", `{}`); r != nil {
		t.Fatalf("a call to an unchanged tool refused: %v", r)
	}
	// Listing the same definitions again keeps what the session was served.
	w.list(7, "", listResult("", toolA2, toolB))
	if r := w.guardCall(8, "a", `{"q":"x"}`); r == nil {
		t.Fatal("the old plan passed after a second re-list")
	}

	off := newWire(t)
	off.list(1, "", listResult("", toolA))
	off.list(2, "", listResult("", toolA2))
	if r := off.guardCall(3, "a", `{"q":"x"}`); r != nil {
		t.Fatalf("refused without WithStaleRefusal: %v", r)
	}
}

// TestStaleRefusalTwoChanges: v1 → v2 → v3, a call planned on either
// earlier definition is refused, naming the one it fits.
func TestStaleRefusalTwoChanges(t *testing.T) {
	const toolA3 = `{"name":"a","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"},"m":{"type":"integer"}},"required":["q","n","m"]}}`
	w := newWire(t, interceptor.WithStaleRefusal(true))
	w.list(1, "", listResult("", toolA))
	w.list(2, "", listResult("", toolA2))
	w.list(3, "", listResult("", toolA3))
	d1, _ := digestsOf(t, listResult("", toolA))
	d2, _ := digestsOf(t, listResult("", toolA2))
	for _, c := range []struct{ args, planned string }{{`{"q":"x"}`, d1["a"]}, {`{"q":"x","n":1}`, d2["a"]}} {
		r := w.guardCall(4, "a", c.args)
		if r == nil || r.Verdict.Planned != c.planned || r.Verdict.Witness.Argument != "m" {
			t.Fatalf("%s: %+v", c.args, r)
		}
	}
	if r := w.guardCall(5, "a", `{"q":"x","n":1,"m":2}`); r != nil {
		t.Fatalf("a current call refused: %v", r)
	}
}

// TestStaleWindow: a change arguments cannot show (the description)
// refuses the first call after the session was served it, once, telling the
// model to read the tool again; a go-sdk call (no id yet) still gets a span.
func TestStaleWindow(t *testing.T) {
	const (
		toolD1 = `{"name":"d","description":"Deletes a draft.","inputSchema":{"type":"object"}}`
		toolD2 = `{"name":"d","description":"Deletes a draft and every copy of it.","inputSchema":{"type":"object"}}`
	)
	w := newWire(t, interceptor.WithStaleWindow(time.Hour))
	w.list(1, "", listResult("", toolD1, toolB))
	if r := w.guardCall(2, "d", `{}`); r != nil {
		t.Fatalf("refused before any change: %v", r)
	}
	w.list(3, "", listResult("", toolD2, toolB))
	if r := w.guardCall(4, "b", `{}`); r != nil {
		t.Fatalf("a call to an unchanged tool refused: %v", r)
	}
	r := w.sess.GuardCall(w.ctx, interceptor.ID{}, json.RawMessage(`{"name":"d","arguments":{}}`))
	if r == nil {
		t.Fatal("the first call after a description change was sent")
	}
	sc := envelope(t, r)
	if sc["required_action"] != semconv.ActionRereadTool || sc["basis"] != "window" || sc["side_effect_started"] != false || !strings.Contains(r.Text(), "Read the tool's current definition") {
		t.Fatalf("envelope %v", sc)
	}
	w.last("tools/call d").want(t, map[string]any{semconv.JSONRPCRequestID: nil, semconv.ToolStale: true, semconv.GuardStaleBasis: semconv.StaleBasisWindow})
	if r := w.guardCall(5, "d", `{}`); r != nil {
		t.Fatalf("the second call refused: %v", r)
	}
}

// TestStaleRefusalPaged: a change on a listing's second page is caught as
// well as one on its first.
func TestStaleRefusalPaged(t *testing.T) {
	w := newWire(t, interceptor.WithStaleRefusal(true))
	w.list(1, "", listResult("p2", toolB))
	w.list(2, "p2", listResult("", toolA))
	w.list(3, "", listResult("p2", toolB))
	w.list(4, "p2", listResult("", toolA2))
	if r := w.guardCall(5, "a", `{"q":"x"}`); r == nil || r.Verdict.Witness.Argument != "n" {
		t.Fatalf("a change on page 2: %+v", r)
	}
	if r := w.guardCall(6, "b", `{}`); r != nil {
		t.Fatalf("b refused: %v", r)
	}
}
