package scaleout

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Owners sends one tool-call span per name through tier 1 (endpoint) and
// returns, for each name, the tier-2 instance whose store received it: the
// instance tier 1's consistent-hash ring gives that mcpdrift.server.name.
// The ring is a function of the tier-2 endpoints, whose ports are picked
// at random, so a test asks rather than predicts.
func Owners(ctx context.Context, endpoint string, tier2 []*Tier2, names []string) (map[string]*Tier2, error) {
	load := Load{Servers: names, Batch: len(names), Workers: 1}
	if _, err := load.Send(ctx, endpoint, len(names)); err != nil {
		return nil, err
	}
	for {
		owners := map[string]*Tier2{}
		for _, t := range tier2 {
			for _, sp := range t.Store.Outputs().ToolCalls() {
				name := sp.ServerName()
				if !slices.Contains(names, name) {
					continue
				}
				if other, ok := owners[name]; ok && other != t {
					return nil, fmt.Errorf("the span for %q reached both %s and %s", name, other.Name, t.Name)
				}
				owners[name] = t
			}
		}
		if len(owners) == len(names) {
			return owners, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%d of %d calibration spans reached tier 2: %w", len(owners), len(names), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
