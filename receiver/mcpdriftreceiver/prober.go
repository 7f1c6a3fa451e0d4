package mcpdriftreceiver

import (
	"context"
	"errors"

	"github.com/mcpdrift/mcpdrift/contract"
)

// prober takes one snapshot of one target.
type prober interface {
	probe(ctx context.Context, t *target) (*contract.Snapshot, error)
}

// TEMPORARY until the probe package is merged.
func newProber(*Config) prober { return nopProber{} }

type nopProber struct{}

func (nopProber) probe(context.Context, *target) (*contract.Snapshot, error) {
	return nil, errors.New("probe not available")
}

// errorClass returns the probe error class and failing step.
func errorClass(err error) (class, step string) {
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout", ""
	}
	return "internal", ""
}
