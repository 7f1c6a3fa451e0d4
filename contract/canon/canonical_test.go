package canon

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// testLimits are contract's defaults.
var testLimits = Limits{MaxDocumentBytes: 16 << 20, MaxDepth: 128, MaxStringBytes: 1 << 20}

func canonicalize(raw []byte) ([]byte, error) { return testLimits.Canonicalize(nil, raw) }
func digest(raw []byte) (string, error)       { return testLimits.Digest(raw) }

func TestEquivalentSpellingsHashEqual(t *testing.T) {
	groups := [][]string{
		{ // whitespace and member order
			`{"name":"a","inputSchema":{"type":"object","required":["x"]}}`,
			"{ \"inputSchema\" : {\n\t\"required\": [ \"x\" ], \"type\":\"object\" } ,\r\n \"name\" : \"a\" }",
		},
		{ // number spellings
			`{"name":"n","x":[1,1000,0,4.5,100]}`,
			`{"name":"n","x":[1.0,1E3,-0,4.50,1e2]}`,
			`{"name":"n","x":[1.000,10E2,0.0,45e-1,100.0]}`,
			`{"name":"n","x":[1e0,1000.0,-0.0,0.45e1,1E+2]}`,
		},
		{ // \u escapes and literal characters
			`{"name":"é","d":"a/b € 😀 \u001b"}`,
			`{"name":"\u00e9","d":"a\/b \u20AC \ud83d\ude00 \u001B"}`,
			`{"name":"\u00E9","d":"\u0061\u002fb \u20ac \uD83D\uDE00 \u001b"}`,
		},
	}
	for _, g := range groups {
		want, err := digest([]byte(g[0]))
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range g[1:] {
			got, err := digest([]byte(in))
			if err != nil {
				t.Fatalf("%s: %v", in, err)
			}
			if got != want {
				t.Errorf("%s hashed %s, want %s (as %s)", in, got, want, g[0])
			}
		}
	}
}

func TestCanonicalizeRejects(t *testing.T) {
	cases := []struct {
		in   string
		want error
	}{
		{`{"a":1,"a":2}`, ErrDuplicateName},
		{`{"x":{"a":1,"b":{"c":1,"c":1}}}`, ErrDuplicateName},
		{`{"a":"\ud800","a":"\ud800"}`, ErrDuplicateName}, // surrogate path
		{"{\"a\":\"\xff\"}", ErrInvalidUTF8},
		{"{\"a\":\"\xff\\udead\"}", ErrInvalidUTF8}, // surrogate path
		{`{"a":1} x`, ErrSyntax},
		{`{"a":"\udead"} x`, ErrSyntax},
		{`{"a":1`, ErrSyntax},
		{`{"a":01}`, ErrSyntax},
		{`{"a":1e400}`, ErrNumberRange},
		{`{"a":"\udead","b":1e400}`, ErrNumberRange},
		{`[` + strings.Repeat("9", 400) + `]`, ErrNumberRange},
		{`[1e-400]`, nil},
		{``, ErrSyntax},
		{`{"a":tru}`, ErrSyntax},
		{strings.Repeat("[", testLimits.MaxDepth+1) + strings.Repeat("]", testLimits.MaxDepth+1), ErrTooDeep},
	}
	for _, c := range cases {
		_, err := canonicalize([]byte(c.in))
		if !errors.Is(err, c.want) {
			t.Errorf("%q: error %v, want %v", c.in, err, c.want)
		}
	}
}

func TestLimits(t *testing.T) {
	l := Limits{MaxDocumentBytes: 100, MaxDepth: 3, MaxStringBytes: 5}
	if _, err := l.Canonicalize(nil, []byte(`"`+strings.Repeat("a", 200)+`"`)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("size: %v", err)
	}
	if _, err := l.Canonicalize(nil, []byte(`[[[[1]]]]`)); !errors.Is(err, ErrTooDeep) {
		t.Errorf("depth: %v", err)
	}
	if _, err := l.Canonicalize(nil, []byte(`[[["ok"]]]`)); err != nil {
		t.Errorf("at depth limit: %v", err)
	}
	if _, err := l.Canonicalize(nil, []byte(`{"abcdef":1}`)); !errors.Is(err, ErrStringTooLong) {
		t.Errorf("string: %v", err)
	}
	// An escaped quote does not end the string early.
	if _, err := l.Canonicalize(nil, []byte(`["\"\"\"\"\"\""]`)); !errors.Is(err, ErrStringTooLong) {
		t.Errorf("escaped string: %v", err)
	}
	// Brackets inside strings do not count as depth.
	if _, err := l.Canonicalize(nil, []byte(`["[[[[["]`)); err != nil {
		t.Errorf("brackets in string: %v", err)
	}
	if _, err := (Limits{MaxDocumentBytes: testLimits.MaxDocumentBytes, MaxDepth: 3, MaxStringBytes: testLimits.MaxStringBytes}).Canonicalize(nil, []byte(`["[[[[[[[[[[[["]`)); err != nil {
		t.Errorf("brackets in string counted as depth: %v", err)
	}
}

