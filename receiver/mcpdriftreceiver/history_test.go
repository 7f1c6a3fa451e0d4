package mcpdriftreceiver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
)

func driftEvent(prev, cur *contract.Snapshot, at time.Time) event {
	return event{kind: eventDrift, at: at, previous: prev, current: cur, report: contract.Diff(prev, cur, nil)}
}

func historyCfg() HistoryConfig {
	return HistoryConfig{MaxDrifts: defaultHistoryDrifts, MaxBytes: defaultHistoryBytes, MaxDriftBytes: defaultHistoryDriftBytes}
}

// checkBytes: the history's byte count is the sum of its entries' encoded
// sizes, as stored.
func checkBytes(t *testing.T, h *history) {
	t.Helper()
	var sum int64
	for _, e := range h.entries {
		b, _ := json.Marshal(e.driftRecord)
		if len(b) != e.size {
			t.Errorf("entry %s: size %d, encoded %d", e.ID, e.size, len(b))
		}
		if fresh, _ := json.Marshal(e.apiDrift()); string(fresh) != string(e.listed) {
			t.Errorf("entry %s: the kept encoding is stale:\n%s\n%s", e.ID, e.listed, fresh)
		}
		sum += int64(len(b))
	}
	if sum != h.bytes {
		t.Errorf("history bytes %d, entries encode to %d", h.bytes, sum)
	}
}

func TestHistoryRecordsDefinitions(t *testing.T) {
	a := snap(t, map[string]string{"search": "Search the web", "gone": "removed"})
	b := snap(t, map[string]string{"search": "Search the whole web", "fetch": "Fetch a page"})
	h := newHistory("srv", historyCfg())
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	e := h.record(driftEvent(a, b, at))
	if e.ID != driftID("srv", a.Digests.Contract, b.Digests.Contract) || e.DriftID != e.ID || e.State != apiwire.DriftOpen || !e.At.Equal(at) {
		t.Errorf("entry %+v", e.driftRecord)
	}
	if e.Severity != "breaking" || e.Summary.Total() != len(e.Changes) || e.Description == "" {
		t.Errorf("severity %s, summary %+v, %d changes", e.Severity, e.Summary, len(e.Changes))
	}
	byName := map[string]definitionRecord{}
	for _, d := range e.Definitions {
		byName[d.Name] = d
	}
	if len(byName) != 3 {
		t.Fatalf("definitions %+v", e.Definitions)
	}
	if d := byName["gone"]; d.Before == nil || d.After != nil || d.AfterDigest != "" {
		t.Errorf("removed tool: %+v", d)
	}
	if d := byName["fetch"]; d.Before != nil || d.After == nil || d.AfterDigest == "" {
		t.Errorf("added tool: %+v", d)
	}
	if d := byName["search"]; !strings.Contains(string(d.Before), "Search the web") || !strings.Contains(string(d.After), "whole web") {
		t.Errorf("changed tool: %s -> %s", d.Before, d.After)
	}
	checkBytes(t, h)
}

// TestHistoryBounds: the newest max_drifts, within max_bytes; the newest
// is kept whatever its size.
func TestHistoryBounds(t *testing.T) {
	snaps := make([]*contract.Snapshot, 8)
	for i := range snaps {
		snaps[i] = snap(t, map[string]string{"search": strings.Repeat("v", i+1)})
	}
	cfg := historyCfg()
	cfg.MaxDrifts = 3
	h := newHistory("srv", cfg)
	for i := 1; i < len(snaps); i++ {
		h.record(driftEvent(snaps[i-1], snaps[i], time.Unix(int64(i), 0)))
	}
	if len(h.entries) != 3 || h.entries[0].CurrentContract != snaps[7].Digests.Contract || h.entries[2].CurrentContract != snaps[5].Digests.Contract {
		t.Fatalf("kept %d entries, newest first?", len(h.entries))
	}
	checkBytes(t, h)

	one := h.entries[0].size
	cfg = historyCfg()
	cfg.MaxBytes = 2*one + one/2
	h = newHistory("srv", cfg)
	for i := 1; i < len(snaps); i++ {
		h.record(driftEvent(snaps[i-1], snaps[i], time.Unix(int64(i), 0)))
		if h.bytes > int64(cfg.MaxBytes) {
			t.Fatalf("history holds %d bytes, max %d", h.bytes, cfg.MaxBytes)
		}
	}
	if len(h.entries) != 2 {
		t.Errorf("byte bound kept %d entries, want 2", len(h.entries))
	}
	checkBytes(t, h)
}

