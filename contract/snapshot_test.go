package contract

import (
	"encoding/json"
	"errors"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fixtureSnapshot builds a sealed snapshot from a server-everything fixture.
func fixtureSnapshot(t testing.TB, version string) *Snapshot {
	t.Helper()
	dir := filepath.Join("..", "testdata", "fixtures", "server-everything", version)
	var inputs [][]byte
	for _, f := range []string{"initialize.json", "tools-list.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	doc, err := ReadDocument(ReadOptions{}, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	s := doc.Snapshot
	s.Server = Server{Name: "everything", Command: []string{"npx", "@modelcontextprotocol/server-everything@" + version}, Transport: TransportStdio}
	s.ObservedAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s.SpecGeneration = SpecStateful2025
	s.ClientCapabilities = json.RawMessage(`{"roots":{},"sampling":{},"elicitation":{}}`)
	if err := s.Seal(); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSnapshotRoundTrip(t *testing.T) {
	s := fixtureSnapshot(t, "2025.11.25")
	if s.Instructions == nil || s.Digests.Instructions == nil || len(s.Tools) == 0 {
		t.Fatalf("fixture snapshot incomplete: %+v", s.Digests)
	}
	if !reflect.DeepEqual(s.CapabilityNames, []string{"completions", "logging", "prompts", "resources", "resources.subscribe", "tools"}) {
		t.Errorf("capability names %v", s.CapabilityNames)
	}
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := back.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(b2) {
		t.Errorf("encode/decode/encode is not stable:\n%s\n---\n%s", b[:300], b2[:300])
	}
	if back.Digests != s.Digests && !reflect.DeepEqual(back.Digests, s.Digests) {
		t.Errorf("digests changed: %+v vs %+v", back.Digests, s.Digests)
	}
}

func TestContractDigestCoversContractOnly(t *testing.T) {
	base := fixtureSnapshot(t, "2025.11.25")
	mutate := func(f func(s *Snapshot)) string {
		s := fixtureSnapshot(t, "2025.11.25")
		f(s)
		if err := s.Seal(); err != nil {
			t.Fatal(err)
		}
		return s.Digests.Contract
	}
	same := map[string]func(*Snapshot){
		"observed_at": func(s *Snapshot) { s.ObservedAt = s.ObservedAt.Add(time.Hour) },
		"server":      func(s *Snapshot) { s.Server.Name = "other" },
		"server_info": func(s *Snapshot) { s.ServerInfo = json.RawMessage(`{"name":"x","version":"9"}`) },
		"client caps": func(s *Snapshot) { s.ClientCapabilities = nil },
		"tool order":  func(s *Snapshot) { s.Tools[0], s.Tools[1] = s.Tools[1], s.Tools[0] },
	}
	for name, f := range same {
		if got := mutate(f); got != base.Digests.Contract {
			t.Errorf("%s changed the contract digest", name)
		}
	}
	differ := map[string]func(*Snapshot){
		"protocol":     func(s *Snapshot) { s.ProtocolVersion = "2025-06-18" },
		"generation":   func(s *Snapshot) { s.SpecGeneration = SpecStateless2026 },
		"capabilities": func(s *Snapshot) { s.Capabilities = json.RawMessage(`{"tools":{}}`) },
		"instructions": func(s *Snapshot) { x := "other"; s.Instructions = &x },
		"no instr":     func(s *Snapshot) { s.Instructions = nil },
		"tool removed": func(s *Snapshot) { s.Tools = s.Tools[1:] },
		"prompt added": func(s *Snapshot) {
			s.Prompts = Listing{{Key: "p", Digest: canon.HashString("p"), Raw: json.RawMessage(`{"name":"p"}`)}}
		},
	}
	for name, f := range differ {
		if got := mutate(f); got == base.Digests.Contract {
			t.Errorf("%s did not change the contract digest", name)
		}
	}
}

func TestDecodeSnapshotRejects(t *testing.T) {
	good, err := fixtureSnapshot(t, "2025.11.25").Encode()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		in   string
		want error
	}{
		"future schema":  {strings.Replace(string(good), SchemaVersion, "mcpdrift.snapshot/v9", 1), ErrUnknownSchema},
		"no schema":      {`{"tools":[]}`, ErrUnknownSchema},
		"not json":       {`{"schema_version":`, canon.ErrSyntax},
		"duplicate name": {strings.Replace(string(good), `"name": "echo",`, `"name": "echo", "name": "echo",`, 1), canon.ErrDuplicateName},
	}
	for name, c := range cases {
		_, err := DecodeSnapshot([]byte(c.in))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	// A definition edited after the digest was taken is caught.
	tampered := strings.Replace(string(good), `"Echoes back the input"`, `"Echoes back the input, and more"`, 1)
	if tampered == string(good) {
		t.Fatal("tamper target not found")
	}
	if _, err := DecodeSnapshot([]byte(tampered)); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("tampered definition: %v", err)
	}
	if _, err := DecodeSnapshot([]byte(strings.Replace(string(good), `"contract": "`, `"contract": "0`, 1))); err == nil {
		t.Error("tampered contract digest accepted")
	}
}

func TestReadDocumentFormats(t *testing.T) {
	def := `{"name":"weather","description":"w"}`
	want, _ := digest([]byte(def))
	cases := map[string]string{
		FormatListResult:  `{"tools":[` + def + `]}`,
		FormatPages:       `[{"tools":[` + def + `]},{"tools":[]}]`,
		FormatDefinitions: `[` + def + `]`,
		FormatRPCResponse: `{"jsonrpc":"2.0","id":1,"result":{"tools":[` + def + `]}}`,
	}
	for format, in := range cases {
		doc, err := ReadDocument(ReadOptions{}, []byte(in))
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if doc.Format != format || !doc.Present[KindTool] || len(doc.Snapshot.Tools) != 1 || doc.Snapshot.Tools[0].Digest != want {
			t.Errorf("%s: %+v", format, doc)
		}
	}
	doc, err := ReadDocument(ReadOptions{}, []byte(`[{"name":"forecast","arguments":[]}]`))
	if err != nil || !doc.Present[KindPrompt] || len(doc.Snapshot.Prompts) != 1 {
		t.Errorf("prompt array guessed wrong: %+v %v", doc, err)
	}
	doc, err = ReadDocument(ReadOptions{}, []byte(`[{"uri":"file:///x","name":"x"}]`))
	if err != nil || !doc.Present[KindResource] {
		t.Errorf("resource array guessed wrong: %v", err)
	}
	for _, bad := range []string{`42`, `{"hello":1}`, `"x"`} {
		if _, err := ReadDocument(ReadOptions{}, []byte(bad)); !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
