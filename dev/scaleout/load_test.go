package scaleout

import (
	"context"
	"testing"
	"time"
)

// The load reaches an OTLP endpoint whole (a Store stands in for the
// Collector here), every server in turn, and the store keeps what it counts
// until told to discard.
func TestLoadIntoStore(t *testing.T) {
	store, err := NewStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	servers := []string{"a", "b", "c"}
	load := Load{Servers: servers, Batch: 30, Workers: 3}
	sent, err := load.Send(ctx, store.Endpoint, 250)
	if err != nil {
		t.Fatal(err)
	}
	if sent != 270 || store.Spans() != 270 {
		t.Fatalf("sent %d, stored %d; want 270 (whole requests of 30)", sent, store.Spans())
	}
	perServer := map[string]int{}
	for _, sp := range store.Outputs().ToolCalls() {
		perServer[sp.ServerName()]++
		if sp.Attr("gen_ai.tool.name") == "" || sp.Span.TraceID().IsEmpty() {
			t.Fatalf("span without a tool or trace id: %v", sp.Span.Attributes().AsRaw())
		}
	}
	for _, s := range servers {
		if perServer[s] != 90 {
			t.Errorf("server %s: %d calls, want 90 (one in three): %v", s, perServer[s], perServer)
		}
	}

	store.Discard()
	if _, err := load.Send(ctx, store.Endpoint, 30); err != nil {
		t.Fatal(err)
	}
	if store.Spans() != 300 || len(store.Outputs().ToolCalls()) != 270 {
		t.Errorf("after Discard: counted %d (want 300), kept %d (want 270)", store.Spans(), len(store.Outputs().ToolCalls()))
	}
}

// The overlay tier 1 gets lists the tier-2 endpoints and the targets.
func TestTier1Overlay(t *testing.T) {
	t2 := []*Tier2{{Collector: &Collector{Port: 4001}}, {Collector: &Collector{Port: 4002}}}
	got := tier1Overlay(t2, []Target{{Name: "alpha", Endpoint: "http://127.0.0.1:1/mcp"}})
	want := `exporters:
  load_balancing/by_server:
    resolver:
      dns: null
      static:
        hostnames:
          - "127.0.0.1:4001"
          - "127.0.0.1:4002"
receivers:
  mcpdrift:
    targets:
      - name: "alpha"
        endpoint: "http://127.0.0.1:1/mcp"
`
	if got != want {
		t.Errorf("overlay:\n%s\nwant:\n%s", got, want)
	}
}
