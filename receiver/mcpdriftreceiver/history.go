package mcpdriftreceiver

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
)

// history is one target's drift history: its last drifts, newest first,
// each with the change list and the whole before and after definitions of
// the changed items, bounded by count and by encoded size (the size of the
// records as stored; driftrecord.go). It belongs to the target and is
// guarded by the target's stateMu.
type history struct {
	cfg     HistoryConfig
	server  string
	entries []*historyEntry // newest first
	bytes   int64
}

// historyEntry is a record with what serving it needs.
type historyEntry struct {
	driftRecord
	size int // the record's encoded bytes, as stored
	// listed is the record's API list item, encoded (apiwire.Drift's
	// Encoded), so a page of drifts costs a copy, not an encoding.
	listed json.RawMessage
}

func newHistory(server string, cfg HistoryConfig) *history {
	return &history{cfg: cfg, server: server}
}

// record adds the drift of a drift event as an open entry, evicting the
// oldest entries beyond the bounds; nil when the history is disabled.
func (h *history) record(e event) *historyEntry {
	if h.cfg.MaxDrifts == 0 {
		return nil
	}
	id := driftID(h.server, e.previous.Digests.Contract, e.current.Digests.Contract)
	d := driftRecord{
		ID:               h.uniqueID(id),
		DriftID:          id,
		Server:           h.server,
		At:               e.at.UTC(),
		ChangedAt:        e.occurred().UTC(),
		PreviousContract: e.previous.Digests.Contract,
		CurrentContract:  e.current.Digests.Contract,
		PreviousServer:   serverInfoOf(e.previous),
		CurrentServer:    serverInfoOf(e.current),
		Severity:         e.report.Worst().String(),
		Summary:          e.report.Summary(),
		Description:      contract.SanitizeText(e.report.OneLine()),
		Changes:          slices.Clone(e.report.Changes),
		State:            driftOpen,
		Definitions:      changedDefinitions(e.report.Changes, e.previous, e.current),
	}
	entry := &historyEntry{driftRecord: d}
	fitEntry(&entry.driftRecord, h.cfg.MaxDriftBytes)
	entry.refresh()
	h.entries = slices.Insert(h.entries, 0, entry)
	h.bytes += int64(entry.size)
	h.evict()
	return entry
}

// serverInfoOf is a contract's serverInfo for a record; nil when it has
// none.
func serverInfoOf(s *contract.Snapshot) *serverRecord {
	name, version := serverInfo(s)
	if name == "" && version == "" {
		return nil
	}
	return &serverRecord{Name: name, Version: version}
}

// evict drops the oldest entries beyond the bounds; the newest always stays.
func (h *history) evict() {
	for len(h.entries) > 1 && (len(h.entries) > h.cfg.MaxDrifts || h.bytes > int64(h.cfg.MaxBytes)) {
		last := h.entries[len(h.entries)-1]
		h.bytes -= int64(last.size)
		h.entries = h.entries[:len(h.entries)-1]
	}
}

// uniqueID is the drift id, with ".N" when the history already holds the
// same change (a server that flips back and forth).
func (h *history) uniqueID(driftID string) string {
	n := 0
	for _, e := range h.entries {
		if e.DriftID == driftID {
			n = max(n, occurrence(e.ID))
		}
	}
	if n == 0 {
		return driftID
	}
	return driftID + "." + strconv.Itoa(n+1)
}

func occurrence(id string) int {
	_, suffix, ok := strings.Cut(id, ".")
	if !ok {
		return 1
	}
	n, _ := strconv.Atoi(suffix)
	return max(n, 1)
}

// refresh encodes the entry after a change: its API list item, kept for
// pages, and the size of the record, as stored.
func (e *historyEntry) refresh() {
	e.listed = nil
	if enc, err := e.apiDrift().Encode(); err == nil {
		e.listed = enc
	}
	e.size = e.encodedSize()
}

// drift is the entry as a list item of the API, with its kept encoding.
func (e *historyEntry) drift() apiwire.Drift {
	d := e.apiDrift()
	d.Encoded = e.listed
	return d
}

// detail is the entry as the API answers for one drift.
func (e *historyEntry) detail() apiwire.DriftDetail {
	d := e.apiDetail()
	d.Encoded = e.listed
	return d
}

// open returns the open entries, newest first.
func (h *history) open() []*historyEntry {
	var out []*historyEntry
	for _, e := range h.entries {
		if e.State == driftOpen {
			out = append(out, e)
		}
	}
	return out
}

// close moves the open entries to state (accepted, reverted, superseded);
// acceptance is set for accepted. It returns the entries it closed.
func (h *history) close(state driftState, at time.Time, acceptance *acceptRecord) []*historyEntry {
	closed := h.open()
	for _, e := range closed {
		at := at.UTC()
		e.State, e.ClosedAt = state, &at
		if acceptance != nil {
			a := *acceptance
			e.Accepted = &a
		}
		h.bytes -= int64(e.size)
		e.refresh()
		h.bytes += int64(e.size)
	}
	if len(closed) > 0 {
		h.evict()
	}
	return closed
}

// find returns the entry with an id, or else the newest with that drift id.
func (h *history) find(id string) *historyEntry {
	var byDriftID *historyEntry
	for _, e := range h.entries {
		if e.ID == id {
			return e
		}
		if byDriftID == nil && e.DriftID == id {
			byDriftID = e
		}
	}
	return byDriftID
}

