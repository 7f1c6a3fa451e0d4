package staleness_test

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/staleness"
)

// def hashes a tool definition as servers' listings are hashed.
func def(t testing.TB, raw string) staleness.Definition {
	t.Helper()
	l, err := contract.DefaultLimits().HashDefinitions(contract.KindTool, []json.RawMessage{json.RawMessage(raw)})
	if err != nil || len(l) != 1 {
		t.Fatalf("hash %s: %v", raw, err)
	}
	return staleness.Definition{Digest: l[0].Digest, Raw: l[0].Raw}
}

// The quickstart's create_ticket as it drifts: v2 requires project, v3
// only rewords v2's description (arguments cannot show it), v4 requires
// priority too.
const (
	ticketV1 = `{"name":"create_ticket","description":"Open a ticket.","inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}}`
	ticketV2 = `{"name":"create_ticket","description":"Open a ticket.","inputSchema":{"type":"object","properties":{"title":{"type":"string"},"project":{"type":"string"}},"required":["title","project"]}}`
	ticketV3 = `{"name":"create_ticket","description":"Open a ticket; it pages the on-call engineer.","inputSchema":{"type":"object","properties":{"title":{"type":"string"},"project":{"type":"string"}},"required":["title","project"]}}`
	ticketV4 = `{"name":"create_ticket","description":"Open a ticket.","inputSchema":{"type":"object","properties":{"title":{"type":"string"},"project":{"type":"string"},"priority":{"enum":["low","high"]}},"required":["title","project","priority"]}}`
)

