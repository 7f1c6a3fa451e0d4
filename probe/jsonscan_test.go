package probe

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestTopMembers(t *testing.T) {
	m, err := topMembers([]byte(` {"jsonrpc":"2.0", "id" : 7,"result":{"tools":[{"name":"a\"}b","x":[1,{"y":"]"}]}]},"k\u0065y":null} `))
	if err != nil {
		t.Fatal(err)
	}
	if string(m["id"]) != "7" || string(m["jsonrpc"]) != `"2.0"` || string(m["key"]) != "null" ||
		string(m["result"]) != `{"tools":[{"name":"a\"}b","x":[1,{"y":"]"}]}]}` {
		t.Fatalf("members %q", m)
	}
	for _, bad := range []string{``, `[]`, `{"a":1,"a":2}`, `{"a":1}x`, `{"a" 1}`, `{"a":}`, `{"a":"x}`, `{"a":{"b":1}`, `{"a":1,}`} {
		if _, err := topMembers([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// topMembers agrees with encoding/json on every valid object without
// repeated names, and never panics on anything.
func FuzzTopMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":"\"","b":[{"c":"}"}]}`, `{"a":1,"a":2}`, `{"a":tru`, `{"\u0061":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := topMembers(data)
		var want map[string]json.RawMessage
		if !utf8.Valid(data) || json.Unmarshal(data, &want) != nil || want == nil || !json.Valid(data) {
			return
		}
		if err != nil {
			if bytes.Count(data, []byte(`"`)) > 0 { // repeated names are refused on purpose
				return
			}
			t.Fatalf("valid object %q refused: %v", data, err)
		}
		for k, v := range want {
			var a, b bytes.Buffer
			_ = json.Compact(&a, v)
			_ = json.Compact(&b, got[k])
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatalf("%q: member %q is %q, encoding/json says %q", data, k, got[k], v)
			}
		}
	})
}
