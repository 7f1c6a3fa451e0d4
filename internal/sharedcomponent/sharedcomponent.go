// Package sharedcomponent lets one component instance serve several
// pipelines of different signal types (the receiver in a logs and a metrics
// pipeline, the processor in a traces and a logs pipeline): the factory
// creates the instance on first use per component ID, starts it once and
// shuts it down once, when the last pipeline lets go of it.
//
// The collector has this helper twice, both times in an internal package, so
// it is written again here, small and generic.
package sharedcomponent

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// Map holds the shared instances of one component type, by key (usually the
// component.ID). Keep one Map per factory.
type Map[K comparable, V component.Component] struct {
	mu         sync.Mutex
	components map[K]*Component[V]
}

// NewMap returns an empty Map.
func NewMap[K comparable, V component.Component]() *Map[K, V] {
	return &Map[K, V]{components: map[K]*Component[V]{}}
}

// LoadOrStore returns the instance for key, creating it with create on first
// use. The instance is removed from the map when it is shut down, so a
// collector reload creates a fresh one.
func (m *Map[K, V]) LoadOrStore(key K, create func() (V, error)) (*Component[V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.components[key]; ok {
		return c, nil
	}
	v, err := create()
	if err != nil {
		return nil, err
	}
	c := &Component[V]{component: v}
	c.remove = func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.components[key] == c {
			delete(m.components, key)
		}
	}
	m.components[key] = c
	return c, nil
}

// Len reports how many instances are live (for tests).
func (m *Map[K, V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.components)
}

// Component wraps a shared instance so that Start and Shutdown reach it once,
// however many pipelines call them.
type Component[V component.Component] struct {
	component V

	mu       sync.Mutex
	started  bool
	startErr error
	stopped  bool
	stopErr  error
	remove   func()
}

// Unwrap returns the shared instance.
func (c *Component[V]) Unwrap() V { return c.component }

// Start starts the instance on the first call and returns that call's result
// on every later one.
func (c *Component[V]) Start(ctx context.Context, host component.Host) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		c.started = true
		c.startErr = c.component.Start(ctx, host)
	}
	return c.startErr
}

// Shutdown shuts the instance down on the first call, removes it from its
// Map, and returns that call's result on every later one. The collector shuts
// down every pipeline before it exits or reloads, so shutting down on the
// first call is safe: no pipeline keeps using the instance afterwards.
func (c *Component[V]) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		c.stopped = true
		c.stopErr = c.component.Shutdown(ctx)
		c.remove()
	}
	return c.stopErr
}
