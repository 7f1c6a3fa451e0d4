package apiwire

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
)

// TestDriftEncodings: a drift's kept encoding, a detail's and a page's
// JSON say what encoding/json says of the same values.
func TestDriftEncodings(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	comment := "<ok>"
	d := Drift{ID: "abc", DriftID: "abc", Server: "s<&>", At: at, Severity: "breaking", State: DriftAccepted, ClosedAt: &at,
		Accepted: &Acceptance{By: "alice", At: at, Comment: &comment}, Description: "a \"b\"",
		Changes: []contract.Change{{Rule: "tool.added", Severity: contract.Compatible, Subject: "tool", Name: "x", After: json.RawMessage(`{"name":"x"}`)}}}
	plain := d
	enc, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d.Encoded = enc
	page := DriftPage{Server: "s<&>", Drifts: []Drift{d, plain}, Total: 7, Next: "abc"}
	raw, err := page.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(raw) {
		t.Fatalf("not JSON: %s", raw)
	}
	var got, want map[string]any
	type plainPage struct {
		Server string      `json:"server"`
		Drifts []driftJSON `json:"drifts"`
		Total  int         `json:"total"`
		Next   *string     `json:"next"`
	}
	wantRaw, _ := json.Marshal(plainPage{Server: page.Server, Drifts: []driftJSON{driftJSON(plain), driftJSON(plain)}, Total: 7, Next: &page.Next})
	_ = json.Unmarshal(raw, &got)
	_ = json.Unmarshal(wantRaw, &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("page\n%s\nwant\n%s", raw, wantRaw)
	}

	detail := DriftDetail{Drift: d, Definitions: []DefinitionChange{{Subject: "tool", Name: "x", After: json.RawMessage(`{"name":"x"}`)}}}
	b, err := json.Marshal(detail)
	if err != nil {
		t.Fatal(err)
	}
	var back DriftDetail
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.ID != "abc" || len(back.Definitions) != 1 || *back.Accepted.Comment != "<ok>" || back.Server != "s<&>" {
		t.Errorf("detail round trip: %s", b)
	}
}
