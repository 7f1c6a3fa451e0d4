package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpdrift/mcpdrift/contract/canon"
)

func TestParsePage(t *testing.T) {
	page := []byte(` { "nextCursor" : "c\u0032", "tools" : [ {"description":"b","name":"z\u0061"} , {"name":"a","inputSchema":{"type":"object"}} ],
		"_meta": {"x": [1, {"tools": []}]}, "prompts": [{"name":"p","arguments":[{"name":"x","required":true}]}] } `)
	p, err := DefaultLimits().ParsePage(page)
	if err != nil {
		t.Fatal(err)
	}
	if p.NextCursor == nil || *p.NextCursor != "c2" {
		t.Errorf("cursor %v", p.NextCursor)
	}
	tools := p.Definitions[KindTool]
	if len(tools) != 2 || tools[0].Key != "za" || tools[1].Key != "a" {
		t.Fatalf("tools %+v", tools)
	}
	if string(tools[0].Raw) != `{"description":"b","name":"z\u0061"}` {
		t.Errorf("raw not kept as received: %s", tools[0].Raw)
	}
	for _, d := range append(tools, p.Definitions[KindPrompt]...) {
		want, err := digest(d.Raw)
		if err != nil || want != d.Digest {
			t.Errorf("%s: digest %s, want %s (%v)", d.Key, d.Digest, want, err)
		}
	}
	if len(p.Definitions[KindPrompt]) != 1 {
		t.Errorf("prompts %+v", p.Definitions[KindPrompt])
	}
}

func TestParsePageErrorsNameTheDefinition(t *testing.T) {
	cases := []struct {
		page string
		want error
		key  string
		idx  int
	}{
		{`{"tools":[{"name":"ok"},{"name":"bad","inputSchema":{"type":"object","type":"string"}}]}`, canon.ErrDuplicateName, "bad", 1},
		{`{"tools":[{"name":"ok"},{"description":"no name"}]}`, ErrNoName, "", 1},
		{`{"tools":[{"name":7}]}`, ErrNoName, "", 0},
		{"{\"tools\":[{\"name\":\"u\",\"description\":\"\xff\"}]}", canon.ErrInvalidUTF8, "u", 0},
		{`{"tools":[{"name":"s","d":"\udead","d":1}]}`, canon.ErrDuplicateName, "s", 0},
		{`{"tools":["not an object"]}`, ErrNotAnObject, "", 0},
	}
	for _, c := range cases {
		_, err := DefaultLimits().ParsePage([]byte(c.page))
		var de *DefinitionError
		if !errors.As(err, &de) || !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want DefinitionError(%v)", c.page, err, c.want)
			continue
		}
		if de.Key != c.key || de.Index != c.idx {
			t.Errorf("%s: blamed %d %q, want %d %q", c.page, de.Index, de.Key, c.idx, c.key)
		}
	}
	for _, page := range []string{`{"tools":[],"tools":[]}`, `{"tools":[]} {}`, `[]`, `{"tools":{}}`, `{"tools":[{"name":"a"},]}`} {
		if _, err := DefaultLimits().ParsePage([]byte(page)); err == nil {
			t.Errorf("%s: accepted", page)
		}
	}
}

func TestFixturesHash(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "testdata", "fixtures", "server-everything", "*"))
	if err != nil || len(dirs) < 2 {
		t.Fatalf("fixtures: %v %v", dirs, err)
	}
	for _, dir := range dirs {
		raw, err := os.ReadFile(filepath.Join(dir, "tools-list.json"))
		if err != nil {
			t.Fatal(err)
		}
		l, err := DefaultLimits().HashListing(KindTool, raw)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if len(l) < 5 {
			t.Errorf("%s: only %d tools", dir, len(l))
		}
		// Independent split: encoding/json into raw messages, one Digest each.
		var res struct{ Tools []json.RawMessage }
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		l2, err := DefaultLimits().HashDefinitions(KindTool, res.Tools)
		if err != nil || l.SetDigest() != l2.SetDigest() {
			t.Errorf("%s: page path and per-definition path disagree (%v)", dir, err)
		}
	}
}

// FuzzParsePage: the single-parse page reader never panics and agrees with an
// independent split (jsontext tokens, then one Digest per definition).
func FuzzParsePage(f *testing.F) {
	for _, s := range []string{
		`{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}},{"name":"b"}],"nextCursor":"x"}`,
		`{"prompts":[{"name":"p","arguments":[]}],"tools":[]}`,
		`{"resources":[{"uri":"file:///a","name":"a"}],"resourceTemplates":[{"uriTemplate":"x/{id}","name":"t"}]}`,
		`{"tools":[{"name":"\"q\\","d":"\\\"}"}, {"name":"x\udead"}]}`,
		` { "tools" : [ { "name" : "w" , "x" : [ 1 , 2 ] } ] } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := DefaultLimits().ParsePage(in)
		if err != nil {
			return
		}
		dec := jsontext.NewDecoder(bytes.NewBuffer(in), jsontext.AllowInvalidUTF8(true))
		if _, err := dec.ReadToken(); err != nil {
			t.Fatalf("accepted %q that jsontext cannot start: %v", in, err)
		}
		for dec.PeekKind() == '"' {
			name, _ := dec.ReadToken()
			kind, ok := listMembers[name.String()]
			v, err := dec.ReadValue()
			if err != nil {
				t.Fatalf("accepted %q: %v", in, err)
			}
			if !ok {
				continue
			}
			var raws []json.RawMessage
			if err := json.Unmarshal(v, &raws); err != nil {
				t.Fatalf("%q: list member is not an array: %v", in, err)
			}
			got := p.Definitions[kind]
			if len(got) != len(raws) {
				t.Fatalf("%q: %d %ss, independent split found %d", in, len(got), kind, len(raws))
			}
			for i, raw := range raws {
				d, err := digest(raw)
				if err != nil || d != got[i].Digest || !bytes.Equal(bytes.TrimSpace(raw), got[i].Raw) {
					t.Fatalf("%q: definition %d: %s %q vs %s %q (%v)", in, i, got[i].Digest, got[i].Raw, d, raw, err)
				}
			}
		}
	})
}
