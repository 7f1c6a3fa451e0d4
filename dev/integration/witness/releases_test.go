package witness_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/witness"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// The witnesses of the real server-everything releases, from the contracts
// captured in testdata/fixtures.

func fixture(t *testing.T, version string) *contract.Snapshot {
	t.Helper()
	init, list := testservers.Fixture(t, version)
	doc, err := contract.ReadDocument(contract.ReadOptions{}, init, list)
	if err != nil {
		t.Fatal(err)
	}
	return doc.Snapshot
}

// TestServerEverythingReleases: on the real release pairs every breaking
// tool change gets a true witness: the input change of 2026.1.26 (an enum
// on get-structured-content's location) a location outside it, and every
// removed or renamed tool the smallest old call.
func TestServerEverythingReleases(t *testing.T) {
	versions := testservers.EverythingVersions
	for i := 0; i+1 < len(versions); i++ {
		old, new := fixture(t, versions[i]), fixture(t, versions[i+1])
		r := contract.Diff(old, new, nil)
		witness.Report(r, old, new)
		oldDefs := map[string]json.RawMessage{}
		for _, d := range old.Tools {
			oldDefs[d.Key] = d.Raw
		}
		for _, c := range r.Changes {
			if c.Severity != contract.Breaking || c.Subject != contract.KindTool {
				continue
			}
			if !c.Witness.Found() || !c.Witness.Narrowing() {
				t.Errorf("%s→%s: %s %s: %+v", versions[i], versions[i+1], c.Rule, c.Name, c.Witness)
				continue
			}
			switch c.Rule {
			case "tool.removed", "tool.renamed":
				if !validUnder(t, oldDefs[c.Name], c.Witness.Arguments) || !strings.Contains(c.Witness.New, `"`+c.Name+`"`) {
					t.Errorf("%s: old call %s: %+v", c.Name, c.Witness.Arguments, c.Witness)
				}
			case "input.enum.added":
				if string(c.Witness.Arguments) != `{"location":"example"}` || !strings.Contains(c.Witness.New, "/location: value must be one of") {
					t.Errorf("%s: %+v", c.Name, c.Witness)
				}
			default:
				t.Errorf("unexpected breaking change %s on %s", c.Rule, c.Name)
			}
		}
	}
}

// validUnder validates arguments against a tool definition's whole inputSchema.
func validUnder(t *testing.T, def, args []byte) bool {
	t.Helper()
	sch, err := witness.Compile(jsonwire.Lookup(def, "inputSchema"), "urn:test", witness.CompileOptions{AssertFormat: true})
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(inst) == nil
}

// TestCall: the smallest old call validates against its tool, for every
// tool of every server-everything release.
func TestCall(t *testing.T) {
	g := witness.New()
	for _, v := range testservers.EverythingVersions {
		for _, d := range fixture(t, v).Tools {
			args, err := g.Call(d.Raw)
			if err != nil {
				t.Errorf("%s %s: %v", v, d.Key, err)
				continue
			}
			if !validUnder(t, d.Raw, args) {
				t.Errorf("%s %s: %s is not valid", v, d.Key, args)
			}
		}
	}
	if args, err := g.Call(json.RawMessage(`{"name":"bare"}`)); err != nil || string(args) != `{}` {
		t.Errorf("no inputSchema: %s %v", args, err)
	}
	if _, err := g.Call(json.RawMessage(`{"name":"x","inputSchema":{"type":"object","properties":{"a":{"type":"string","minLength":5,"maxLength":2}},"required":["a"]}}`)); err == nil {
		t.Error("an unsatisfiable schema gave a call")
	}
}

// TestDeterministic: the same change gives the same witness, byte for
// byte, from fresh generators and from one that has seen other tools.
func TestDeterministic(t *testing.T) {
	old, new := fixture(t, "2025.11.25"), fixture(t, "2026.1.26")
	var outs []string
	for range 3 {
		r := contract.Diff(old, new, nil)
		witness.Report(r, old, new)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(b))
	}
	g := witness.New()
	g.Report(contract.Diff(fixture(t, "2025.7.1"), fixture(t, "2025.9.25"), nil), fixture(t, "2025.7.1"), fixture(t, "2025.9.25"))
	r := contract.Diff(old, new, nil)
	g.Report(r, old, new)
	b, _ := json.Marshal(r)
	outs = append(outs, string(b))
	for _, o := range outs[1:] {
		if o != outs[0] {
			t.Fatalf("witnesses differ between runs:\n%s\n%s", outs[0], o)
		}
	}
}