// TestHistoryTruncates: a drift larger than max_drift_bytes loses its whole
// definitions first, then before/after values, and says so.
func TestHistoryTruncates(t *testing.T) {
	big := strings.Repeat("long description ", 2000) // ~34 KB per definition
	a := snap(t, map[string]string{"search": big + "1", "fetch": "f"})
	b := snap(t, map[string]string{"search": big + "2", "fetch": "g"})
	cfg := historyCfg()
	cfg.MaxDriftBytes = 100 << 10 // the search definitions (~68 KB) must go; its description change (~68 KB) stays
	h := newHistory("srv", cfg)
	e := h.record(driftEvent(a, b, time.Now()))
	if !e.Truncated || e.size > cfg.MaxDriftBytes {
		t.Fatalf("truncated %v, size %d", e.Truncated, e.size)
	}
	for _, d := range e.Definitions {
		if d.Name == "search" && (!d.Truncated || d.Before != nil) {
			t.Errorf("the large definition is kept: %+v", d.Truncated)
		}
		if d.Name == "fetch" && (d.Truncated || d.Before == nil) {
			t.Errorf("the small definition was cut although the entry fit without it")
		}
	}
	if len(e.Changes) != 2 {
		t.Errorf("changes cut although values sufficed: %d", len(e.Changes))
	}
	checkBytes(t, h)

	cfg.MaxDriftBytes = minHistoryDriftBytes
	h = newHistory("srv", cfg)
	e = h.record(driftEvent(a, b, time.Now()))
	if e.size > cfg.MaxDriftBytes {
		t.Errorf("size %d over %d", e.size, cfg.MaxDriftBytes)
	}
	for _, c := range e.Changes {
		if c.Name == "search" && (c.Before != nil || c.After != nil) {
			t.Errorf("change values kept in a %d-byte budget", cfg.MaxDriftBytes)
		}
	}
}

// TestHistoryIDs: a change that recurs (a server flipping back and forth)
// keeps its drift id and gets a history id of its own.
func TestHistoryIDs(t *testing.T) {
	a := snap(t, map[string]string{"search": "v1"})
	b := snap(t, map[string]string{"search": "v2"})
	h := newHistory("srv", historyCfg())
	first := h.record(driftEvent(a, b, time.Unix(1, 0)))
	back := h.record(driftEvent(b, a, time.Unix(2, 0)))
	again := h.record(driftEvent(a, b, time.Unix(3, 0)))
	third := h.record(driftEvent(a, b, time.Unix(4, 0)))
	if again.DriftID != first.DriftID || again.ID != first.ID+".2" || third.ID != first.ID+".3" || back.ID == first.ID {
		t.Errorf("ids %s %s %s %s", first.ID, back.ID, again.ID, third.ID)
	}
	if h.find(first.ID) != first || h.find(first.ID+".2") != again || h.find(back.DriftID) != back {
		t.Error("find by id")
	}
	if h.find("nope") != nil {
		t.Error("found an unknown id")
	}
}

func TestHistoryClose(t *testing.T) {
	a := snap(t, map[string]string{"search": "v1"})
	b := snap(t, map[string]string{"search": "v2"})
	c := snap(t, map[string]string{"search": "v3"})
	h := newHistory("srv", historyCfg())
	h.record(driftEvent(a, b, time.Unix(1, 0)))
	h.record(driftEvent(b, c, time.Unix(2, 0)))
	if len(h.open()) != 2 {
		t.Fatal("two open drifts")
	}
	at := time.Unix(3, 0)
	closed := h.close(driftAccepted, at, &acceptRecord{By: "alice", At: at})
	if len(closed) != 2 || len(h.open()) != 0 {
		t.Fatalf("closed %d", len(closed))
	}
	for _, e := range h.entries {
		if e.State != apiwire.DriftAccepted || !e.ClosedAt.Equal(at) || e.Accepted.By != "alice" {
			t.Errorf("entry %+v", e.driftRecord)
		}
	}
	checkBytes(t, h)
	if len(h.close(driftAccepted, at, nil)) != 0 {
		t.Error("closed again")
	}
}

// TestHistoryDisabled: max_drifts 0 keeps nothing.
func TestHistoryDisabled(t *testing.T) {
	cfg := historyCfg()
	cfg.MaxDrifts = 0
	h := newHistory("srv", cfg)
	if h.record(driftEvent(snap(t, map[string]string{"a": "1"}), snap(t, map[string]string{"a": "2"}), time.Now())) != nil || len(h.entries) != 0 {
		t.Error("a disabled history kept a drift")
	}
}
