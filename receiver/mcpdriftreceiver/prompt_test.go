package mcpdriftreceiver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
)

// TestProbeNow: a prompt probe runs out of schedule, feeds the tracker like
// any probe, and hands its observation to whoever asked; unknown targets
// and a stopped receiver take no request.
func TestProbeNow(t *testing.T) {
	s := newServing(t, BaselineAdvance, nil)
	s.serve(s.a, nil)
	s.p.set("srv", s.b, nil)

	landed := make(chan controlplane.Observation, 1)
	if !s.view.ProbeNow("srv", func(o controlplane.Observation) { landed <- o }) {
		t.Fatal("the receiver took no prompt probe")
	}
	var o controlplane.Observation
	select {
	case o = <-landed:
	case <-time.After(30 * time.Second):
		t.Fatal("no observation")
	}
	if o.Err != nil || o.Server != "srv" || len(o.ToolDigests) != 2 || o.ToolDigests["fetch"] != s.b.Tools[0].Digest {
		t.Fatalf("observation %+v", o)
	}
	if got := s.status(t); got.Contract.Digest != s.b.Digests.Contract {
		t.Errorf("the prompt probe did not reach the tracker (confirm_after 1): %s", got.Contract.Digest)
	}

	// A failed probe says so.
	s.p.set("srv", nil, errors.New("connection refused"))
	if !s.view.ProbeNow("srv", func(o controlplane.Observation) { landed <- o }) {
		t.Fatal("no prompt probe")
	}
	if o := <-landed; o.Err == nil || o.ToolDigests != nil {
		t.Errorf("failed probe's observation %+v", o)
	}

	if s.view.ProbeNow("nope", func(controlplane.Observation) { t.Error("called") }) {
		t.Error("an unknown target took a request")
	}
	if err := s.r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.view.ProbeNow("srv", func(controlplane.Observation) { t.Error("called") }) {
		t.Error("a stopped receiver took a request")
	}
}

// TestPromptWaitersAnsweredByLaterProbes: a request is answered only by a
// probe that started after it.
func TestPromptWaitersAnsweredByLaterProbes(t *testing.T) {
	var w promptWaiters
	t0 := time.Unix(1000, 0)
	w.add(t0, nil)
	w.add(t0.Add(time.Second), nil)
	if got := w.take(t0.Add(time.Millisecond)); len(got) != 1 || !w.pending() {
		t.Fatalf("took %d", len(got))
	}
	if got := w.take(t0.Add(2 * time.Second)); len(got) != 1 || w.pending() {
		t.Fatalf("took %d", len(got))
	}
}

// TestProbeNowAsAProbeEnds: a request that arrives when a probe loop has
// found none waiting, but before it lets go of the target, finds the target
// held and leaves itself to that loop: the loop probes once more for it,
// rather than leaving it to the next scheduled probe (an hour away here).
// Exactly one more probe: the request is not answered twice, nor probed
// for twice.
func TestProbeNowAsAProbeEnds(t *testing.T) {
	s := newServing(t, BaselineAdvance, nil)
	s.serve(s.a, nil)
	s.p.set("srv", s.b, nil)
	before := s.p.count("srv")

	first := make(chan controlplane.Observation, 1)
	late := make(chan controlplane.Observation, 2)
	took := false
	s.r.beforeRelease = func(*target) {
		if took {
			return
		}
		took = s.view.ProbeNow("srv", func(o controlplane.Observation) { late <- o })
	}
	if !s.view.ProbeNow("srv", func(o controlplane.Observation) { first <- o }) {
		t.Fatal("the receiver took no prompt probe")
	}
	s.r.prompts.Wait()
	if !took {
		t.Fatal("the late request was refused")
	}
	select {
	case o := <-first:
		if o.Err != nil {
			t.Errorf("first observation %+v", o)
		}
	default:
		t.Fatal("the first request was not answered")
	}
	select {
	case o := <-late:
		if o.Err != nil || o.ToolDigests["fetch"] != s.b.Tools[0].Digest {
			t.Errorf("late observation %+v", o)
		}
	default:
		t.Fatal("a request that arrived as the probe ended waits for the next scheduled probe")
	}
	if len(late) != 0 {
		t.Error("the late request was answered twice")
	}
	if got := s.p.count("srv") - before; got != 2 {
		t.Errorf("%d probes for two requests, one after the other's probe: want 2", got)
	}
	if s.r.targets[0].running.Load() {
		t.Error("the target is still held")
	}
}
