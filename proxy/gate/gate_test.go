package gate_test

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/proxy/gate"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestCheck: the gate's verdict on a call, from the digest the session was
// served and the server's current definitions (the end-to-end tests drive
// the same through every mode).
func TestCheck(t *testing.T) {
	current := gate.Definitions{"echo": {Digest: "v2"}, "add": {Digest: "a1"}}
	for _, tc := range []struct {
		name string
		opts gate.Options
		call gate.Call
		want string // the refusal's code; "" passes
	}{
		{"observe forwards a stale call", gate.Options{}, gate.Call{Tool: "echo", Planned: "v1", Listed: true}, ""},
		{"refuse: planned against v1, v2 served", gate.Options{Refuse: true}, gate.Call{Tool: "echo", Planned: "v1", Listed: true}, semconv.RefusalStaleToolSchema},
		{"refuse: planned against what is served", gate.Options{Refuse: true}, gate.Call{Tool: "echo", Planned: "v2", Listed: true}, ""},
		{"refuse: never listed", gate.Options{Refuse: true}, gate.Call{Tool: "echo"}, ""},
		{"lock: approved", gate.Options{Lock: map[string]string{"echo": "v2"}}, gate.Call{Tool: "echo", Planned: "v2", Listed: true}, ""},
		{"lock: changed since approval", gate.Options{Lock: map[string]string{"echo": "v1"}}, gate.Call{Tool: "echo", Planned: "v1", Listed: true}, semconv.RefusalToolNotApproved},
		{"lock: not in the lock", gate.Options{Lock: map[string]string{"echo": "v2"}}, gate.Call{Tool: "add", Planned: "a1", Listed: true}, semconv.RefusalToolNotApproved},
		{"lock: unknown tool", gate.Options{Lock: map[string]string{"echo": "v2"}}, gate.Call{Tool: "rm"}, semconv.RefusalToolNotApproved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gate.New(tc.opts)
			g.Learn(current)
			got := ""
			if ref := g.Check(tc.call); ref != nil {
				got = ref.Code()
			}
			if got != tc.want {
				t.Errorf("Check(%+v) = %q, want %q", tc.call, got, tc.want)
			}
		})
	}
}

// TestLearn: Learn reports a change of digest, not of a kept schema, and
// not the first definitions learned.
func TestLearn(t *testing.T) {
	g := gate.New(gate.Options{Refuse: true})
	if g.Learn(gate.Definitions{"echo": {Digest: "v1"}}) {
		t.Error("the first definitions counted as a change")
	}
	if g.Learn(gate.Definitions{"echo": {Digest: "v1", Schema: []byte(`{}`)}}) {
		t.Error("the same digest counted as a change")
	}
	if !g.Learn(gate.Definitions{"echo": {Digest: "v2"}}) {
		t.Error("a new digest was not a change")
	}
	if g.Current()["echo"].Digest != "v2" {
		t.Errorf("current %v", g.Current())
	}
}

// TestServe: the listing a session was served is kept apart from the
// server's current definitions (a relist learns the latter only).
func TestServe(t *testing.T) {
	g := gate.New(gate.Options{Refuse: true})
	if g.Served() != nil {
		t.Fatal("served a listing before any")
	}
	v1 := gate.Definitions{"echo": {Digest: "v1", Schema: []byte(`{"type":"object"}`)}}
	g.Serve(v1)
	g.Learn(v1)
	g.Learn(gate.Definitions{"echo": {Digest: "v2"}})
	if d := g.Served()["echo"]; d.Digest != "v1" || string(d.Schema) != `{"type":"object"}` {
		t.Errorf("served %+v after a relist", d)
	}
	if ref := g.Check(gate.Call{Tool: "echo", Planned: g.Served()["echo"].Digest, Listed: true}); ref == nil || ref.Code() != semconv.RefusalStaleToolSchema {
		t.Errorf("a call planned on the served v1 with v2 current: %v", ref)
	}
}
