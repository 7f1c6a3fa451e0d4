package witness_test

import (
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/internal/benchdata"
	"github.com/mcpdrift/mcpdrift/contract/witness"
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
// and 10 reworded descriptions) and adds the witnesses (ns/op is both).
// Each iteration times the diff and the witnesses apart, so that both see
// the same machine load, and reports witness-ratio: (diff + witnesses) /
// diff, the budget being ≤ 1.20; witness-alloc-ratio is the same in heap
// allocations, which load does not disturb. The pair's 10 changed tools
// share one schema, so most witness work is done once;
// distinct-witness-ratio is the ratio when every tool's schema differs and
// no work can be shared. x10-witness-time-ratio is the witness time over
// schemas 10× as wide divided by the narrow one, and x10-witness-alloc-ratio
// the same in allocations, next to x10-size-ratio (listing bytes): witness
// cost grows no faster than the schemas (the pruned schemas it compiles do
// not widen at all).
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
	var diff1, wit1 time.Duration
	for b.Loop() {
		d, w := timed(old1, new1)
		diff1, wit1 = diff1+d, wit1+w
	}
	b.StopTimer()
	n := max(b.N/4, 1)
	var diffD, witD, diff10, wit10 time.Duration
	for range n {
		d, w := timed(oldD, newD)
		diffD, witD = diffD+d, witD+w
		d, w = timed(old10, new10)
		diff10, wit10 = diff10+d, wit10+w
	}
	perOp := func(d time.Duration, k int) float64 { return float64(d) / float64(k) }
	b.ReportMetric(float64(diff1+wit1)/float64(diff1), "witness-ratio")
	b.ReportMetric(float64(diffD+witD)/float64(diffD), "distinct-witness-ratio")
	b.ReportMetric(perOp(wit1, b.N)/1e6, "witness-ms/op")
	b.ReportMetric(perOp(wit10, n)/perOp(wit1, b.N), "x10-witness-time-ratio")
	b.ReportMetric(float64(size(new10))/float64(size(new1)), "x10-size-ratio")
	da := testing.AllocsPerRun(1, func() { contract.Diff(old1, new1, nil) })
	wa := testing.AllocsPerRun(1, func() { diffWithWitnesses(old1, new1) })
	b.ReportMetric(wa/da, "witness-alloc-ratio")
	da10 := testing.AllocsPerRun(1, func() { contract.Diff(old10, new10, nil) })
	wa10 := testing.AllocsPerRun(1, func() { diffWithWitnesses(old10, new10) })
	b.ReportMetric((wa10-da10)/(wa-da), "x10-witness-alloc-ratio")
}

// timed diffs a pair and adds witnesses, timing each part.
func timed(old, new *contract.Snapshot) (diff, witnesses time.Duration) {
	start := time.Now()
	r := contract.Diff(old, new, nil)
	mid := time.Now()
	witness.Report(r, old, new)
	return mid.Sub(start), time.Since(mid)
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
