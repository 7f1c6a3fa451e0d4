package mcpdriftreceiver

import (
	"context"
	"encoding/json"
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

// storedState is the JSON kept per target under "target/<name>".
type storedState struct {
	Version  int             `json:"version"`
	Target   string          `json:"target"`
	Baseline json.RawMessage `json:"baseline"` // a contract.Snapshot
	Volatile []fieldKey      `json:"volatile,omitempty"`
}

type restoredState struct {
	baseline *contract.Snapshot
	volatile []fieldKey
}

// baselineStore keeps baselines in a storage extension, or nowhere (memory
// only) when none is configured or it cannot be used.
type baselineStore struct {
	client storage.Client // nil: memory only
	health *safestorage.Health
	// unsaved holds the targets whose last save failed: they are saved
	// again after their next probe, changed or not.
	unsaved sync.Map
}

// openBaselineStore connects the storage extension. A store that cannot be
// opened is not an error: baselines are then kept in memory, and the
// health has said so (log with the file and the remedy, component status,
// the storage gauge). Only a misconfiguration (no such extension) is.
func openBaselineStore(ctx context.Context, host component.Host, id *component.ID, set receiver.Settings, health *safestorage.Health) (*baselineStore, error) {
	if id == nil {
		set.Logger.Warn("No storage extension configured: baselines are kept in memory only, so every restart starts from a fresh baseline (set storage: file_storage)")
		return &baselineStore{}, nil
	}
	client, err := health.Open(ctx, host, *id, component.KindReceiver, set.ID)
	if err != nil {
		return nil, fmt.Errorf("mcpdrift: %w", err)
	}
	return &baselineStore{client: client, health: health}, nil
}

func storageKey(target string) string { return "target/" + target }

// load returns the stored state of a target, nil when there is none, or an
// error when what is stored cannot be used (corrupt, foreign, another
// version): the caller logs it and the next save replaces it.
func (s *baselineStore) load(ctx context.Context, target string) (*restoredState, error) {
	if s.client == nil {
		return nil, nil
	}
	raw, err := s.client.Get(ctx, storageKey(target))
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, nil
	}
	var st storedState
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("stored state is not JSON: %w", err)
	}
	if st.Version != storedStateVersion {
		return nil, fmt.Errorf("stored state has version %d, this build reads %d", st.Version, storedStateVersion)
	}
	if st.Target != target {
		return nil, fmt.Errorf("stored state belongs to target %q", st.Target)
	}
	snap, err := contract.DecodeSnapshot(st.Baseline)
	if err != nil {
		return nil, err
	}
	return &restoredState{baseline: snap, volatile: st.Volatile}, nil
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
	st := storedState{Version: storedStateVersion, Target: target, Baseline: snap}
	for f := range t.volatile.known {
		st.Volatile = append(st.Volatile, f)
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	err = s.client.Set(ctx, storageKey(target), raw)
	s.health.Wrote(err)
	if err != nil {
		s.unsaved.Store(target, true)
	} else {
		s.unsaved.Delete(target)
	}
	return err
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
