package mcpdriftreceiver

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract"
)

// fieldKey names one field of one definition: the subject kind (tool,
// prompt, resource, resource_template, server), its name, and a JSON pointer.
type fieldKey struct {
	Subject contract.Kind `json:"subject"`
	Name    string        `json:"name"`
	Path    string        `json:"path"`
}

// volatileDetector finds fields that change on every probe (a description
// that embeds a rotating session URL, a timestamp in _meta): a field that took
// a value never seen before in each of `after` consecutive observations is
// volatile. A field that alternates between known values is not volatile (that
// is a mixed fleet), and added or removed definitions never are.
type volatileDetector struct {
	after   int
	prev    *contract.Snapshot
	streaks map[fieldKey]*streak
	known   map[fieldKey]bool
	// diffs remembers the changed fields between recent pairs of contracts:
	// a mixed fleet flips between the same few, and each flip would be a
	// full diff.
	diffs map[[2]string]map[fieldKey]contract.Change
}

// maxCachedDiffs bounds volatileDetector.diffs.
const maxCachedDiffs = 16

// streak is a field's run of consecutive changes and the values it took;
// back is set once it went back to one of them (alternation).
type streak struct {
	count  int
	values map[string]bool
	back   bool
}

func newVolatileDetector(after int) *volatileDetector {
	return &volatileDetector{after: after, streaks: map[fieldKey]*streak{}, known: map[fieldKey]bool{}, diffs: map[[2]string]map[fieldKey]contract.Change{}}
}

// observe compares s with the previous observation and returns the fields
// that have just become volatile.
func (d *volatileDetector) observe(s *contract.Snapshot, classify func(old, new *contract.Snapshot) *contract.Report) []fieldKey {
	prev := d.prev
	d.prev = s
	if prev == nil {
		return nil
	}
	if prev.Digests.Contract == s.Digests.Contract {
		clear(d.streaks)
		return nil
	}
	changed := d.changedFields(prev, s, classify)
	for k := range d.streaks {
		if _, ok := changed[k]; !ok {
			delete(d.streaks, k)
		}
	}
	var found []fieldKey
	for k, c := range changed {
		st := d.streaks[k]
		if st == nil {
			st = &streak{values: map[string]bool{string(c.Before): true}}
			d.streaks[k] = st
		}
		if st.values[string(c.After)] {
			// Back to a value seen in this run: alternation, not volatility.
			d.streaks[k] = &streak{count: 1, values: map[string]bool{string(c.Before): true, string(c.After): true}, back: true}
			continue
		}
		st.values[string(c.After)] = true
		st.count++
		if st.count >= d.after && !d.known[k] {
			d.known[k] = true
			found = append(found, k)
			delete(d.streaks, k)
		}
	}
	slices.SortFunc(found, compareFieldKeys)
	return found
}

// advancing are the fields whose streak is running, at least n changes
// long, and never went back: on each of the last n or more scheduled probes
// they took a value never seen before, as a volatile field does before
// volatile.after confirms it. A field a fleet flips between is among them at
// most until the next scheduled probe, which repeats the contract (the
// streaks end) or goes back.
func (d *volatileDetector) advancing(n int) map[fieldKey]bool {
	var out map[fieldKey]bool
	for k, st := range d.streaks {
		if !st.back && !d.known[k] && st.count >= n {
			if out == nil {
				out = map[fieldKey]bool{}
			}
			out[k] = true
		}
	}
	return out
}

// changedFields are the fields whose value changed from prev to s (added or
// removed definitions and members are not fields that changed).
func (d *volatileDetector) changedFields(prev, s *contract.Snapshot, classify func(old, new *contract.Snapshot) *contract.Report) map[fieldKey]contract.Change {
	pair := [2]string{prev.Digests.Contract, s.Digests.Contract}
	if changed, ok := d.diffs[pair]; ok {
		return changed
	}
	changed := map[fieldKey]contract.Change{}
	for _, c := range classify(prev, s).Changes {
		if c.Path == "" || c.Before == nil || c.After == nil {
			continue
		}
		if c.Name == "" && !(c.Subject == contract.KindServer && c.Path == "/instructions") {
			continue
		}
		changed[fieldKey{Subject: c.Subject, Name: c.Name, Path: c.Path}] = c
	}
	if len(d.diffs) >= maxCachedDiffs {
		clear(d.diffs)
	}
	d.diffs[pair] = changed
	return changed
}

func compareFieldKeys(a, b fieldKey) int {
	return strings.Compare(string(a.Subject)+"\x00"+a.Name+"\x00"+a.Path, string(b.Subject)+"\x00"+b.Name+"\x00"+b.Path)
}

// maskFields returns a copy of s with the given fields removed from their
// definitions (and the instructions blanked), re-hashed and sealed: two
// snapshots that differ only in those fields get the same contract digest.
func maskFields(s *contract.Snapshot, fields map[fieldKey]bool, limits contract.Limits) *contract.Snapshot {
	m := *s
	byDef := fieldsByDefinition(fields)
	for f := range fields {
		if f.Subject == contract.KindServer && f.Path == "/instructions" && m.Instructions != nil {
			masked := ""
			m.Instructions = &masked
		}
	}
	for _, kind := range contract.Kinds {
		if masked, touched := maskListing(kind, s.Listing(kind), byDef, limits); touched {
			m.SetListing(kind, masked)
		}
	}
	if err := m.Seal(); err != nil {
		return s
	}
	return &m
}

// fieldsByDefinition groups field paths by (subject, name).
func fieldsByDefinition(fields map[fieldKey]bool) map[fieldKey][]string {
	byDef := map[fieldKey][]string{}
	for f := range fields {
		k := fieldKey{Subject: f.Subject, Name: f.Name}
		byDef[k] = append(byDef[k], f.Path)
	}
	return byDef
}

// maskListing removes the fields of byDef from one listing and re-hashes it;
// touched is false (and the listing returned as it is) when none applied.
func maskListing(kind contract.Kind, listing contract.Listing, byDef map[fieldKey][]string, limits contract.Limits) (contract.Listing, bool) {
	var raws []json.RawMessage
	touched := false
	for _, d := range listing {
		raw := d.Raw
		for _, p := range byDef[fieldKey{Subject: kind, Name: d.Key}] {
			raw = deletePointer(raw, p)
			touched = true
		}
		raws = append(raws, raw)
	}
	if !touched {
		return listing, false
	}
	rehashed, err := limits.HashDefinitions(kind, raws)
	if err != nil {
		return listing, false // cannot happen for definitions that hashed before; keep them as they were
	}
	return rehashed, true
}

// deletePointer removes the member or element at a JSON pointer from a raw
// JSON value; a pointer that does not resolve leaves the value unchanged.
func deletePointer(raw json.RawMessage, pointer string) json.RawMessage {
	if pointer == "" || pointer[0] != '/' {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	tokens := strings.Split(pointer[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	if !deleteAt(v, tokens) {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

func deleteAt(v any, tokens []string) bool {
	last := len(tokens) == 1
	switch node := v.(type) {
	case map[string]any:
		child, ok := node[tokens[0]]
		if !ok {
			return false
		}
		if last {
			delete(node, tokens[0])
			return true
		}
		return deleteAt(child, tokens[1:])
	case []any:
		i, err := strconv.Atoi(tokens[0])
		if err != nil || i < 0 || i >= len(node) {
			return false
		}
		if last {
			node[i] = nil // keep positions: later elements keep their pointers
			return true
		}
		return deleteAt(node[i], tokens[1:])
	}
	return false
}
