package contract

import (
	"encoding/json"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"slices"
	"strings"
	"testing"
)

// Tool names that differ only in an unpaired surrogate are different names:
// "a\ud800" and "a\udfff" must not share a key (decoding them into Go
// strings the usual way turns both into "a\uFFFD").
const (
	loneHigh = `{"name":"a\ud800","description":"Look up a record","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}}}`
	loneLow  = `{"name":"a\udfff","description":"Look up a record","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}}}`
)

func surrogateListing(t *testing.T, defs ...string) Listing {
	t.Helper()
	raws := make([]json.RawMessage, len(defs))
	for i, d := range defs {
		raws[i] = json.RawMessage(d)
	}
	l, err := DefaultLimits().HashDefinitions(KindTool, raws)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestSurrogateKeysStayDistinct(t *testing.T) {
	l := surrogateListing(t, loneLow, loneHigh)
	if len(l) != 2 || l[0].Key == l[1].Key {
		t.Fatalf("keys merged: %q", l.Keys())
	}
	// Listing order is UTF-16 order: D800 before DFFF.
	if got := []string{SanitizeText(l[0].Key), SanitizeText(l[1].Key)}; !slices.Equal(got, []string{`a\u{D800}`, `a\u{DFFF}`}) {
		t.Errorf("displayed keys %q", got)
	}
	if d, ok := l.Lookup(l[1].Key); !ok || d.Digest != l[1].Digest {
		t.Errorf("lookup of the second key found %v", d)
	}
	// The set digest is the recipe's: names are written as UTF-8, where an
	// unpaired surrogate is U+FFFD (WHATWG), in UTF-16 order.
	want := canon.HashString("a\uFFFD:" + l[0].Digest + "\na\uFFFD:" + l[1].Digest)
	if got := l.SetDigest(); got != want {
		t.Errorf("set digest %s, want %s", got, want)
	}
	if dups := duplicateKeys(l); len(dups) != 0 {
		t.Errorf("duplicate keys reported: %q", dups)
	}
}

func TestSurrogateKeysJSON(t *testing.T) {
	l := surrogateListing(t, loneHigh)
	if got := string(jsonString(l[0].Key)); got != `"a\ud800"` {
		t.Errorf("jsonString = %s", got)
	}
	if key, ok := canon.UnquoteKey([]byte(`"a\ud800"`)); !ok || key != l[0].Key {
		t.Errorf("UnquoteKey = %q, %v; want %q", key, ok, l[0].Key)
	}
	if key, ok := canon.UnquoteKey([]byte(`"a\ud83d\ude00"`)); !ok || key != "a\U0001F600" {
		t.Errorf("a surrogate pair decodes to its character: %q %v", key, ok)
	}
	if got := canon.KeyUTF8(l[0].Key); got != "a\uFFFD" {
		t.Errorf("KeyUTF8 = %q", got)
	}
}

func TestSurrogateKeysSnapshotRoundTrip(t *testing.T) {
	s := &Snapshot{Tools: surrogateListing(t, loneHigh, loneLow)}
	if err := s.Seal(); err != nil {
		t.Fatal(err)
	}
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"key": "a\ud800"`, `"key": "a\udfff"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("encoded snapshot lacks %s:\n%s", want, b)
		}
	}
	back, err := DecodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Tools.Keys(), s.Tools.Keys()) || back.Digests != s.Digests {
		t.Errorf("round trip changed keys %q → %q", s.Tools.Keys(), back.Tools.Keys())
	}
	if r := Diff(s, back, nil); !r.Empty() {
		t.Errorf("round trip is drift: %v", r.Changes)
	}
	// Snapshots written before keys kept surrogates stored "a\ufffd" as the
	// key: they still read, with the exact keys derived from the definitions.
	legacy := strings.ReplaceAll(string(b), `"key": "a\ud800"`, `"key": "a\ufffd"`)
	legacy = strings.ReplaceAll(legacy, `"key": "a\udfff"`, `"key": "a\ufffd"`)
	old, err := DecodeSnapshot([]byte(legacy))
	if err != nil {
		t.Fatalf("legacy snapshot: %v", err)
	}
	if !slices.Equal(old.Tools.Keys(), s.Tools.Keys()) {
		t.Errorf("legacy keys %q", old.Tools.Keys())
	}
	// A stored key that names neither is still refused.
	if _, err := DecodeSnapshot([]byte(strings.Replace(string(b), `"key": "a\ud800"`, `"key": "b"`, 1))); err == nil {
		t.Error("a snapshot whose key disagrees with its definition was accepted")
	}
}

func TestSurrogateKeysDiff(t *testing.T) {
	old := &Snapshot{Tools: surrogateListing(t, loneHigh)}
	renamed := &Snapshot{Tools: surrogateListing(t, loneLow)}
	for _, s := range []*Snapshot{old, renamed} {
		if err := s.Seal(); err != nil {
			t.Fatal(err)
		}
	}
	r := Diff(old, renamed, nil)
	if len(r.Changes) != 1 || r.Changes[0].Rule != "tool.renamed" || r.Worst() != Breaking {
		t.Fatalf("a\\ud800 → a\\udfff: %+v", r.Changes)
	}
	c := r.Changes[0]
	if c.Name != old.Tools[0].Key || string(c.Before) != `"a\ud800"` || string(c.After) != `"a\udfff"` {
		t.Errorf("change name %q, before %s, after %s", c.Name, c.Before, c.After)
	}
	if !strings.Contains(c.Message, `a\u{D800}`) || !strings.Contains(c.Message, `a\u{DFFF}`) {
		t.Errorf("message does not tell the names apart: %s", c.Message)
	}
	b, err := r.MarshalJSON()
	if err != nil || !strings.Contains(string(b), `"name":"a\ud800"`) {
		t.Errorf("report JSON: %s, %v", b, err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || back.Changes[0].Name != c.Name {
		t.Errorf("report JSON read back: %+v, %v", back.Changes, err)
	}
	// Both tools listed, in either order: no drift.
	both := &Snapshot{Tools: surrogateListing(t, loneHigh, loneLow)}
	swapped := &Snapshot{Tools: surrogateListing(t, loneLow, loneHigh)}
	if err := both.Seal(); err != nil {
		t.Fatal(err)
	}
	if err := swapped.Seal(); err != nil {
		t.Fatal(err)
	}
	if r := Diff(both, swapped, nil); !r.Empty() {
		t.Errorf("reordering is drift: %+v", r.Changes)
	}
	// Adding the second is an addition, not a change to the first.
	if r := Diff(old, both, nil); len(r.Changes) != 1 || r.Changes[0].Rule != "tool.added" {
		t.Errorf("adding a\\udfff: %+v", r.Changes)
	}
}
