package mcpdriftreceiver

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
)

// goldenConfig is the receiver testdata/storage-v1 was written by: "srv"
// (stdio) and "svc" (an endpoint: a fleet), pinned, with a per-drift budget
// small enough to truncate svc's large definitions.
func goldenConfig() *Config {
	cfg := testConfig("srv")
	cfg.Targets = append(cfg.Targets, TargetConfig{Name: "svc", Transport: "auto"})
	cfg.Targets[1].Endpoint = "http://svc.example:8080/mcp"
	cfg.Storage = &storageID
	cfg.Baseline = BaselinePinned
	cfg.ConfirmAfter = 1
	cfg.ConfirmSamples = 0
	cfg.DriftHistory.MaxDriftBytes = minHistoryDriftBytes
	return cfg
}

// goldenSnap is a sealed contract with a serverInfo and tools whose
// descriptions carry what JSON encoders treat differently (<, >, &, é).
func goldenSnap(t *testing.T, version string, tools map[string]string) *contract.Snapshot {
	t.Helper()
	s := snap(t, tools)
	s.ServerInfo = json.RawMessage(`{"name":"golden-demo","version":"` + version + `"}`)
	s.Digests = contract.Digests{}
	if err := s.Seal(); err != nil {
		t.Fatal(err)
	}
	return s
}

// apiAnswers is what the control plane serves about a receiver's stored
// state right after a restart (no probe since): the servers, each drift
// page and each drift.
type apiAnswers struct {
	Servers []apiwire.ServerStatus         `json:"servers"`
	Pages   map[string]apiwire.DriftPage   `json:"pages"`
	Drifts  map[string]apiwire.DriftDetail `json:"drifts"`
}

