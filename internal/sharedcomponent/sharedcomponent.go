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
	"slices"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
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
	status    statusHosts

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
// on every later one. The instance is started with a host whose status
// reports (componentstatus) reach every pipeline that calls Start, the later
// ones included.
func (c *Component[V]) Start(ctx context.Context, host component.Host) error {
	c.status.add(host)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		c.started = true
		c.startErr = c.component.Start(ctx, &c.status)
	}
	return c.startErr
}

// statusHosts is the host a shared instance sees: the first pipeline's host,
// with status reports fanned out to every pipeline's host. The collector
// keeps a status per pipeline instance; without the fan-out only the first
// pipeline would show the shared instance's status.
type statusHosts struct {
	component.Host // the first pipeline's (extensions are the same for all)

	mu    sync.Mutex
	hosts []component.Host
	last  *componentstatus.Event
}

func (s *statusHosts) add(h component.Host) {
	s.mu.Lock()
	if s.Host == nil {
		s.Host = h
	}
	s.hosts = append(s.hosts, h)
	last := s.last
	s.mu.Unlock()
	if last != nil {
		componentstatus.ReportStatus(h, last) // a pipeline that starts later learns the current status
	}
}

// Report implements componentstatus.Reporter.
func (s *statusHosts) Report(ev *componentstatus.Event) {
	s.mu.Lock()
	s.last = ev
	hosts := slices.Clone(s.hosts)
	s.mu.Unlock()
	for _, h := range hosts {
		componentstatus.ReportStatus(h, ev)
	}
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
