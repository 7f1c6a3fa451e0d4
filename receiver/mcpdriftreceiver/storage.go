package mcpdriftreceiver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/receiver"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/internal/safestorage"
)

// storedStateVersion is the version of what the receiver keeps per target.
const storedStateVersion = 1

// storedHeader starts every JSON value the receiver keeps per target.
type storedHeader struct {
	Version int    `json:"version"`
	Target  string `json:"target"`
}

// storedState is the JSON kept per target under "target/<name>".
type storedState struct {
	storedHeader
	Baseline json.RawMessage `json:"baseline"` // a contract.Snapshot
	// Current is what a pinned target served, when not its baseline (its
	// drift is open); absent otherwise.
	Current  json.RawMessage `json:"current,omitempty"`
	Volatile []fieldKey      `json:"volatile,omitempty"`
	// Fleet is the evidence of a rollout in progress (fleetstate.go);
	// absent when the target serves one contract.
	Fleet *storedFleet `json:"fleet,omitempty"`
}

type restoredState struct {
	baseline *contract.Snapshot
	current  *contract.Snapshot
	volatile []fieldKey
	fleet    *storedFleet
}

// baselineStore keeps baselines in a storage extension, or nowhere (memory
// only) when none is configured or it cannot be used.
type baselineStore struct {
	client storage.Client // nil: memory only
	health *safestorage.Health
	// unsaved holds the targets whose last save failed: they are saved
	// again after their next probe, changed or not.
	unsaved sync.Map
	// newer holds the keys whose stored value a newer version of the
	// receiver wrote (errNewerFormat): they are never written, so going
	// back to that version finds them as it left them.
	newer sync.Map
}

// errNewerFormat: a stored value has a version this build does not know,
// written by a newer version of the receiver (before a downgrade).
var errNewerFormat = errors.New("written by a newer version of mcpdrift")

// openBaselineStore connects the storage extension. A store that cannot be
// opened is not an error: baselines are then kept in memory, and the
// health has said so (log with the file and the remedy, component status,
// the storage gauge). Only a misconfiguration (no such extension) is.
func openBaselineStore(ctx context.Context, host component.Host, id *component.ID, set receiver.Settings, owner component.ID, health *safestorage.Health) (*baselineStore, error) {
	if id == nil {
		set.Logger.Warn("No storage extension configured: baselines are kept in memory only, so every restart starts from a fresh baseline (set storage: file_storage)")
		return &baselineStore{}, nil
	}
	client, err := health.Open(ctx, host, *id, component.KindReceiver, owner)
	if err != nil {
		return nil, fmt.Errorf("mcpdrift: %w", err)
	}
	return &baselineStore{client: client, health: health}, nil
}

// storageOwner is the ID the storage client is opened under: the
// receiver's own, or, in the single-target form, one named by the target.
// receiver_creator names each receiver it starts after the observer's
// endpoint ID, which changes when the discovered server restarts (a host
// port's carries the process id): the baseline must outlive that.
func storageOwner(set receiver.Settings, cfg *Config) component.ID {
	if cfg.Endpoint == "" || len(cfg.Targets) != 1 {
		return set.ID
	}
	return component.NewIDWithName(set.ID.Type(), "discovered_"+fileSafe(cfg.Targets[0].Name))
}

// fileSafe keeps letters, digits, '-' and '.' of a target name and makes
// everything else '_' (the storage extension names a file after it), with a
// hash of the name for names that differ only in what was replaced.
func fileSafe(name string) string {
	safe := []byte(name)
	changed := false
	for i, c := range safe {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			safe[i], changed = '_', true
		}
	}
	if !changed {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return string(safe) + "_" + hex.EncodeToString(sum[:4])
}

func storageKey(target string) string { return "target/" + target }

// load returns the stored state of a target, nil when there is none, or an
// error when what is stored cannot be used: corrupt or foreign (the caller
// logs it and the next save replaces it), or of a newer version
// (errNewerFormat: it is kept, and the target's state is not stored).
func (s *baselineStore) load(ctx context.Context, target string) (*restoredState, error) {
	var st storedState
	if found, err := s.read(ctx, storageKey(target), "state", target, storedStateVersion, &st, &st.storedHeader); !found || err != nil {
		return nil, err
	}
	snap, err := contract.DecodeSnapshot(st.Baseline)
	if err != nil {
		return nil, err
	}
	out := &restoredState{baseline: snap, volatile: st.Volatile, fleet: st.Fleet}
	if len(st.Current) > 0 {
		if out.current, err = contract.DecodeSnapshot(st.Current); err != nil {
			return nil, fmt.Errorf("stored served contract: %w", err)
		}
	}
	return out, nil
}

