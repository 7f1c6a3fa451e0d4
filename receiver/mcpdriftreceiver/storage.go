package mcpdriftreceiver

import (
	"context"
	"encoding/json"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/receiver"

	"github.com/mcpdrift/mcpdrift/contract"
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
// only) when none is configured.
type baselineStore struct {
	client storage.Client // nil: memory only
	limits contract.Limits
}

func openBaselineStore(ctx context.Context, host component.Host, id *component.ID, set receiver.Settings) (*baselineStore, error) {
	if id == nil {
		set.Logger.Warn("No storage extension configured: baselines are kept in memory only, so every restart starts from a fresh baseline (set storage: file_storage)")
		return &baselineStore{}, nil
	}
	ext, ok := host.GetExtensions()[*id]
	if !ok {
		return nil, fmt.Errorf("mcpdrift: storage extension %q not found", id)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("mcpdrift: extension %q is not a storage extension", id)
	}
	client, err := se.GetClient(ctx, component.KindReceiver, set.ID, "")
	if err != nil {
		return nil, fmt.Errorf("mcpdrift: storage %q: %w", id, err)
	}
	return &baselineStore{client: client}, nil
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
	return s.client.Set(ctx, storageKey(target), raw)
}

func (s *baselineStore) close(ctx context.Context) error {
	if s.client == nil {
		return nil
	}
	return s.client.Close(ctx)
}
