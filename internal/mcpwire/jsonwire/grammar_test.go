package jsonwire

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestNumber: Number reads exactly RFC 8259's numbers, and stops where the
// grammar breaks.
func TestNumber(t *testing.T) {
	for in, want := range map[string]int{
		"0": 1, "-0": 2, "12": 2, "1.5": 3, "-1.5e+10": 8, "1E3": 3, "0.0e-0": 6,
		"1,": 1, "3]": 1, "2.5}": 3,
		"": -1, "-": -1, "01": 1, "1.": -1, ".5": -1, "1e": -1, "1e+": -1, "+1": -1, "--1": -1, "1.e3": -1,
	} {
		end, ok := Number([]byte(in), 0)
		if want < 0 {
			if ok {
				t.Errorf("Number(%q) = %d, ok; want not a number", in, end)
			}
			continue
		}
		if !ok || end != want {
			t.Errorf("Number(%q) = %d, %v; want %d, true", in, end, ok, want)
		}
		// Where it reads a whole text, encoding/json agrees.
		if end == len(in) && !json.Valid([]byte(in)) {
			t.Errorf("Number(%q) read all of what encoding/json refuses", in)
		}
	}
}

func TestLiteralAndSep(t *testing.T) {
	if end, lit, ok := Literal([]byte("[false]"), 1); !ok || lit != "false" || end != 6 {
		t.Errorf("Literal = %d %q %v", end, lit, ok)
	}
	if _, _, ok := Literal([]byte("tru"), 0); ok {
		t.Error("Literal read a cut-off true")
	}
	for in, want := range map[string][3]int{ // end, more, ok
		" , 1": {2, 1, 1}, "\n]": {2, 0, 1}, " }": {1, 0, 0}, "  ": {2, 0, 0}, "x": {0, 0, 0},
	} {
		end, more, ok := Sep([]byte(in), 0, ']')
		if got := [3]int{end, b2i(more), b2i(ok)}; got != want {
			t.Errorf("Sep(%q) = %v, want %v", in, got, want)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestScanStrings: Scan bounds each string as written, reports where, and
// notices surrogate escapes only where they are escapes in a string.
func TestScanStrings(t *testing.T) {
	l := Limits{MaxStringBytes: 5}
	if _, err := l.Scan([]byte(`["12345","\"234"]`)); err != nil {
		t.Errorf("strings at the limit: %v", err)
	}
	_, err := l.Scan([]byte(`["ok", "123456"]`))
	if err == nil || !errors.Is(err, ErrStringTooLong) || err.Offset != 7 || err.Size != 6 || !strings.Contains(err.Error(), "6 bytes, limit 5") {
		t.Fatalf("a long string: %+v, want ErrStringTooLong of 6 bytes at 7", err)
	}
	for in, want := range map[string]bool{
		`"\ud800"`: true, `"\uDFFF"`: true, `"\\ud800"`: false, `"\u00e9"`: false, `"a\"\udc00`: true,
		`{"\\":"\\\ud83d\ude00"}`: true, `"\uD7FF\uE000"`: false,
	} {
		st, err := Limits{}.Scan([]byte(in))
		if err != nil || st.SurrogateEscapes != want {
			t.Errorf("Scan(%s) = %+v, %v; want SurrogateEscapes %v", in, st, err, want)
		}
	}
	for in, want := range map[string]bool{
		strings.Repeat("9", HugeNumberDigits): false, strings.Repeat("9", HugeNumberDigits+1): true,
		"1e299": false, "1.5E+300": true, "1e-300": true, `"1e999"`: false, "true": false,
	} {
		if st, _ := (Limits{}).Scan([]byte(in)); st.HugeNumbers != want {
			t.Errorf("Scan(%.20s…).HugeNumbers = %v, want %v", in, st.HugeNumbers, want)
		}
	}
}

func TestStringEnd(t *testing.T) {
	for in, want := range map[string]int{`"a"x`: 3, `"a\"b"`: 6, `"a\\"b`: 5, `"abc`: -1} {
		end, ok := StringEnd([]byte(in), 0)
		if want < 0 && (ok || end != len(in)) || want >= 0 && (!ok || end != want) {
			t.Errorf("StringEnd(%s) = %d, %v; want %d", in, end, ok, want)
		}
	}
}