func TestJudge(t *testing.T) {
	v1, v2, v3, v4 := def(t, ticketV1), def(t, ticketV2), def(t, ticketV3), def(t, ticketV4)
	j := staleness.NewJudge(nil)
	args := func(s string) json.RawMessage { return json.RawMessage(s) }
	title, both := args(`{"title":"disk full"}`), args(`{"title":"disk full","project":"ops"}`)
	all := args(`{"title":"disk full","project":"ops","priority":"high"}`)
	for _, c := range []struct {
		name    string
		e       staleness.Evidence
		state   staleness.State
		basis   staleness.Basis
		planned string
		witness string
	}{
		{"arguments decide: planned on v1 after the host re-listed",
			staleness.Evidence{Planned: v2.Digest, Current: &v2, Superseded: []staleness.Definition{v1}, Arguments: title},
			staleness.Stale, staleness.BasisArguments, v1.Digest, "/project: required (input.property.added_required)"},
		{"digest decides: arguments fit the current definition, session not re-listed",
			staleness.Evidence{Planned: v1.Digest, Current: &v2, Superseded: []staleness.Definition{v1}, Arguments: both},
			staleness.Stale, staleness.BasisDigest, v1.Digest, ""},
		{"digest decides: arguments fit the current definition, session re-listed",
			staleness.Evidence{Planned: v2.Digest, Current: &v2, Superseded: []staleness.Definition{v1}, Arguments: both},
			staleness.Current, staleness.BasisDigest, v2.Digest, ""},
		{"digest decides: a change arguments cannot show, session not re-listed",
			staleness.Evidence{Planned: v2.Digest, Current: &v3, Superseded: []staleness.Definition{v2}, Arguments: both},
			staleness.Stale, staleness.BasisDigest, v2.Digest, ""},
		{"digest decides: the same change, session re-listed",
			staleness.Evidence{Planned: v3.Digest, Current: &v3, Superseded: []staleness.Definition{v2}, Arguments: both},
			staleness.Current, staleness.BasisDigest, v3.Digest, ""},
		{"digest decides: arguments fit no definition",
			staleness.Evidence{Planned: v2.Digest, Current: &v2, Superseded: []staleness.Definition{v1}, Arguments: args(`{"title":7}`)},
			staleness.Current, staleness.BasisDigest, v2.Digest, ""},
		{"digest decides: arguments not JSON",
			staleness.Evidence{Planned: v1.Digest, Current: &v2, Superseded: []staleness.Definition{v1}, Arguments: args(`{"title"`)},
			staleness.Stale, staleness.BasisDigest, v1.Digest, ""},
		{"digest decides: arguments unknown",
			staleness.Evidence{Planned: v1.Digest, Current: &v2, Superseded: []staleness.Definition{v1}},
			staleness.Stale, staleness.BasisDigest, v1.Digest, ""},
		{"digest decides: a digest the judge has not seen",
			staleness.Evidence{Planned: v4.Digest, Current: &v2, Arguments: both},
			staleness.Ahead, staleness.BasisDigest, v4.Digest, ""},
		{"digest decides: the tool is gone",
			staleness.Evidence{Planned: v1.Digest, Current: &staleness.Definition{}, Superseded: []staleness.Definition{v1}, Arguments: title},
			staleness.Stale, staleness.BasisDigest, v1.Digest, ""},
		{"neither: the server's definition unknown",
			staleness.Evidence{Planned: v1.Digest, Superseded: []staleness.Definition{v1}, Arguments: title},
			staleness.Unknown, staleness.BasisNone, v1.Digest, ""},
		{"neither: no planned digest, arguments fit both",
			staleness.Evidence{Current: &v3, Superseded: []staleness.Definition{v2}, Arguments: both},
			staleness.Unknown, staleness.BasisNone, "", ""},
		{"changed back v1→v2→v1: planned on v2",
			staleness.Evidence{Planned: v1.Digest, Current: &v1, Superseded: []staleness.Definition{v2, v1}, Arguments: both},
			staleness.Stale, staleness.BasisArguments, v2.Digest, "/project: additionalProperties (input.additional_properties.closed)"},
		{"changed back v1→v2→v1: planned on v1",
			staleness.Evidence{Planned: v1.Digest, Current: &v1, Superseded: []staleness.Definition{v2, v1}, Arguments: title},
			staleness.Current, staleness.BasisDigest, v1.Digest, ""},
		{"two changes v1→v2→v4: planned on v1",
			staleness.Evidence{Planned: v4.Digest, Current: &v4, Superseded: []staleness.Definition{v2, v1}, Arguments: title},
			staleness.Stale, staleness.BasisArguments, v1.Digest, "/priority: required (input.property.added_required)"},
		{"two changes v1→v2→v4: planned on v2",
			staleness.Evidence{Planned: v4.Digest, Current: &v4, Superseded: []staleness.Definition{v2, v1}, Arguments: both},
			staleness.Stale, staleness.BasisArguments, v2.Digest, "/priority: required (input.property.added_required)"},
		{"two changes v1→v2→v4: planned on v4",
			staleness.Evidence{Planned: v4.Digest, Current: &v4, Superseded: []staleness.Definition{v2, v1}, Arguments: all},
			staleness.Current, staleness.BasisDigest, v4.Digest, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := j.Judge(c.e)
			if v.State != c.state || v.Basis != c.basis || v.Planned != c.planned {
				t.Fatalf("got %s/%s planned %.12s, want %s/%s planned %.12s", v.State, v.Basis, v.Planned, c.state, c.basis, c.planned)
			}
			if got := v.Witness.String(); got != c.witness {
				t.Fatalf("witness %q, want %q", got, c.witness)
			}
		})
	}
}

