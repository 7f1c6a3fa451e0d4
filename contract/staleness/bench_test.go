package staleness_test

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/contract/staleness"
)

// BenchmarkJudge: the judgement of one call, for a tool that never changed
// (a few comparisons), a changed tool called as the current definition
// wants (one validation), and a stale call (two validations and a witness,
// whose rule is classified once per pair of definitions).
func BenchmarkJudge(b *testing.B) {
	v1, v2 := def(b, ticketV1), def(b, ticketV2)
	j := staleness.NewJudge(nil)
	raw := []byte(`{"title":"disk full","project":"ops"}`)
	cases := []struct {
		name  string
		e     staleness.Evidence
		state staleness.State
	}{
		{"unchanged", staleness.Evidence{Planned: v2.Digest, Current: &v2}, staleness.Current},
		{"changed/current", staleness.Evidence{Planned: v2.Digest, Current: &v2, Superseded: []staleness.Definition{v1}}, staleness.Current},
		{"changed/stale", staleness.Evidence{Planned: v2.Digest, Current: &v1, Superseded: []staleness.Definition{v2}}, staleness.Stale},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e := c.e
				e.Arguments = raw
				if v := j.Judge(e); v.State != c.state {
					b.Fatal(v.State)
				}
			}
		})
	}
}
