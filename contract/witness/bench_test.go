package witness_test

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/internal/benchdata"
	"github.com/mcpdrift/mcpdrift/contract/witness"
	"github.com/mcpdrift/mcpdrift/internal/benchutil"
)

func benchSnapshot(b *testing.B, listing []byte) *contract.Snapshot {
	doc, err := contract.ReadDocument(contract.ReadOptions{}, listing)
	if err != nil {
		b.Fatal(err)
	}
	return doc.Snapshot
}

func diffWithWitnesses(old, new *contract.Snapshot) *contract.Report {
	r := contract.Diff(old, new, nil)
	witness.Report(r, old, new)
	return r
}

// BenchmarkDiff diffs the contract benchmark's pair (two 100-tool listings,
// 10 tools changed six levels deep: 30 breaking changes that get a witness
// and 10 reworded descriptions) with witnesses (ns/op), and in the same run
// without, reporting witness-ratio (with / without; the budget is ≤ 1.20).
// The pair's 10 changed tools share one schema, so most witness work is
// done once; distinct-witness-ratio is the same measure when every tool's
// schema differs (no work can be shared). x10-witness-time-ratio is the
// witness time over schemas 10× as wide divided by the narrow one, next
// to x10-size-ratio (listing bytes): witness cost grows no faster than the
// schemas.
func BenchmarkDiff(b *testing.B) {
	old1, new1 := benchSnapshot(b, benchdata.DriftListing(10, 6, false)), benchSnapshot(b, benchdata.DriftListing(10, 6, true))
	old10, new10 := benchSnapshot(b, benchdata.DriftListing(100, 6, false)), benchSnapshot(b, benchdata.DriftListing(100, 6, true))
	oldD, newD := benchSnapshot(b, benchdata.DistinctDriftListing(10, 6, false)), benchSnapshot(b, benchdata.DistinctDriftListing(10, 6, true))
	for _, p := range [][2]*contract.Snapshot{{old1, new1}, {old10, new10}, {oldD, newD}} {
		if n := witnesses(diffWithWitnesses(p[0], p[1])); n != 30 {
			b.Fatalf("%d witnesses, want 30", n)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		diffWithWitnesses(old1, new1)
	}
	with1 := benchutil.Elapsed(b)
	b.StopTimer()
	n := max(b.N, 1)
	without1 := benchutil.NsPerOp(n, func() { contract.Diff(old1, new1, nil) })
	withD := benchutil.NsPerOp(max(n/4, 1), func() { diffWithWitnesses(oldD, newD) })
	withoutD := benchutil.NsPerOp(max(n/4, 1), func() { contract.Diff(oldD, newD, nil) })
	with10 := benchutil.NsPerOp(max(n/4, 1), func() { diffWithWitnesses(old10, new10) })
	without10 := benchutil.NsPerOp(max(n/4, 1), func() { contract.Diff(old10, new10, nil) })
	b.ReportMetric(with1/without1, "witness-ratio")
	b.ReportMetric(withD/withoutD, "distinct-witness-ratio")
	b.ReportMetric((with10-without10)/(with1-without1), "x10-witness-time-ratio")
	b.ReportMetric(float64(size(new10))/float64(size(new1)), "x10-size-ratio")
}

func witnesses(r *contract.Report) int {
	n := 0
	for _, c := range r.Changes {
		if c.Witness.Found() {
			n++
		}
	}
	return n
}

func size(s *contract.Snapshot) int {
	n := 0
	for _, d := range s.Tools {
		n += len(d.Raw)
	}
	return n
}