// save stores the tracker's baseline and volatile set.
func (s *baselineStore) save(ctx context.Context, target string, t *tracker) error {
	if s.client == nil || t.baseline == nil {
		return nil
	}
	snap, err := t.baseline.Encode()
	if err != nil {
		return err
	}
	st := storedState{storedHeader: storedHeader{Version: storedStateVersion, Target: target}, Baseline: snap}
	if cur := t.pinnedCurrent(); cur != nil {
		if st.Current, err = cur.Encode(); err != nil {
			return err
		}
	}
	for f := range t.volatile.known {
		st.Volatile = append(st.Volatile, f)
	}
	if st.Fleet, err = t.exportFleet(); err != nil {
		return err
	}
	return s.write(ctx, storageKey(target), st)
}

// write stores v as JSON under key, unless a newer version's value is kept
// there.
func (s *baselineStore) write(ctx context.Context, key string, v any) error {
	if _, ok := s.newer.Load(key); ok {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	err = s.client.Set(ctx, key, raw)
	s.health.Wrote(err)
	return err
}

// noteSaved records the outcome of saving a target's state and history
// together: a failure of either marks it unsaved, so both are written again
// after its next probe (one write's success must not hide the other's
// failure).
func (s *baselineStore) noteSaved(target string, err error) {
	if err != nil {
		s.unsaved.Store(target, true)
	} else {
		s.unsaved.Delete(target)
	}
}

// historyVersion is the version of a stored drift history.
const historyVersion = 1

// storedHistory is the JSON kept per target under "history/<name>": the
// history's records (driftrecord.go), which the receiver defines, not the
// API.
type storedHistory struct {
	storedHeader
	Drifts []driftRecord `json:"drifts"` // newest first
}

func historyKey(target string) string { return "history/" + target }

// loadHistory returns a target's stored drift history (nil when none), or an
// error when what is stored cannot be used (as load).
func (s *baselineStore) loadHistory(ctx context.Context, target string) ([]driftRecord, error) {
	var st storedHistory
	if found, err := s.read(ctx, historyKey(target), "drift history", target, historyVersion, &st, &st.storedHeader); !found || err != nil {
		return nil, err
	}
	return st.Drifts, nil
}

// read decodes the JSON stored under key into v, whose header h must say
// version and target; false when nothing is stored (or no storage is used).
// The header is read first: a newer version may have changed the rest. A
// newer version's value is refused (errNewerFormat) and kept: write leaves
// the key alone from then on.
func (s *baselineStore) read(ctx context.Context, key, what, target string, version int, v any, h *storedHeader) (bool, error) {
	if s.client == nil {
		return false, nil
	}
	raw, err := s.client.Get(ctx, key)
	if err != nil || raw == nil {
		return false, err
	}
	if err := json.Unmarshal(raw, h); err != nil {
		return true, fmt.Errorf("stored %s is not JSON: %w", what, err)
	}
	if h.Version > version {
		s.newer.Store(key, true)
		return true, fmt.Errorf("stored %s has version %d, %w (this build reads %d)", what, h.Version, errNewerFormat, version)
	}
	if h.Version != version {
		return true, fmt.Errorf("stored %s has version %d, this build reads %d", what, h.Version, version)
	}
	if h.Target != target {
		return true, fmt.Errorf("stored %s belongs to target %q", what, h.Target)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("stored %s cannot be decoded: %w", what, err)
	}
	return true, nil
}

// saveHistory stores a target's drift history.
func (s *baselineStore) saveHistory(ctx context.Context, target string, h *history) error {
	if s.client == nil {
		return nil
	}
	return s.write(ctx, historyKey(target), storedHistory{storedHeader: storedHeader{Version: historyVersion, Target: target}, Drifts: h.records()})
}

// isUnsaved reports whether the target's last save failed.
func (s *baselineStore) isUnsaved(target string) bool {
	_, ok := s.unsaved.Load(target)
	return ok
}

func (s *baselineStore) close(ctx context.Context) error {
	if s.client == nil {
		return nil
	}
	return s.client.Close(ctx)
}
