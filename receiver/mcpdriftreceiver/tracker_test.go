package mcpdriftreceiver

import (
	"encoding/json"
	"fmt"
	"slices"
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
	return toolsSnap(t, raws)
}

// toolsSnap seals a snapshot of the given tool definitions.
func toolsSnap(t testing.TB, raws []json.RawMessage) *contract.Snapshot {
	t.Helper()
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

// observeAgreed observes s and answers any samples the tracker asks for with
// s again: one server, not a fleet.
func observeAgreed(tr *tracker, s *contract.Snapshot, now time.Time) step {
	st := tr.observe(s, now)
	if st.sample {
		more := make([]*contract.Snapshot, st.sampleN)
		for i := range more {
			more[i] = s
		}
		next := tr.sampled(more, now)
		st.events = append(st.events, next.events...)
		st.persist = st.persist || next.persist
	}
	return st
}

// feed observes a sequence (samples answered with the same snapshot) and
// returns every event kind.
func feed(tr *tracker, seq ...*contract.Snapshot) []eventKind {
	var all []eventKind
	for _, s := range seq {
		all = append(all, kinds(observeAgreed(tr, s, time.Unix(0, 0)))...)
	}
	return all
}

func repeat(s *contract.Snapshot, n int) []*contract.Snapshot {
	out := make([]*contract.Snapshot, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestTrackerConfirmsAfterN(t *testing.T) {
	a := snap(t, map[string]string{"search": "Search the web"})
	b := snap(t, map[string]string{"search": "Search the web", "fetch": "Fetch a page"})
	for _, samples := range []int{0, DefaultConfirmSamples} {
		tr := newTestTracker(2, false)
		tr.cfg.samples = samples
		tr.fleet = newFleet(newFleetParams(2, samples))
		now := time.Unix(1000, 0)
		if st := tr.observe(a, now); fmt.Sprint(kinds(st)) != fmt.Sprint([]eventKind{eventSnapshot}) || !st.persist {
			t.Fatalf("first observation: %v", kinds(st))
		}
		if st := tr.observe(a, now); len(st.events) != 0 || st.sample {
			t.Fatalf("unchanged: %v", kinds(st))
		}
		if st := tr.observe(b, now); len(st.events) != 0 || st.sample {
			t.Fatalf("first sight of a new contract must not be drift: %v", kinds(st))
		}
		st := tr.observe(b, now)
		if st.sample != (samples > 0) {
			t.Fatalf("samples %d: asked for samples: %v", samples, st.sample)
		}
		if st.sample {
			if len(st.events) != 0 {
				t.Fatalf("events before the samples: %v", kinds(st))
			}
			st = tr.sampled(repeat(b, samples), now)
		}
		if fmt.Sprint(kinds(st)) != fmt.Sprint([]eventKind{eventDrift, eventSnapshot}) || !st.persist {
			t.Fatalf("confirmed: %v", kinds(st))
		}
		if st.events[0].previous != a || st.events[0].current != b {
			t.Error("drift must compare baseline with the confirmed contract")
		}
		if got := feed(tr, b); len(got) != 0 {
			t.Fatalf("after advance: %v", got)
		}
		// One stale answer of the old contract after the upgrade is neither
		// drift nor a mixed fleet.
		if got := feed(tr, a, b, b, b); len(got) != 0 {
			t.Fatalf("blip: %v", got)
		}
	}
}

// TestTrackerSamplesShowAFleet: the run that would confirm a plain upgrade is
// checked against samples; a sample of the old contract makes it a mixed
// fleet, not drift.
func TestTrackerSamplesShowAFleet(t *testing.T) {
	a := snap(t, map[string]string{"search": "v1"})
	b := snap(t, map[string]string{"search": "v2"})
	tr := newTestTracker(2, false)
	tr.cfg.samples = 4
	tr.fleet = newFleet(newFleetParams(2, 4))
	feed(tr, repeat(a, 20)...)
	tr.observe(b, time.Unix(1, 0))
	if st := tr.observe(b, time.Unix(2, 0)); !st.sample {
		t.Fatal("no samples asked for")
	}
	st := tr.sampled([]*contract.Snapshot{a, b, a, b}, time.Unix(2, 0))
	if fmt.Sprint(kinds(st)) != fmt.Sprint([]eventKind{eventMixedOpen}) {
		t.Fatalf("samples that disagree: %v, want one mixed open", kinds(st))
	}
	vs := st.events[0].variants
	if len(vs) != 2 || vs[0].count+vs[1].count != 6 || vs[0].share+vs[1].share < 0.99 {
		t.Errorf("variants %+v", vs)
	}
	if tr.baseline != a {
		t.Error("baseline moved")
	}
	// Too few samples (probes failed): no decision, asked again next time.
	tr2 := newTestTracker(2, false)
	tr2.cfg.samples = 4
	tr2.fleet = newFleet(newFleetParams(2, 4))
	feed(tr2, a, b)
	tr2.observe(b, time.Unix(0, 0))
	if st := tr2.sampled([]*contract.Snapshot{b}, time.Unix(0, 0)); len(st.events) != 0 {
		t.Fatalf("one sample of four confirmed: %v", kinds(st))
	}
	if st := tr2.observe(b, time.Unix(0, 0)); !st.sample {
		t.Fatal("not asked again")
	}
}

func TestTrackerMixedFleet(t *testing.T) {
	a := snap(t, map[string]string{"search": "v1"})
	b := snap(t, map[string]string{"search": "v2"})
	tr := newTestTracker(3, false)
	now := time.Unix(1000, 0)
	var all []eventKind
	for i := range 40 {
		s := a
		if i%2 == 1 {
			s = b
		}
		all = append(all, kinds(observeAgreed(tr, s, now.Add(time.Duration(i)*time.Minute)))...)
	}
	want := []eventKind{eventSnapshot, eventMixedOpen}
	if fmt.Sprint(all) != fmt.Sprint(want) {
		t.Fatalf("alternating fleet: got %v, want %v (one mixed event, no drift per flip)", all, want)
	}
	// b holds: a run of confirm_after is not convergence; the whole hold is
	// (b was already seen once when the run started).
	hold := tr.fleet.run.need
	if hold < tr.fleet.par.minHold {
		t.Fatalf("hold %d is less than the least hold %d", hold, tr.fleet.par.minHold)
	}
	var end []eventKind
	var resolved event
	for i := range hold - 1 {
		st := observeAgreed(tr, b, now)
		if i < hold-2 && len(st.events) > 0 {
			t.Fatalf("converged after %d probes of b: %v", i+2, kinds(st))
		}
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
	// The window kept the converged run: one stale answer does not reopen.
	if got := feed(tr, a, b, b); len(got) != 0 {
		t.Fatalf("after convergence: %v", got)
	}
}

// TestTrackerMixedConfirmAfterOne: with confirm_after 1 a round robin is still
// one mixed state (the window never collapses to one entry), never a drift
// per flip.
func TestTrackerMixedConfirmAfterOne(t *testing.T) {
	a := snap(t, map[string]string{"search": "v1"})
	b := snap(t, map[string]string{"search": "v2"})
	for _, samples := range []int{0, DefaultConfirmSamples} {
		tr := newTestTracker(1, false)
		tr.cfg.samples = samples
		tr.fleet = newFleet(newFleetParams(1, samples))
		feed(tr, repeat(a, 10)...)
		var all []eventKind
		for i := range 40 {
			s := a
			if i%2 == 0 {
				s = b
			}
			st := tr.observe(s, time.Unix(int64(i), 0))
			if st.sample {
				// A round robin answers the samples alternately.
				more := []*contract.Snapshot{a, b, a, b, a, b, a, b, a, b, a, b}[:samples]
				st.events = append(st.events, tr.sampled(more, time.Unix(int64(i), 0)).events...)
			}
			all = append(all, kinds(st)...)
		}
		drifts := 0
		for _, k := range all {
			if k == eventDrift {
				drifts++
			}
		}
		// Without samples the first flips are indistinguishable from an
		// upgrade and its rollback (two drifts); the next ones are a mixed
		// fleet.
		if want := map[bool]int{true: 0, false: 2}[samples > 0]; drifts != want || !tr.mixedOpen() {
			t.Fatalf("samples %d: %v: %d drifts (want %d), mixed %v", samples, all, drifts, want, tr.mixedOpen())
		}
	}
}

func TestTrackerMixedResolvesToBaseline(t *testing.T) {
	a := snap(t, map[string]string{"search": "v1"})
	b := snap(t, map[string]string{"search": "v2"})
	tr := newTestTracker(2, false)
	got := feed(tr, append([]*contract.Snapshot{a, b, a, b, a, b}, repeat(a, 40)...)...)
	if fmt.Sprint(got) != fmt.Sprint([]eventKind{eventSnapshot, eventMixedOpen, eventMixedResolved}) {
		t.Fatalf("canary rolled back: %v", got)
	}
}

// TestTrackerPinnedCountsOnce: a pinned baseline's open drift is one drift
// event, however many probes see it; it closes on the baseline and a new
// opening is a new drift.
func TestTrackerPinnedCountsOnce(t *testing.T) {
	a := snap(t, map[string]string{"search": "v1"})
	b := snap(t, map[string]string{"search": "v2"})
	c := snap(t, map[string]string{"search": "v3"})
	tr := newTestTracker(2, true)
	drifts := func(seq ...*contract.Snapshot) (n int) {
		for _, s := range seq {
			for _, e := range observeAgreed(tr, s, time.Unix(0, 0)).events {
				if e.kind == eventDrift {
					n++
					if e.previous != a {
						t.Error("pinned drift must compare against the pinned baseline")
					}
				}
			}
		}
		return n
	}
	if n := drifts(append([]*contract.Snapshot{a}, repeat(b, 9)...)...); n != 1 || tr.openDrift.Empty() {
		t.Fatalf("9 probes of one change: %d drifts (want 1), open %v", n, !tr.openDrift.Empty())
	}
	if tr.baseline != a {
		t.Error("pinned baseline advanced")
	}
	if n := drifts(c, c, c); n != 1 {
		t.Fatalf("another contract while open: %d drifts, want 1", n)
	}
	if n := drifts(a, a, a); n != 0 || !tr.openDrift.Empty() {
		t.Error("back on the baseline: the open drift closes silently")
	}
	// Once the interleaving has left the window, the change opens again.
	drifts(repeat(a, tr.fleet.par.window)...)
	if n := drifts(b, b, b); n != 1 {
		t.Fatalf("reopened: %d drifts, want 1", n)
	}
}

func TestTrackerVolatileField(t *testing.T) {
	tr := newTestTracker(2, false)
	var all []eventKind
	var field fieldKey
	for i := range 8 {
		s := snap(t, map[string]string{"search": fmt.Sprintf("Search. Session URL https://x.example/s/%d", i), "fetch": "Fetch"})
		for _, e := range observeAgreed(tr, s, time.Unix(int64(i), 0)).events {
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
		real = append(real, kinds(observeAgreed(tr, s, time.Unix(0, 0)))...)
	}
	if fmt.Sprint(real) != fmt.Sprint([]eventKind{eventDrift, eventSnapshot}) {
		t.Fatalf("real drift next to a volatile field: %v", real)
	}
}

// TestTrackerVolatileNotIgnored: with volatile.ignore false a real change is
// still confirmed (the volatile field is masked for confirmation) and the
// drift reports the volatile field's change too (unmasked).
func TestTrackerVolatileNotIgnored(t *testing.T) {
	for _, confirm := range []int{1, 2, 3} {
		tr := newTestTracker(confirm, false)
		tr.cfg.ignoreVolatile = false
		tr.cfg.samples = 2
		tr.fleet = newFleet(newFleetParams(confirm, 2))
		rotating := func(i int, extra bool) *contract.Snapshot {
			tools := map[string]string{"search": fmt.Sprintf("Search. Session URL https://x.example/s/%d", i), "fetch": "Fetch"}
			if extra {
				tools["new"] = "added"
			}
			return snap(t, tools)
		}
		var drifts []event
		for i := range 20 {
			// Every probe and sample sees a new value of the volatile field.
			st := tr.observe(rotating(i, i >= 10), time.Unix(int64(i), 0))
			if st.sample {
				more := []*contract.Snapshot{rotating(1000+2*i, i >= 10), rotating(1001+2*i, i >= 10)}
				st.events = append(st.events, tr.sampled(more, time.Unix(int64(i), 0)).events...)
			}
			for _, e := range st.events {
				if e.kind == eventDrift {
					drifts = append(drifts, e)
				}
			}
		}
		if len(drifts) != 1 {
			t.Fatalf("confirm_after %d: %d drifts, want 1 (the tool added at probe 10)", confirm, len(drifts))
		}
		rules := map[string]bool{}
		for _, c := range drifts[0].report.Changes {
			rules[string(c.Rule)] = true
		}
		if !rules["tool.added"] || len(rules) < 2 {
			t.Errorf("confirm_after %d: the report shows the added tool and the volatile field unmasked: %v", confirm, rules)
		}
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

// TestTrackerVolatileTimestampBeforeChange replays what the built
// distribution showed against a server whose description embeds a
// timestamp to the second (issue 25, item 3): each scheduled probe sees a
// new value, the samples taken at once straddle the next second (one sees
// the probe's value, one the next), and a real change (a required
// parameter) lands right after the baseline, before the field is known to
// be volatile. Fed the samples, the detector saw the value hold still or
// go back and never found the field; the fleet saw contracts repeat and
// opened a mixed state that no contract could end. Now the field is found
// on the fourth probe and the change is reported once, on that probe; no
// mixed state opens meanwhile (the samples' repeats of a field on a streak
// of new values are no fleet), where it opened and was resolved before.
func TestTrackerVolatileTimestampBeforeChange(t *testing.T) {
	for _, confirm := range []int{1, 2} {
		t.Run(fmt.Sprintf("confirm_after %d", confirm), func(t *testing.T) {
			tr := newTracker(trackerConfig{limits: contract.DefaultLimits(), confirmAfter: confirm, samples: DefaultConfirmSamples, volatileAfter: 3},
				func(old, new *contract.Snapshot) *contract.Report { return contract.Diff(old, new, nil) })
			stamped := func(second int, v2 bool) *contract.Snapshot {
				return ticketSnap(t, fmt.Sprintf("Search the docs. Index as of 2026-12-05T21:10:%02dZ", second), v2)
			}
			var drifts []event
			var all []eventKind
			for i := range 12 {
				at := time.Unix(int64(i), 0)
				st := tr.observe(stamped(i, i >= 1), at)
				if st.sample {
					// Samples after the first see the next second.
					taken := 0
					samples := takeSamples(st.sampleN, tr.agrees, func(k int) []*contract.Snapshot {
						round := make([]*contract.Snapshot, k)
						for j := range round {
							round[j] = stamped(i+min(taken, 1), i >= 1)
							taken++
						}
						return round
					})
					st.events = append(st.events, tr.sampled(samples, at).events...)
				}
				for _, e := range st.events {
					all = append(all, e.kind)
					if e.kind == eventDrift {
						drifts = append(drifts, e)
					}
				}
				if len(drifts) > 0 {
					// Found on the fourth probe (volatile.after 3), confirmed
					// with its samples at once, and reported on that probe.
					if want := max(3, confirm); i != want {
						t.Errorf("events %v: drift on probe %d, want %d", all, i, want)
					}
					break
				}
			}
			if len(drifts) != 1 {
				t.Fatalf("events %v: no drift in 12 probes for a required parameter added next to a timestamp", all)
			}
			if !slices.Contains(all, eventVolatile) || tr.mixedOpen() {
				t.Fatalf("events %v: the timestamp is volatile and no mixed state stays open", all)
			}
			t.Logf("events %v", all)
			if slices.Contains(all, eventMixedOpen) {
				t.Fatalf("events %v: one server whose timestamp the samples repeat is reported as a mixed fleet", all)
			}
			rules := map[string]bool{}
			for _, c := range drifts[0].report.Changes {
				rules[string(c.Rule)] = true
			}
			if !rules[string(contract.RuleInputRequiredAdded)] {
				t.Errorf("the drift reports the required parameter: %v", rules)
			}
		})
	}
}

// ticketSnap is the quickstart's search_docs and create_ticket tools, with
// search_docs described as given and, in v2, create_ticket requiring project.
func ticketSnap(t testing.TB, searchDescription string, v2 bool) *contract.Snapshot {
	t.Helper()
	ticket := map[string]any{"type": "object", "properties": map[string]any{"title": map[string]any{"type": "string"}, "project": map[string]any{"type": "string"}}, "required": []string{"title"}}
	if v2 {
		ticket["required"] = []string{"title", "project"}
	}
	var raws []json.RawMessage
	for _, tool := range []map[string]any{
		{"name": "create_ticket", "description": "File a support ticket.", "inputSchema": ticket},
		{"name": "search_docs", "description": searchDescription, "inputSchema": map[string]any{"type": "object"}},
	} {
		raw, _ := json.Marshal(tool)
		raws = append(raws, raw)
	}
	return toolsSnap(t, raws)
}

// TestFleetRemapEndsAVolatileMixedState: a mixed state opened by contracts
// that differ only in a field since found volatile ends when the keys are
// renamed under the mask, and the renamed evidence still counts: the run of
// the changed contract asks for its samples on the next observation. A real
// fleet stays mixed.
func TestFleetRemapEndsAVolatileMixedState(t *testing.T) {
	at := time.Unix(0, 0)
	// Each stamp is seen twice (a probe and its sample), then the next:
	// a1 a1 b2 b2 b3 b3 ...; a is the old contract, b the changed one.
	seq := []string{"a1", "a1", "b2", "b2", "b3", "b3", "b4", "b4", "b5", "b5"}
	masked := func(k string) string { return k[:1] }
	f := newFleet(newFleetParams(1, DefaultConfirmSamples))
	f.start("a0")
	for _, k := range seq {
		f.push(k, at)
	}
	f.openIfMixed(&fleetVerdict{})
	if !f.mixed {
		t.Fatal("repeated stamps did not open a mixed state: the test shows nothing")
	}
	v := f.remap("a", masked)
	if !v.resolved || f.mixed {
		t.Fatalf("remapped onto one change the mixed state stays open: %+v", v)
	}
	if f.run.key != "b" || f.run.n != 8 {
		t.Fatalf("run %q of %d, want b of 8 (the stamps that differed only in the mask)", f.run.key, f.run.n)
	}
	if v := f.observe("b", at); !v.sample || f.pending != "b" {
		t.Fatalf("the changed contract is not sampled for confirmation: %+v", v)
	}

	fleet := newFleet(newFleetParams(1, DefaultConfirmSamples))
	fleet.start("a0")
	for _, k := range []string{"a1", "b1", "a1", "b1", "a1", "b1"} {
		fleet.push(k, at)
	}
	fleet.openIfMixed(&fleetVerdict{})
	if !fleet.mixed {
		t.Fatal("an alternating fleet did not open a mixed state")
	}
	if v := fleet.remap("a", masked); v.resolved || !fleet.mixed {
		t.Fatalf("a fleet alternating between two contracts is no longer mixed after the mask: %+v", v)
	}
}

// takeSamples: rounds of 2 and 6, then doubling up to maxSampleRound, so
// the 126 samples that end a mixed state take 7 rounds; a round with a
// sample that disagrees is the last.
func TestTakeSamplesRounds(t *testing.T) {
	a, b := requiredSnap(t, "query"), requiredSnap(t, "query", "filters")
	agrees := func(s *contract.Snapshot) bool { return s == a }
	rounds := func(n, disagreeAt int) []int {
		var sizes []int
		taken := 0
		takeSamples(n, agrees, func(k int) []*contract.Snapshot {
			sizes = append(sizes, k)
			round := make([]*contract.Snapshot, k)
			for j := range round {
				round[j] = a
				if taken == disagreeAt {
					round[j] = b
				}
				taken++
			}
			return round
		})
		return sizes
	}
	if got, want := rounds(126, -1), []int{2, 6, 12, 24, 32, 32, 18}; !slices.Equal(got, want) {
		t.Errorf("126 agreeing samples in rounds %v, want %v", got, want)
	}
	if got, want := rounds(126, 9), []int{2, 6, 12}; !slices.Equal(got, want) {
		t.Errorf("a sample that disagrees in the third round: rounds %v, want %v", got, want)
	}
	if got, want := rounds(12, -1), []int{2, 6, 4}; !slices.Equal(got, want) {
		t.Errorf("confirm_samples 12: rounds %v, want %v", got, want)
	}
}
