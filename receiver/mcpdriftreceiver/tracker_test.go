package mcpdriftreceiver

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
)

// snap builds a sealed snapshot whose tools are name -> description.
func snap(t testing.TB, tools map[string]string) *contract.Snapshot {
	t.Helper()
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Strings(names)
	var raws []json.RawMessage
	for _, n := range names {
		raw, _ := json.Marshal(map[string]any{"name": n, "description": tools[n], "inputSchema": map[string]any{"type": "object"}})
		raws = append(raws, raw)
	}
	l, err := contract.DefaultLimits().HashDefinitions(contract.KindTool, raws)
	if err != nil {
		t.Fatal(err)
	}
	s := &contract.Snapshot{ProtocolVersion: "2025-11-25", Tools: l, Capabilities: json.RawMessage(`{"tools":{}}`)}
	if err := s.Seal(); err != nil {
		t.Fatal(err)
	}
	return s
}

func newTestTracker(confirm int, pinned bool) *tracker {
	return newTracker(trackerConfig{limits: contract.DefaultLimits(), confirmAfter: confirm, pinned: pinned, volatileAfter: 3, ignoreVolatile: true},
		func(old, new *contract.Snapshot) *contract.Report { return contract.Diff(old, new, nil) })
}

func kinds(st step) []eventKind {
	var k []eventKind
	for _, e := range st.events {
		k = append(k, e.kind)
	}
	return k
}

func TestTrackerConfirmsAfterN(t *testing.T) {
	a := snap(t, map[string]string{"search": "Search the web"})
	b := snap(t, map[string]string{"search": "Search the web", "fetch": "Fetch a page"})
	tr := newTestTracker(2, false)
	now := time.Unix(1000, 0)
	if st := tr.observe(a, now); fmt.Sprint(kinds(st)) != fmt.Sprint([]eventKind{eventSnapshot}) || !st.persist {
		t.Fatalf("first observation: %v", kinds(st))
	}
	if st := tr.observe(a, now); len(st.events) != 0 {
		t.Fatalf("unchanged: %v", kinds(st))
	}
	if st := tr.observe(b, now); len(st.events) != 0 {
		t.Fatalf("first sight of a new contract must not be drift: %v", kinds(st))
	}
	st := tr.observe(b, now)
	if fmt.Sprint(kinds(st)) != fmt.Sprint([]eventKind{eventDrift, eventSnapshot}) || !st.persist {
		t.Fatalf("confirmed: %v", kinds(st))
	}
	if st.events[0].previous != a || st.events[0].current != b {
		t.Error("drift must compare baseline with the confirmed contract")
	}
	if st := tr.observe(b, now); len(st.events) != 0 {
		t.Fatalf("after advance: %v", kinds(st))
	}
	// A blip (one observation) back to the old contract is not drift.
	tr.observe(a, now)
	if st := tr.observe(b, now); len(st.events) != 0 {
		t.Fatalf("blip: %v", kinds(st))
	}
}

func TestTrackerMixedFleet(t *testing.T) {
	a := snap(t, map[string]string{"search": "v1"})
	b := snap(t, map[string]string{"search": "v2"})
	tr := newTestTracker(3, false)
	now := time.Unix(1000, 0)
	var all []eventKind
	for i, s := range []*contract.Snapshot{a, b, a, b, a, b, a, b, a} {
		st := tr.observe(s, now.Add(time.Duration(i)*time.Minute))
		all = append(all, kinds(st)...)
	}
	want := []eventKind{eventSnapshot, eventMixedOpen}
	if fmt.Sprint(all) != fmt.Sprint(want) {
		t.Fatalf("alternating fleet: got %v, want %v (one mixed event, no drift per flip)", all, want)
	}
	// b holds for confirm_after probes: mixed resolves, then it is drift.
	var end []eventKind
	var resolved event
	for range 3 {
		st := tr.observe(b, now)
		for _, e := range st.events {
			if e.kind == eventMixedResolved {
				resolved = e
			}
		}
		end = append(end, kinds(st)...)
	}
	if fmt.Sprint(end) != fmt.Sprint([]eventKind{eventMixedResolved, eventDrift, eventSnapshot}) {
		t.Fatalf("resolution: %v", end)
	}
	if len(resolved.variants) != 2 || resolved.current != b {
		t.Errorf("resolved variants %+v", resolved.variants)
	}
}

