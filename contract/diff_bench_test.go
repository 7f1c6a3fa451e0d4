package contract

import (
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract/internal/benchdata"
)

// driftListing is benchdata.DriftListing as a snapshot.
func driftListing(width, depth int, changed bool) *Snapshot {
	doc, err := ReadDocument(ReadOptions{}, benchdata.DriftListing(width, depth, changed))
	if err != nil {
		panic(err)
	}
	return doc.Snapshot
}

func listingBytes(s *Snapshot) int {
	n := 0
	for _, d := range s.Tools {
		n += len(d.Raw)
	}
	return n
}

// listingValues counts the JSON values (schema nodes, strings, numbers) of
// a listing: the measure of schema size the diff's work is linear in.
func listingValues(s *Snapshot) int {
	n := 0
	for _, d := range s.Tools {
		v, _ := parseValue(d.Raw)
		n += schemaSize(v)
	}
	return n
}

// BenchmarkDiff diffs two 100-tool listings in which 10 tools changed deep
// inside nested schemas (ns/op, allocs/op). In the same run it times the
// same diff over schemas 10× as wide and reports x10-time-ratio next to
// x10-size-ratio (JSON values, the measure of schema size), their quotient
// linearity (≈ 1 when time grows linearly with size), and x10-alloc-ratio,
// the same comparison in allocations, which machine load does not disturb.
func BenchmarkDiff(b *testing.B) {
	const depth = 6
	old1, new1 := driftListing(10, depth, false), driftListing(10, depth, true)
	old10, new10 := driftListing(100, depth, false), driftListing(100, depth, true)
	want := len(Diff(old1, new1, nil).Changes)
	if want == 0 || len(Diff(old10, new10, nil).Changes) != want {
		b.Fatalf("unexpected change counts %d / %d", want, len(Diff(old10, new10, nil).Changes))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Diff(old1, new1, nil)
	}
	ns1 := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.StopTimer()
	// The wide diff, timed by hand: testing.Benchmark cannot run inside a benchmark.
	n10 := max(b.N/4, 1)
	start := time.Now()
	for range n10 {
		Diff(old10, new10, nil)
	}
	ns10 := float64(time.Since(start).Nanoseconds()) / float64(n10)
	sizeRatio := float64(listingValues(new10)) / float64(listingValues(new1))
	allocRatio := testing.AllocsPerRun(1, func() { Diff(old10, new10, nil) }) / testing.AllocsPerRun(1, func() { Diff(old1, new1, nil) })
	b.ReportMetric(allocRatio, "x10-alloc-ratio")
	b.ReportMetric(ns10/ns1, "x10-time-ratio")
	b.ReportMetric(sizeRatio, "x10-size-ratio")
	b.ReportMetric(ns10/ns1/sizeRatio, "linearity")
	b.ReportMetric(float64(listingBytes(new1))/1024, "listing-KiB")
	b.ReportMetric(float64(want), "changes")
}

// BenchmarkDiffWide is the 10× listing on its own, for its ns/op and allocs.
func BenchmarkDiffWide(b *testing.B) {
	old, new := driftListing(100, 6, false), driftListing(100, 6, true)
	b.ReportAllocs()
	for b.Loop() {
		Diff(old, new, nil)
	}
}

func TestDriftListingChanges(t *testing.T) {
	r := record(t, Diff(driftListing(4, 3, false), driftListing(4, 3, true), nil))
	s := r.Summary()
	// per changed tool: type narrowed, enum value removed, required param
	// added (breaking) and a description (warning)
	if s.Breaking != 30 || s.Warning != 10 || s.Total() != 40 {
		t.Errorf("summary %+v: %v", s, rulesAt(r))
	}
	c, _ := findChange(r, "input.property.added_required")
	if c.Path != "/inputSchema/properties/next/properties/next/properties/next/properties/cursor" {
		t.Errorf("path through $ref: %s", c.Path)
	}
}
