package staleness

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FuzzDecode: decode reads what the validator's own reader reads, to the
// same value, and refuses what it refuses.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1}`, ` {"a" : [1, 2.5e3, -0, "x\u00e9\n", true, false, null, {}] } `, `[]`, `[ ]`, `[1,]`, `{"a":1,}`,
		`{"a":1}x`, `[1] ]`, `"s"`, `12`, `1.`, `01`, `-`, `1e`, `1e+5`, `tru`, `nul`, `{"a":1,"a":2}`, `{"a"}`, `{a:1}`,
		`[[[[[[1]]]]]]`, `{"k":"\ud800"}`, `123456789012345678901234567890`, `{"":{"":[]}}`, ``, ` `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := decode(b, 0)
		want, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			if ok {
				t.Fatalf("decode took %q, which the validator's reader refuses (%v)", b, err)
			}
			return
		}
		if !ok {
			if !deep(b) {
				t.Fatalf("decode refused %q", b)
			}
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decode %#v, validator %#v", b, got, want)
		}
	})
}

func deep(b []byte) bool {
	d, max := 0, 0
	for _, c := range b {
		switch c {
		case '{', '[':
			d++
			max = maxInt(max, d)
		case '}', ']':
			d--
		}
	}
	return max > maxArgumentDepth
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}
