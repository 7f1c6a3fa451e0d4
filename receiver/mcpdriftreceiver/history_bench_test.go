package mcpdriftreceiver

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/dev/testkit/benchutil"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
)

// quickstartSnap is a contract shaped like the quickstart server's: four
// tools with real input schemas; version v changes create_ticket's required
// parameters and get_weather's description, and adds a tool every other
// version, so each drift has changes of every severity and definitions of
// a few hundred bytes.
func quickstartSnap(tb testing.TB, v int) *contract.Snapshot {
	tb.Helper()
	required := `["title"]`
	if v%2 == 1 {
		required = `["title","project"]`
	}
	raws := []json.RawMessage{
		json.RawMessage(`{"name":"search_docs","description":"Search the product documentation and return the best matching pages.","inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"what to look for"},"limit":{"type":"integer","minimum":1,"maximum":20,"default":5}},"required":["query"]},"annotations":{"readOnlyHint":true}}`),
		json.RawMessage(fmt.Sprintf(`{"name":"get_weather","description":"Current conditions for a city (revision %d), with temperature in Celsius and wind in km/h.","inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"annotations":{"readOnlyHint":true}}`, v)),
		json.RawMessage(`{"name":"create_ticket","description":"File a support ticket.","inputSchema":{"type":"object","properties":{"title":{"type":"string"},"body":{"type":"string"},"priority":{"type":"string","enum":["low","normal","high"]},"project":{"type":"string","description":"project key, e.g. DEMO"}},"required":` + required + `}}`),
	}
	if v%2 == 1 {
		raws = append(raws, json.RawMessage(`{"name":"get_forecast","description":"Get tomorrow's forecast for a city.","inputSchema":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city"]},"annotations":{"readOnlyHint":true}}`))
	}
	l, err := contract.DefaultLimits().HashDefinitions(contract.KindTool, raws)
	if err != nil {
		tb.Fatal(err)
	}
	s := &contract.Snapshot{ProtocolVersion: "2026-07-28", Tools: l, Capabilities: json.RawMessage(`{"tools":{"listChanged":true}}`)}
	if err := s.Seal(); err != nil {
		tb.Fatal(err)
	}
	return s
}

// fullHistory is a target whose history holds max_drifts (100) quickstart
// drifts.
func fullHistory(tb testing.TB) *target {
	cfg := testConfig("srv")
	t := newTarget(cfg.Targets[0], cfg, func(a, b *contract.Snapshot) *contract.Report { return contract.Diff(a, b, nil) })
	prev := quickstartSnap(tb, 0)
	for v := 1; v <= cfg.DriftHistory.MaxDrifts; v++ {
		cur := quickstartSnap(tb, v)
		t.history.record(driftEvent(prev, cur, time.Unix(int64(v), 0)))
		prev = cur
	}
	if len(t.history.entries) != cfg.DriftHistory.MaxDrifts {
		tb.Fatalf("history holds %d drifts", len(t.history.entries))
	}
	return t
}

// BenchmarkDriftHistoryPage times a page of the 100 newest drifts as the
// control plane serves it (GET /api/v1/servers/{name}/drifts?limit=100: the
// view under the target's lock, then the JSON), reports its percentiles and
// the ratio to the baseline, encoding the same page already copied; and
// the history's memory per target: the encoded bytes the API reports and
// the heap it holds.
func BenchmarkDriftHistoryPage(b *testing.B) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	t := fullHistory(b)
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc - before.HeapAlloc)
	view := driftView{&driftReceiver{targets: []*target{t}}}

	var lat benchutil.Latencies
	var size int
	lat.Loop(b, func() {
		page, err := view.Drifts("srv", controlplane.DriftQuery{Limit: 100})
		if err != nil {
			b.Fatal(err)
		}
		body, err := json.Marshal(page)
		if err != nil {
			b.Fatal(err)
		}
		size = len(body)
	})
	perPage := benchutil.Elapsed(b)
	page, _ := view.Drifts("srv", controlplane.DriftQuery{Limit: 100})
	encode := benchutil.NsPerOp(b.N, func() { _, _ = json.Marshal(page) })
	lat.Report(b)
	b.ReportMetric(perPage/encode, "x-encode-only")
	b.ReportMetric(float64(size), "page-bytes")
	b.ReportMetric(float64(t.history.bytes), "history-bytes/target")
	b.ReportMetric(heap, "heap-bytes/target")
	runtime.KeepAlive(t)
}