// page returns q.Limit entries without their definitions, newest first,
// starting after the entry q.Before names (by its id) when set, and the
// cursor of the next page ("" at the oldest entry).
func (h *history) page(q controlplane.DriftQuery) ([]apiwire.Drift, string, error) {
	entries, next, err := controlplane.Page(h.entries, func(e *historyEntry) string { return e.ID }, q)
	out := make([]apiwire.Drift, len(entries))
	for i, e := range entries {
		out[i] = e.drift()
	}
	return out, next, err
}

func (h *history) memory() apiwire.HistoryMemory {
	return apiwire.HistoryMemory{Drifts: len(h.entries), Bytes: h.bytes}
}

// restore installs stored records (newest first), keeping what the
// configured bounds allow.
func (h *history) restore(records []driftRecord) {
	h.entries, h.bytes = nil, 0
	for _, d := range records {
		if len(h.entries) == h.cfg.MaxDrifts {
			break
		}
		d.NextStep = nil
		if d.Definitions == nil {
			d.Definitions = []definitionRecord{}
		}
		e := &historyEntry{driftRecord: d}
		fitEntry(&e.driftRecord, h.cfg.MaxDriftBytes)
		e.refresh()
		h.entries = append(h.entries, e)
		h.bytes += int64(e.size)
	}
	h.evict()
}

// records returns the entries' records, newest first: what is stored.
func (h *history) records() []driftRecord {
	out := make([]driftRecord, len(h.entries))
	for i, e := range h.entries {
		out[i] = e.driftRecord
	}
	return out
}

// changedDefinitions returns every item the changes name, whole, on both
// sides, in the order the changes first name them (worst first).
func changedDefinitions(changes []contract.Change, previous, current *contract.Snapshot) []definitionRecord {
	type item struct {
		subject contract.Kind
		name    string
	}
	seen := map[item]bool{}
	out := []definitionRecord{}
	for _, c := range changes {
		it := item{c.Subject, c.Name}
		if seen[it] {
			continue
		}
		seen[it] = true
		dc := definitionRecord{Subject: c.Subject, Name: canon.KeyUTF8(c.Name)}
		if c.Subject == contract.KindServer {
			dc.Before, dc.After = serverMembers(previous), serverMembers(current)
			dc.BeforeDigest, dc.AfterDigest = previous.Digests.Contract, current.Digests.Contract
		} else {
			if d, ok := previous.Listing(c.Subject).Lookup(c.Name); ok {
				dc.Before, dc.BeforeDigest = d.Raw, d.Digest
			}
			if d, ok := current.Listing(c.Subject).Lookup(c.Name); ok {
				dc.After, dc.AfterDigest = d.Raw, d.Digest
			}
		}
		out = append(out, dc)
	}
	return out
}

// serverMembers are the server-level members of a contract, as one object.
func serverMembers(s *contract.Snapshot) json.RawMessage {
	b, _ := json.Marshal(struct {
		ProtocolVersion string          `json:"protocol_version"`
		SpecGeneration  string          `json:"spec_generation"`
		ServerInfo      json.RawMessage `json:"server_info"`
		Capabilities    json.RawMessage `json:"capabilities"`
		Instructions    *string         `json:"instructions"`
	}{s.ProtocolVersion, string(s.SpecGeneration), nullIfEmpty(s.ServerInfo), nullIfEmpty(s.Capabilities), s.Instructions})
	return b
}

func nullIfEmpty(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return nil
	}
	return r
}

// fitEntry keeps a drift (not yet encoded) within max encoded bytes,
// leaving out first the whole definitions, largest first, then the changes'
// before/after values, largest first, then the least severe changes; it
// marks what it cut and returns the encoded size.
func fitEntry(d *driftRecord, max int) int {
	size := d.encodedSize()
	if size <= max {
		return size
	}
	d.Truncated = true
	d.Definitions = slices.Clone(d.Definitions)
	for _, i := range largestFirst(len(d.Definitions), func(i int) int { return len(d.Definitions[i].Before) + len(d.Definitions[i].After) }) {
		if size <= max {
			break
		}
		dc := &d.Definitions[i]
		size -= rawSize(dc.Before) + rawSize(dc.After)
		dc.Before, dc.After, dc.Truncated = nil, nil, true
	}
	for _, i := range largestFirst(len(d.Changes), func(i int) int { return len(d.Changes[i].Before) + len(d.Changes[i].After) }) {
		if size <= max {
			break
		}
		c := &d.Changes[i]
		size -= rawSize(c.Before) + rawSize(c.After)
		c.Before, c.After = nil, nil
	}
	// The estimates above are exact up to JSON compaction; measure, and drop
	// changes from the least severe end until the entry fits.
	size = d.encodedSize()
	for size > max && len(d.Changes) > 0 {
		d.Changes = d.Changes[:len(d.Changes)-1]
		size = d.encodedSize()
	}
	if size > max { // names and the description alone are too long
		d.Definitions = []definitionRecord{}
		d.Description = truncateUTF8(d.Description, max/4)
		size = d.encodedSize()
	}
	return size
}

// truncateUTF8 cuts s to at most n bytes on a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// rawSize is what leaving a value out saves: its bytes less "null".
func rawSize(r json.RawMessage) int {
	if len(r) == 0 {
		return 0
	}
	return len(r) - len("null")
}

// largestFirst returns 0..n-1 ordered by size, largest first.
func largestFirst(n int, size func(int) int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(size(b), size(a)) })
	return idx
}
