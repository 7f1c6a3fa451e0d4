package witness

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// decodeCases are plain text, text that falls back to the library, and
// malformed text.
var decodeCases = []string{
	`{}`, `[]`, ` {"a" : [1, -2.5e+3, 0, true, false, null, "x y"], "b":{}} `, `{"a":1,"a":2}`,
	`"s"`, `12`, `-0.0E-0`, `[[[[]]]]`, `{"$defs":{"L":{"type":"object"}},"$ref":"#/$defs/L"}`,
	`{"a":"\u00e9"}`, `{"a":"é"}`, `{"a":"\n"}`, "{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}", `{"a\"b":1}`,
	`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":1e}`, `{"a":+1}`, `{"a":tru}`, `{"a":1,}`, `[1,]`, `[1 2]`,
	`{"a" 1}`, `{a:1}`, `{"a":1}}`, `{"a":1} x`, `{"a":[}`, ``, ` `, `nul`, `{"a":NaN}`, `{"a":Infinity}`,
}

func sameAsLibrary(t *testing.T, text string) {
	t.Helper()
	got, gotErr := decodeJSON([]byte(text))
	want, wantErr := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(text)))
	if (gotErr != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) {
		t.Errorf("%q: got %#v, %v; the library %#v, %v", text, got, gotErr, want, wantErr)
	}
}

// TestDecodeJSON: decodeJSON gives what jsonschema.UnmarshalJSON gives,
// value or error, on plain text and on everything else.
func TestDecodeJSON(t *testing.T) {
	for _, c := range decodeCases {
		sameAsLibrary(t, c)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, c := range decodeCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<12 {
			return
		}
		sameAsLibrary(t, text)
	})
}
