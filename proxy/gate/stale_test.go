package gate_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/proxy/gate"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// create_ticket as the quickstart server drifts: v2 requires project.
var (
	ticketV1 = gate.Definition{Digest: "v1", Schema: []byte(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`)}
	ticketV2 = gate.Definition{Digest: "v2", Schema: []byte(`{"type":"object","properties":{"title":{"type":"string"},"project":{"type":"string"}},"required":["title","project"]}`)}
	ticketV3 = gate.Definition{Digest: "v3", Schema: []byte(`{"type":"object","properties":{"title":{"type":"string"},"project":{"type":"string"},"due":{"type":"string"}},"required":["title","project","due"]}`)}
)

// envelope is a refusal's structuredContent as the agent reads it.
func envelope(t *testing.T, ref *gate.Refusal) map[string]any {
	t.Helper()
	var frame struct {
		Result struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(ref.Answer(json.RawMessage(`7`), "tools/call"), &frame); err != nil || !frame.Result.IsError {
		t.Fatalf("answer %s: %v", ref.Answer(json.RawMessage(`7`), "tools/call"), err)
	}
	return frame.Result.StructuredContent
}

// TestCheckArguments: the gate judges a changed tool's call by its
// arguments first: a plan made on v1 is refused after the session listed
// v2 (its digest is then v2's), a call written for v2 passes, and with no
// argument evidence the digest decides as before.
func TestCheckArguments(t *testing.T) {
	g := gate.New(gate.Options{Refuse: true})
	g.Learn(gate.Definitions{"create_ticket": ticketV1, "echo": {Digest: "e1"}})
	g.Learn(gate.Definitions{"create_ticket": ticketV2, "echo": {Digest: "e1"}})
	old, fresh := json.RawMessage(`{"title":"disk full"}`), json.RawMessage(`{"title":"disk full","project":"ops"}`)

	ref := g.Check(gate.Call{Tool: "create_ticket", Planned: "v2", Listed: true, Arguments: old})
	if ref == nil || ref.Code() != semconv.RefusalStaleToolSchema {
		t.Fatalf("the v1 plan after the re-list: %v", ref)
	}
	sc := envelope(t, ref)
	w, _ := sc["witness"].(map[string]any)
	if sc["basis"] != "arguments" || sc["planned_digest"] != "v1" || sc["current_digest"] != "v2" || sc["side_effect_started"] != false ||
		w["argument"] != "project" || w["rule"] != "input.property.added_required" {
		t.Fatalf("envelope %v", sc)
	}
	for _, c := range []struct {
		name string
		call gate.Call
		want bool
	}{
		{"written for v2, session re-listed", gate.Call{Tool: "create_ticket", Planned: "v2", Listed: true, Arguments: fresh}, false},
		{"written for v2, session not re-listed (the digest decides)", gate.Call{Tool: "create_ticket", Planned: "v1", Listed: true, Arguments: fresh}, true},
		{"an unchanged tool", gate.Call{Tool: "echo", Planned: "e1", Listed: true, Arguments: old}, false},
		{"arguments fit neither, session re-listed", gate.Call{Tool: "create_ticket", Planned: "v2", Listed: true, Arguments: json.RawMessage(`{}`)}, false},
	} {
		if got := g.Check(c.call) != nil; got != c.want {
			t.Errorf("%s: refused %v, want %v", c.name, got, c.want)
		}
	}

	// Two changes in a row: plans on v1 and v2 both fit only what is gone.
	g.Learn(gate.Definitions{"create_ticket": ticketV3, "echo": {Digest: "e1"}})
	for planned, args := range map[string]json.RawMessage{"v1": old, "v2": fresh} {
		ref := g.Check(gate.Call{Tool: "create_ticket", Planned: "v3", Listed: true, Arguments: args})
		if ref == nil || envelope(t, ref)["planned_digest"] != planned {
			t.Errorf("plan on %s after v3: %v", planned, ref)
		}
	}
	// Another session's gate shares no history.
	if ref := g.Fork().Check(gate.Call{Tool: "create_ticket", Planned: "v3", Listed: true, Arguments: old}); ref != nil {
		t.Errorf("a fork judged with another session's history: %v", ref)
	}
}

// TestCheckWindow: with --stale-window, the first call to a tool after the
// session was served a change of it is refused once, asking the model to
// read the tool again; the next passes, and so do other tools.
func TestCheckWindow(t *testing.T) {
	g := gate.New(gate.Options{StaleWindow: time.Hour})
	v1 := gate.Definitions{"create_ticket": ticketV1, "echo": {Digest: "e1"}}
	g.Learn(v1)
	g.Serve(v1)
	if ref := g.Check(gate.Call{Tool: "create_ticket", Planned: "v1", Listed: true}); ref != nil {
		t.Fatalf("refused before a change: %v", ref)
	}
	v2 := gate.Definitions{"create_ticket": ticketV2, "echo": {Digest: "e1"}}
	g.Learn(v2)
	g.Serve(v2)
	if ref := g.Check(gate.Call{Tool: "echo", Planned: "e1", Listed: true}); ref != nil {
		t.Fatalf("an unchanged tool refused: %v", ref)
	}
	call := gate.Call{Tool: "create_ticket", Planned: "v2", Listed: true, Arguments: json.RawMessage(`{"title":"t","project":"p"}`)}
	ref := g.Check(call)
	if ref == nil {
		t.Fatal("the first call after the change passed")
	}
	if sc := envelope(t, ref); sc["required_action"] != semconv.ActionRereadTool || sc["basis"] != "window" {
		t.Fatalf("envelope %v", sc)
	}
	if ref := g.Check(call); ref != nil {
		t.Fatalf("the second call refused: %v", ref)
	}
}