func answers(t *testing.T, v driftView) []byte {
	t.Helper()
	out := apiAnswers{Servers: v.Servers(), Pages: map[string]apiwire.DriftPage{}, Drifts: map[string]apiwire.DriftDetail{}}
	for _, s := range out.Servers {
		page, err := v.Drifts(s.Name, controlplane.DriftQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		out.Pages[s.Name] = page
		for _, d := range page.Drifts {
			if out.Drifts[d.ID], err = v.Drift(d.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// goldenKeys are the storage keys testdata/storage-v1 holds, each in a file
// named after it.
var goldenKeys = []string{"target/srv", "history/srv", "target/svc", "history/svc"}

func goldenFile(key string) string {
	return "testdata/storage-v1/" + strings.ReplaceAll(key, "/", "_") + ".json"
}

// updateAPIGolden rewrites testdata/storage-v1/api.json, for when the API's
// JSON changes on purpose. The stored files beside it are never rewritten:
// they are what the receiver wrote at version 1.
var updateAPIGolden = flag.Bool("update-api-golden", false, "rewrite testdata/storage-v1/api.json from what the API serves now")

// withStoredValues opens the receiver's storage on dir, as the test
// receiver's owner, for f; it is closed before the receiver opens it (a
// file_storage file has one user at a time).
func withStoredValues(t *testing.T, dir string, f func(storage.Client)) {
	t.Helper()
	ctx := context.Background()
	host := newStorageHost(t, dir, nil)
	client, err := host.Extensions[storageID].(storage.Extension).GetClient(ctx, component.KindReceiver, receiverSettings().ID, "")
	if err != nil {
		t.Fatal(err)
	}
	f(client)
	if err := client.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := host.Extensions[storageID].Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// seedGolden stores the golden values, with over replacing some, on dir.
func seedGolden(t *testing.T, dir string, over map[string][]byte) {
	t.Helper()
	withStoredValues(t, dir, func(c storage.Client) {
		for _, k := range goldenKeys {
			raw, ok := over[k]
			if !ok {
				raw = readGolden(t, k)
			}
			if err := c.Set(context.Background(), k, raw); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func readGolden(t *testing.T, key string) []byte {
	t.Helper()
	raw, err := os.ReadFile(goldenFile(key))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// storedValue is the value under key in the storage on dir.
func storedValue(t *testing.T, dir, key string) []byte {
	t.Helper()
	var raw []byte
	withStoredValues(t, dir, func(c storage.Client) {
		var err error
		if raw, err = c.Get(context.Background(), key); err != nil {
			t.Fatal(err)
		}
	})
	return raw
}

// TestStoredV1Golden: what the receiver stored at version 1, when its
// history held the API's types (testdata/storage-v1, written by main at
// d35e587: two pinned targets; a history with open, superseded, accepted
// (with a comment), reverted and truncated drifts; a pinned target's open
// drift; a mixed fleet's evidence; text with <, &, é), loads, and the
// control plane serves it as main did (api.json). Stored again, it is the
// same bytes: a change of the API's JSON, or of the records, that would
// alter what is on disk fails here.
func TestStoredV1Golden(t *testing.T) {
	dir := t.TempDir()
	seedGolden(t, dir, nil)
	host := newStorageHost(t, dir, nil)
	r, _, _ := startManualOn(t, goldenConfig(), newFakeProber(), host)

	got := answers(t, driftView{r})
	if *updateAPIGolden {
		if err := os.WriteFile("testdata/storage-v1/api.json", got, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if want, err := os.ReadFile("testdata/storage-v1/api.json"); err != nil || string(got) != string(want) {
		t.Errorf("the API serves the stored state otherwise than main did (%v):\n%s", err, lineDiff(string(want), string(got)))
	}

	for _, tgt := range r.targets {
		tgt.stateMu.Lock()
		r.persist(context.Background(), tgt, true)
		tgt.stateMu.Unlock()
	}
	stop(t, r, host)
	for _, k := range goldenKeys {
		if got, want := storedValue(t, dir, k), readGolden(t, k); string(got) != string(want) {
			t.Errorf("%s stored again differs from version 1 as main wrote it:\n%s", k, lineDiff(string(want), string(got)))
		}
	}
}

// lineDiff shows the first difference of two texts, with context.
func lineDiff(want, got string) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(0, i-80)
	return fmt.Sprintf("at byte %d\nwant …%s…\ngot  …%s…", i, want[from:min(len(want), i+80)], got[from:min(len(got), i+80)])
}

// TestStoredNewerVersionKept: after a downgrade, a stored value of a newer
// version is refused with a warning that says so, and lost to nothing: it is
// never written over (going back to that version finds it as it was),
// while what this build can read still restores. Here srv's history and
// svc's baseline are newer: srv's baseline restores and its drifts are
// kept in memory; svc takes a fresh baseline, in memory.
func TestStoredNewerVersionKept(t *testing.T) {
	dir := t.TempDir()
	newer := map[string][]byte{
		// A newer layout, which version 1's types cannot decode.
		"history/srv": []byte(`{"version":2,"target":"srv","drifts":{"by_id":{}}}`),
		"target/svc":  []byte(`{"version":2,"target":"svc","baseline":{"format":"other"}}`),
	}
	seedGolden(t, dir, newer)
	var golden storedState
	if err := json.Unmarshal(readGolden(t, "target/srv"), &golden); err != nil {
		t.Fatal(err)
	}
	baseline, err := contract.DecodeSnapshot(golden.Baseline)
	if err != nil {
		t.Fatal(err)
	}

	core, observed := observer.New(zapcore.WarnLevel)
	set := receiverSettings()
	set.Logger = zap.New(core)
	p := newFakeProber()
	host := newStorageHost(t, dir, nil)
	r, _, _ := startManualWith(t, set, goldenConfig(), p, host)
	v := driftView{r}
	for msg, target := range map[string]string{
		"Keeping stored drift history of a newer version as it is; this target's drifts are kept in memory only":       "srv",
		"Keeping stored baseline of a newer version as it is; the next probe sets a new baseline, kept in memory only": "svc",
	} {
		got := observed.FilterMessage(msg).All()
		if len(got) != 1 || got[0].ContextMap()["target"] != target || !strings.Contains(fmt.Sprint(got[0].ContextMap()["error"]), "version 2, written by a newer version of mcpdrift (this build reads 1)") {
			t.Errorf("want one warning %q for %s, got %v", msg, target, observed.All())
		}
	}
	if n := observed.Len(); n != 2 {
		t.Errorf("%d warnings, want the two: %v", n, observed.All())
	}
	srv := v.Servers()[0]
	if srv.Contract == nil || srv.Contract.BaselineDigest != baseline.Digests.Contract || srv.History.Drifts != 0 {
		t.Fatalf("srv after the restart: contract %+v, history %+v; want the stored baseline, no drifts", srv.Contract, srv.History)
	}

	// Both targets run on: srv drifts (kept in memory, served), svc takes a
	// baseline.
	d := goldenSnap(t, "9.0.0", map[string]string{"other": "Another tool"})
	p.set("srv", d, nil)
	p.set("svc", d, nil)
	for i := 0; v.Servers()[0].History.Drifts == 0; i++ {
		if i == 5 {
			t.Fatal("no drift of srv in 5 probes")
		}
		r.runProbe(context.Background(), r.targets[0])
	}
	r.runProbe(context.Background(), r.targets[1])
	if page, _ := v.Drifts("srv", controlplane.DriftQuery{Limit: 10}); len(page.Drifts) != 1 || page.Drifts[0].CurrentContract != d.Digests.Contract {
		t.Errorf("srv's drift is not served: %+v", page.Drifts)
	}
	if st := v.Servers()[1]; st.Contract == nil || st.Contract.BaselineDigest != d.Digests.Contract {
		t.Errorf("svc did not take a fresh baseline: %+v", st.Contract)
	}
	stop(t, r, host)

	for k, want := range newer {
		if got := storedValue(t, dir, k); string(got) != string(want) {
			t.Errorf("%s of the newer version was written over: %s", k, got)
		}
	}
	var after storedState
	if err := json.Unmarshal(storedValue(t, dir, "target/srv"), &after); err != nil || string(after.Current) == string(golden.Current) {
		t.Errorf("srv's baseline state, which this build reads, was not stored again (%v)", err)
	}
}
