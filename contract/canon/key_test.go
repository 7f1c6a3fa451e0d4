package canon

import (
	"slices"
	"testing"
	"unicode/utf16"
)

// FuzzKeyRoundTrip: any UTF-16 string, surrogates paired or not, survives
// key → units, key → JSON → key, and KeyUTF8 is its WHATWG UTF-8 form.
func FuzzKeyRoundTrip(f *testing.F) {
	f.Add([]byte("a\x00\xd8\x00"))            // a, U+D800
	f.Add([]byte("\x3d\xd8\x00\xde\xff\xdf")) // a pair, then U+DFFF
	f.Add([]byte("\"\x00\\\x00\x1f\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		units := make([]uint16, len(b)/2)
		for i := range units {
			units[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
		}
		key := keyFromUnits(units)
		if got := KeyUnits(key); !slices.Equal(got, units) {
			t.Fatalf("units %x → key %q → %x", units, key, got)
		}
		quoted := AppendJSONKey(nil, key)
		if back, ok := UnquoteKey(quoted); !ok || back != key {
			t.Fatalf("key %q → %s → %q, %v", key, quoted, back, ok)
		}
		if got, want := KeyUTF8(key), string(utf16.Decode(units)); got != want {
			t.Fatalf("KeyUTF8(%q) = %q, want %q", key, got, want)
		}
	})
}
