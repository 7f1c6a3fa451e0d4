package mcpdriftreceiver

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
)

// storedFleet is the evidence a fleet holds between probes, stored with the
// baseline while it holds more than one contract (a rollout, a canary), so a
// restart in the middle of one neither starts the evidence over nor reports
// the mixed state again.
type storedFleet struct {
	Current   string          `json:"current"`
	Window    []storedSample  `json:"window"`
	Run       storedRun       `json:"run"`
	Mixed     bool            `json:"mixed,omitempty"`
	Episode   []storedVariant `json:"episode,omitempty"`
	Total     int             `json:"total,omitempty"`
	Announced []string        `json:"announced,omitempty"`
	// Variants are the snapshots behind the keys other than the baseline's,
	// so the mixed events after a restart still classify them.
	Variants map[string]json.RawMessage `json:"variants,omitempty"`
}

type storedSample struct {
	Key string    `json:"key"`
	At  time.Time `json:"at"`
}

type storedRun struct {
	Key   string    `json:"key"`
	N     int       `json:"n"`
	Need  int       `json:"need"`
	Since time.Time `json:"since"`
}

type storedVariant struct {
	Key   string    `json:"key"`
	Count int       `json:"count"`
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
}

// inFlight reports whether the fleet holds evidence worth keeping across a
// restart: a mixed state, or a window with more than one contract.
func (f *fleet) inFlight() bool {
	return f.mixed || len(f.inWin) > 1
}

// export is the fleet's state as stored; nil when there is nothing in flight.
func (f *fleet) export() *storedFleet {
	if !f.inFlight() {
		return nil
	}
	sf := &storedFleet{
		Current: f.current,
		Run:     storedRun{Key: f.run.key, N: f.run.n, Need: f.run.need, Since: f.run.since},
		Mixed:   f.mixed,
		Total:   f.total,
	}
	for _, s := range f.win {
		sf.Window = append(sf.Window, storedSample{Key: s.key, At: s.at})
	}
	for _, v := range f.episodeVariants() {
		sf.Episode = append(sf.Episode, storedVariant{Key: v.key, Count: v.count, First: v.first, Last: v.last})
	}
	for k := range f.announced {
		sf.Announced = append(sf.Announced, k)
	}
	slices.Sort(sf.Announced)
	return sf
}

// restore installs stored evidence over a fleet started on current. Stored
// data is untrusted: evidence for another current contract, or that does
// not hold together, is an error and the fleet stays as it was.
func (f *fleet) restore(sf *storedFleet, current string) error {
	if sf.Current != current {
		return fmt.Errorf("stored fleet evidence is for contract %s, the restored one is %s", short(sf.Current), short(current))
	}
	if sf.Run.N < 0 || sf.Total < 0 || len(sf.Episode) > maxEpisodeVariants || (sf.Mixed && len(sf.Episode) == 0) {
		return fmt.Errorf("stored fleet evidence does not hold together")
	}
	for _, s := range sf.Window {
		if s.Key == "" {
			return fmt.Errorf("stored fleet window has an empty key")
		}
	}
	for _, v := range sf.Episode {
		if v.Key == "" || v.Count < 0 {
			return fmt.Errorf("stored mixed episode has an invalid variant")
		}
	}
	f.start(current)
	win := sf.Window[max(0, len(sf.Window)-f.par.window):] // the window may be smaller now (confirm_after changed)
	for _, s := range win {
		f.push(s.Key, s.At)
	}
	// push counted the run from the window alone; a run samples extended
	// beyond it is the stored one.
	if f.run.key == sf.Run.Key && sf.Run.N > f.run.n {
		f.run.n, f.run.since = sf.Run.N, sf.Run.Since
	}
	if sf.Run.Need > 0 && f.run.key == sf.Run.Key {
		f.run.need = min(sf.Run.Need, fleetMaxHold*f.par.window)
	}
	if !sf.Mixed {
		return nil
	}
	f.mixed, f.total = true, sf.Total
	f.episode, f.announced = map[string]*variant{}, map[string]bool{}
	for _, v := range sf.Episode {
		f.episode[v.Key] = &variant{key: v.Key, count: v.Count, first: v.First, last: v.Last}
	}
	for _, k := range sf.Announced {
		if f.episode[k] != nil {
			f.announced[k] = true
		}
	}
	return nil
}

// exportFleet is the tracker's fleet evidence as stored, with the snapshots
// of the contracts it names other than the baseline (the most seen first,
// at most maxEpisodeVariants); nil when there is nothing in flight.
func (t *tracker) exportFleet() (*storedFleet, error) {
	sf := t.fleet.export()
	if sf == nil {
		return nil, nil
	}
	keys := map[string]int{}
	for _, s := range sf.Window {
		keys[s.Key]++
	}
	for _, v := range sf.Episode {
		keys[v.Key] += v.Count
	}
	order := make([]string, 0, len(keys))
	for k := range keys {
		if k != t.baselineKey && t.seen[k] != nil {
			order = append(order, k)
		}
	}
	slices.SortFunc(order, func(a, b string) int { return keys[b] - keys[a] })
	sf.Variants = map[string]json.RawMessage{}
	for _, k := range order[:min(len(order), maxEpisodeVariants)] {
		raw, err := t.seen[k].Encode()
		if err != nil {
			return nil, err
		}
		sf.Variants[k] = raw
	}
	return sf, nil
}

// restoreFleet installs stored fleet evidence after restore; the variants'
// snapshots are decoded (and their digests re-derived) like the baseline.
func (t *tracker) restoreFleet(sf *storedFleet) error {
	seen := map[string]*contract.Snapshot{}
	for k, raw := range sf.Variants {
		if len(seen) == maxEpisodeVariants {
			break
		}
		s, err := contract.DecodeSnapshot(raw)
		if err != nil {
			return fmt.Errorf("stored variant %s: %w", short(k), err)
		}
		if t.key(s) != k {
			return fmt.Errorf("stored variant %s has contract %s", short(k), short(t.key(s)))
		}
		seen[k] = s
	}
	if err := t.fleet.restore(sf, t.key(t.current)); err != nil {
		return err
	}
	for k, s := range seen {
		t.seen[k] = s
	}
	return nil
}