// TestJudgeUnchangedToolValidatesNothing: a tool with no superseded
// definition costs no compilation (the onError hook would hear of this
// schema, which cannot compile).
func TestJudgeUnchangedToolValidatesNothing(t *testing.T) {
	var compiled atomic.Int32
	j := staleness.NewJudge(staleness.NewSchemas(0, func(string, error) { compiled.Add(1) }))
	bad := def(t, `{"name":"x","inputSchema":{"$ref":"https://example.com/s.json"}}`)
	v := j.Judge(staleness.Evidence{Planned: bad.Digest, Current: &bad, Arguments: []byte(`{}`)})
	if v.State != staleness.Current || compiled.Load() != 0 {
		t.Fatalf("%+v, %d compilations", v, compiled.Load())
	}
	other := def(t, `{"name":"x","inputSchema":{"type":"object"}}`)
	v = j.Judge(staleness.Evidence{Planned: bad.Digest, Current: &bad, Superseded: []staleness.Definition{other}, Arguments: []byte(`{}`)})
	if v.State != staleness.Current || v.Basis != staleness.BasisDigest || compiled.Load() != 1 {
		t.Fatalf("%+v, %d compile errors", v, compiled.Load())
	}
}

// TestSchemaOnlyDefinitions: a judge that keeps only inputSchemas (the
// proxy, for many sessions) gets the same verdict and witness.
func TestSchemaOnlyDefinitions(t *testing.T) {
	schemaOnly := func(d staleness.Definition) staleness.Definition {
		var m struct{ InputSchema json.RawMessage }
		if err := json.Unmarshal(d.Raw, &m); err != nil {
			t.Fatal(err)
		}
		return staleness.Definition{Digest: d.Digest, InputSchema: m.InputSchema}
	}
	v1, v2 := schemaOnly(def(t, ticketV1)), schemaOnly(def(t, ticketV2))
	v := staleness.NewJudge(nil).Judge(staleness.Evidence{Planned: v2.Digest, Current: &v2, Superseded: []staleness.Definition{v1},
		Arguments: json.RawMessage(`{"title":"disk full"}`)})
	if v.State != staleness.Stale || v.Planned != v1.Digest || v.Witness.String() != "/project: required (input.property.added_required)" {
		t.Fatalf("%+v %s", v, v.Witness)
	}
}

// TestWitnessThroughReferences: the rule is found for a schema whose
// changed member is reached through a local $ref.
func TestWitnessThroughReferences(t *testing.T) {
	old := def(t, `{"name":"q","inputSchema":{"type":"object","$defs":{"mode":{"enum":["fast","slow"]}},"properties":{"mode":{"$ref":"#/$defs/mode"}}}}`)
	cur := def(t, `{"name":"q","inputSchema":{"type":"object","$defs":{"mode":{"enum":["fast"]}},"properties":{"mode":{"$ref":"#/$defs/mode"}}}}`)
	v := staleness.NewJudge(nil).Judge(staleness.Evidence{Planned: cur.Digest, Current: &cur, Superseded: []staleness.Definition{old},
		Arguments: []byte(`{"mode":"slow"}`)})
	if v.State != staleness.Stale || v.Witness.String() != "/mode: enum (input.enum.value_removed)" {
		t.Fatalf("%+v %s", v, v.Witness)
	}
}

// TestWitnessHoldsNoValues: a witness names members and keywords; the
// argument's value (here a token) appears nowhere in it.
func TestWitnessHoldsNoValues(t *testing.T) {
	old := def(t, `{"name":"k","inputSchema":{"type":"object","properties":{"key":{"type":"string"}}}}`)
	cur := def(t, `{"name":"k","inputSchema":{"type":"object","properties":{"key":{"type":"string","maxLength":8}}}}`)
	secret := "sk_live_0123456789abcdefghij"
	v := staleness.NewJudge(nil).Judge(staleness.Evidence{Current: &cur, Superseded: []staleness.Definition{old},
		Arguments: []byte(`{"key":"` + secret + `"}`)})
	b, _ := json.Marshal(v.Witness)
	if v.State != staleness.Stale || v.Witness.Argument != "key" || strings.Contains(string(b), secret) {
		t.Fatalf("%+v %s", v, b)
	}
	if got := v.Witness.String(); got != "/key: maxLength (input.limit.added)" {
		t.Fatalf("witness %q", got)
	}
}