func TestTrackerMixedResolvesToBaseline(t *testing.T) {
	a := snap(t, map[string]string{"search": "v1"})
	b := snap(t, map[string]string{"search": "v2"})
	tr := newTestTracker(2, false)
	var all []eventKind
	for _, s := range []*contract.Snapshot{a, b, a, b, a, a} {
		all = append(all, kinds(tr.observe(s, time.Unix(0, 0)))...)
	}
	if fmt.Sprint(all) != fmt.Sprint([]eventKind{eventSnapshot, eventMixedOpen, eventMixedResolved}) {
		t.Fatalf("canary rolled back: %v", all)
	}
}

func TestTrackerPinnedRepeats(t *testing.T) {
	a := snap(t, map[string]string{"search": "v1"})
	b := snap(t, map[string]string{"search": "v2"})
	tr := newTestTracker(2, true)
	tr.observe(a, time.Unix(0, 0))
	tr.observe(b, time.Unix(0, 0))
	var drifts int
	for range 3 {
		for _, e := range tr.observe(b, time.Unix(0, 0)).events {
			if e.kind == eventDrift {
				drifts++
				if e.previous != a {
					t.Error("pinned drift must compare against the pinned baseline")
				}
			}
		}
	}
	if drifts != 3 {
		t.Fatalf("pinned drift should repeat on every observation: %d", drifts)
	}
	if tr.baseline != a {
		t.Error("pinned baseline advanced")
	}
	if st := tr.observe(a, time.Unix(0, 0)); len(st.events) != 0 || tr.openDrift != nil {
		t.Error("back on the baseline: the open drift closes silently")
	}
}

func TestTrackerVolatileField(t *testing.T) {
	tr := newTestTracker(2, false)
	var all []eventKind
	var field fieldKey
	for i := range 8 {
		s := snap(t, map[string]string{"search": fmt.Sprintf("Search. Session URL https://x.example/s/%d", i), "fetch": "Fetch"})
		for _, e := range tr.observe(s, time.Unix(int64(i), 0)).events {
			all = append(all, e.kind)
			if e.kind == eventVolatile {
				field = e.field
			}
		}
	}
	if fmt.Sprint(all) != fmt.Sprint([]eventKind{eventSnapshot, eventVolatile}) {
		t.Fatalf("rotating description: %v (want one snapshot, one volatile, no drift)", all)
	}
	if field != (fieldKey{Subject: "tool", Name: "search", Path: "/description"}) {
		t.Errorf("volatile field %+v", field)
	}
	// A real change elsewhere is still drift, and still confirmed.
	var real []eventKind
	for i := range 2 {
		s := snap(t, map[string]string{"search": fmt.Sprintf("Search. Session URL https://x.example/s/%d", 100+i), "fetch": "Fetch", "new": "added"})
		real = append(real, kinds(tr.observe(s, time.Unix(0, 0)))...)
	}
	if fmt.Sprint(real) != fmt.Sprint([]eventKind{eventDrift, eventSnapshot}) {
		t.Fatalf("real drift next to a volatile field: %v", real)
	}
}

func TestDeletePointer(t *testing.T) {
	cases := map[string]string{
		"/description":                    `{"inputSchema":{"properties":{"a/b":{"type":"string"}}},"name":"x"}`,
		"/inputSchema/properties/a~1b":    `{"description":"d","inputSchema":{"properties":{}},"name":"x"}`,
		"/inputSchema/properties/missing": `{"name":"x","description":"d","inputSchema":{"properties":{"a/b":{"type":"string"}}}}`,
	}
	raw := json.RawMessage(`{"name":"x","description":"d","inputSchema":{"properties":{"a/b":{"type":"string"}}}}`)
	for p, want := range cases {
		if got := string(deletePointer(raw, p)); got != want {
			t.Errorf("%s: %s", p, got)
		}
	}
}