func TestSurrogatePath(t *testing.T) {
	cases := map[string]string{
		`{"b":"x\uDEADy","a":1}`:             `{"a":1,"b":"x\udeady"}`,
		`"\ud83d"`:                           `"\ud83d"`,
		`"\ude00\ud83d"`:                     `"\ude00\ud83d"`, // reversed pair stays two escapes
		`"\ud83d\ude00"`:                     `"😀"`,
		`{"\ud800":1,"\uffff":2,"\ue000":3}`: "{\"\\ud800\":1,\"\ue000\":3,\"\uffff\":2}",
	}
	for in, want := range cases {
		got, err := canonicalize([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if string(got) != want {
			t.Errorf("%s\n got %s\nwant %s", in, got, want)
		}
	}
}

func TestCompareUTF16(t *testing.T) {
	// U+1F600 is D83D DE00 in UTF-16: before U+FB33, although after it in UTF-8.
	if CompareUTF16("\U0001F600", "\uFB33") >= 0 {
		t.Error("emoji should sort before U+FB33")
	}
	if CompareUTF16("a", "ab") >= 0 || CompareUTF16("b", "a") <= 0 || CompareUTF16("x", "x") != 0 {
		t.Error("basic order")
	}
	if CompareUTF16("\U0001F600", "\U0001F601") >= 0 {
		t.Error("same high surrogate")
	}
}

func TestES6Numbers(t *testing.T) {
	cases := map[float64]string{
		1e21: "1e+21", 1e20: "100000000000000000000", 123e-7: "0.0000123", 1e-7: "1e-7",
		0.1: "0.1", -5e-324: "-5e-324", 1.7976931348623157e308: "1.7976931348623157e+308",
		333333333.33333329: "333333333.3333333", 12345678901234567890: "12345678901234567000",
	}
	for f, want := range cases {
		if got := string(appendES6Number(nil, f)); got != want {
			t.Errorf("%v: got %s want %s", f, got, want)
		}
	}
}

// surrogateEscapes reports a \u escape of a surrogate in a string of b.
func surrogateEscapes(b []byte) bool {
	st, _ := jsonwire.Limits{}.Scan(b)
	return st.SurrogateEscapes
}

// FuzzCanonicalize: canonicalization never panics; its output is a fixed
// point and parses to the same value as the input; and wherever jsontext
// accepts the input, the surrogate-aware canonicalizer agrees with it byte for byte.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","inputSchema":{"type":"object"}}`, `[1.0,1E3,-0,4.50,"\u00e9"]`,
		`{"b":"x\uDEADy","a":1}`, `{"a":{"a":{"a":[]}}}`, `"\ud83d\ude00"`, `{"a":1,"a":2}`,
		`[333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001]`, `null`, `"\u001b\/"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := canonicalize(in)
		slow, slowErr := canonicalizeSurrogates(nil, in, testLimits.MaxDepth)
		if err != nil {
			if slowErr == nil && !surrogateEscapes(in) && !errors.Is(err, ErrTooDeep) && !errors.Is(err, ErrStringTooLong) {
				t.Fatalf("jsontext path rejected %q (%v) but the surrogate path accepted it", in, err)
			}
			return
		}
		if slowErr != nil {
			t.Fatalf("surrogate path rejected %q: %v (fast path gave %s)", in, slowErr, c)
		}
		if !bytes.Equal(c, slow) {
			t.Fatalf("paths disagree on %q:\n%s\n%s", in, c, slow)
		}
		again, err := canonicalize(c)
		if err != nil || !bytes.Equal(again, c) {
			t.Fatalf("not a fixed point: %s -> %s (%v)", c, again, err)
		}
		if surrogateEscapes(in) {
			return // lone surrogates have no Go value to compare
		}
		var a, b any
		if json.Unmarshal(in, &a) != nil || json.Unmarshal(c, &b) != nil {
			t.Fatalf("canonical output does not parse: %s", c)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("value changed: %v -> %v", a, b)
		}
		if !jsontext.Value(c).IsValid() {
			t.Fatalf("canonical output is not valid strict JSON: %s", c)
		}
	})
}
