package witness_test

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/internal/schemacases"
	"github.com/mcpdrift/mcpdrift/contract/witness"
)

// FuzzWitness: for arbitrary pairs of input schemas, generating witnesses
// never panics or loops, and every witness is true: validated against the
// whole schemas (not the pruned ones the generator compiles), the version
// it says accepts it does, and the other does not.
func FuzzWitness(f *testing.F) {
	for _, c := range schemacases.Cases {
		for _, v := range schemacases.Variants {
			f.Add(v.Wrap(c.Old), v.Wrap(c.New))
		}
	}
	f.Add(`{"$ref":"#","properties":{"a":{"$ref":"#"}},"required":["a"]}`, `{"properties":{"a":{"type":"integer"}}}`)
	f.Add(`{"type":"object","properties":{"k":{"type":"string","pattern":"^[a-f0-9]{8}$"}}}`, `{"type":"object","properties":{"k":{"type":"string","pattern":"^[a-f]{8}$"}}}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 1<<12 || len(b) > 1<<12 {
			return
		}
		docA, errA := contract.ReadDocument(contract.ReadOptions{}, []byte(`{"tools":[{"name":"t","inputSchema":`+a+`}]}`))
		docB, errB := contract.ReadDocument(contract.ReadOptions{}, []byte(`{"tools":[{"name":"t","inputSchema":`+b+`}]}`))
		if errA != nil || errB != nil {
			return
		}
		old, new := docA.Snapshot, docB.Snapshot
		r := contract.Diff(old, new, nil)
		witness.Report(r, old, new)
		for _, c := range r.Changes {
			w := c.Witness
			if !w.Found() || c.Rule == "tool.removed" || c.Rule == "tool.renamed" {
				continue
			}
			oldOK, okA := accepts(a, w.Arguments)
			newOK, okB := accepts(b, w.Arguments)
			if !okA || !okB {
				continue // a schema the full compile refuses (the pruned one may compile)
			}
			if oldOK != (w.Old == contract.WitnessValid) || newOK != (w.New == contract.WitnessValid) || oldOK == newOK {
				t.Fatalf("%s: witness %s says old %q new %q; the whole schemas say old %v new %v\nold %s\nnew %s", c.Rule, w.Arguments, w.Old, w.New, oldOK, newOK, a, b)
			}
		}
	})
}

// accepts validates arguments against a whole schema; ok is false when the
// schema does not compile.
func accepts(schema string, args []byte) (valid, ok bool) {
	sch, err := witness.Compile([]byte(schema), "urn:fuzz", witness.CompileOptions{AssertFormat: true})
	if err != nil {
		return false, false
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return false, false
	}
	return sch.Validate(inst) == nil, true
}
