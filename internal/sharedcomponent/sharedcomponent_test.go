package sharedcomponent

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
)

type counting struct {
	starts, stops int
	startErr      error
}

func (c *counting) Start(context.Context, component.Host) error { c.starts++; return c.startErr }
func (c *counting) Shutdown(context.Context) error              { c.stops++; return nil }

func TestSharedOnceAcrossPipelines(t *testing.T) {
	m := NewMap[string, *counting]()
	created := 0
	create := func() (*counting, error) { created++; return &counting{}, nil }
	a, err := m.LoadOrStore("x", create)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.LoadOrStore("x", create)
	if a != b || created != 1 || a.Unwrap() != b.Unwrap() {
		t.Fatalf("not shared: created %d", created)
	}
	host := componenttest.NewNopHost()
	for _, c := range []*Component[*counting]{a, b} {
		if err := c.Start(context.Background(), host); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []*Component[*counting]{a, b} {
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if v := a.Unwrap(); v.starts != 1 || v.stops != 1 {
		t.Errorf("starts %d stops %d", v.starts, v.stops)
	}
	if m.Len() != 0 {
		t.Error("instance not removed after shutdown")
	}
	c, _ := m.LoadOrStore("x", create)
	if c == a || created != 2 {
		t.Error("a reload must create a fresh instance")
	}
}

func TestStartErrorRepeats(t *testing.T) {
	m := NewMap[int, *counting]()
	boom := errors.New("boom")
	c, _ := m.LoadOrStore(1, func() (*counting, error) { return &counting{startErr: boom}, nil })
	for range 2 {
		if err := c.Start(context.Background(), componenttest.NewNopHost()); !errors.Is(err, boom) {
			t.Errorf("got %v", err)
		}
	}
	if c.Unwrap().starts != 1 {
		t.Error("started twice")
	}
	if _, err := m.LoadOrStore(2, func() (*counting, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Error("create error lost")
	}
}

// statusRecorder is a host that keeps the status events reported to it.
type statusRecorder struct {
	component.Host
	events []componentstatus.Status
}

func (h *statusRecorder) Report(ev *componentstatus.Event) { h.events = append(h.events, ev.Status()) }

// reporting reports a permanent error while it starts.
type reporting struct{ counting }

func (r *reporting) Start(_ context.Context, host component.Host) error {
	componentstatus.ReportStatus(host, componentstatus.NewPermanentErrorEvent(errors.New("degraded")))
	return nil
}

func TestStatusReachesEveryPipeline(t *testing.T) {
	m := NewMap[string, *reporting]()
	c, _ := m.LoadOrStore("x", func() (*reporting, error) { return &reporting{}, nil })
	first := &statusRecorder{Host: componenttest.NewNopHost()}
	second := &statusRecorder{Host: componenttest.NewNopHost()}
	for _, h := range []*statusRecorder{first, second} {
		if err := c.Start(context.Background(), h); err != nil {
			t.Fatal(err)
		}
	}
	for i, h := range []*statusRecorder{first, second} {
		if len(h.events) != 1 || h.events[0] != componentstatus.StatusPermanentError {
			t.Errorf("pipeline %d saw %v, want the permanent error", i, h.events)
		}
	}
}
