package canon

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/contract/internal/safetext"
)

// JSON can spell strings that are not Unicode text: "a\ud800" holds an
// unpaired surrogate. Decoded into a Go string the usual way it becomes
// "a\uFFFD", and so does "a\udfff", which would make two different names one
// key. A key therefore keeps each unpaired surrogate as its three-byte
// generalized UTF-8 form (WTF-8: U+D800 is ED A0 80). Well-formed UTF-8 never
// contains those bytes, and definitions with invalid UTF-8 have no digest, so
// keys stay as distinct as the names the server sent, and every other key is
// the plain string it always was.
//
// Where a key leaves as text that must be UTF-8 (the set digest's lines,
// OpenTelemetry attributes), KeyUTF8 writes each unpaired surrogate as U+FFFD,
// as the recipe's UTF-8 encoding (WHATWG) does. SanitizeText shows it as
// \u{D800}; JSON output writes it back as the escape it came from.

// keyFromUnits is the key of a string given as UTF-16 code units.
func keyFromUnits(units []uint16) string {
	b := make([]byte, 0, len(units))
	for i := 0; i < len(units); i++ {
		u := rune(units[i])
		if utf16.IsSurrogate(u) {
			if u < 0xdc00 && i+1 < len(units) && units[i+1] >= 0xdc00 && units[i+1] <= 0xdfff {
				b = utf8.AppendRune(b, utf16.DecodeRune(u, rune(units[i+1])))
				i++
				continue
			}
			b = append(b, 0xe0|byte(u>>12), 0x80|byte(u>>6)&0x3f, 0x80|byte(u)&0x3f)
			continue
		}
		b = utf8.AppendRune(b, u)
	}
	return string(b)
}

// KeyUnits returns a key as UTF-16 code units, unpaired surrogates included;
// any other byte that is not UTF-8 reads as U+FFFD.
func KeyUnits(key string) []uint16 {
	units := make([]uint16, 0, len(key))
	for i := 0; i < len(key); {
		if u, ok := safetext.SurrogateAt(key[i:]); ok {
			units = append(units, u)
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(key[i:])
		units = utf16.AppendRune(units, r)
		i += size
	}
	return units
}

// KeyUTF8 returns key as well-formed UTF-8: each unpaired surrogate becomes
// U+FFFD, as the digest recipe's UTF-8 encoding writes it. Use it where a key
// must be UTF-8 text (telemetry attributes); two keys may share it.
func KeyUTF8(key string) string {
	if utf8.ValidString(key) {
		return key
	}
	return string(utf16.Decode(KeyUnits(key)))
}

// UnquoteKey decodes a JSON string token (with its quotes) into a key,
// keeping unpaired surrogate escapes apart. It reports false for anything
// that is not one well-formed JSON string.
func UnquoteKey(quoted []byte) (string, bool) {
	if len(quoted) < 2 || quoted[0] != '"' {
		return "", false
	}
	if inner := quoted[1 : len(quoted)-1]; quoted[len(quoted)-1] == '"' && plainJSONString(inner) {
		return string(inner), true
	}
	p := &surrogateParser{src: quoted}
	units, err := p.stringUnits()
	if err != nil || p.pos != len(quoted) {
		return "", false
	}
	return keyFromUnits(units), true
}

// plainJSONString reports whether b is the content of a JSON string that
// needs no decoding: UTF-8 without quotes, backslashes or control characters.
func plainJSONString(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.Valid(b)
}

// AppendJSONKey appends a key as a JSON string, unpaired surrogates as the
// lowercase \u escapes they were read from (encoding/json would write U+FFFD).
func AppendJSONKey(dst []byte, key string) []byte {
	return appendUnits(dst, KeyUnits(key))
}

// CompareUTF16 compares two strings by their UTF-16 code units, the order
// RFC 8785 and the set hash use. It differs from byte order only where a
// character above U+FFFF meets one in U+E000..U+FFFF.
func CompareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := firstUnit(ra), firstUnit(rb)
			if ua != ub {
				if ua < ub {
					return -1
				}
				return 1
			}
			if ra < rb { // same high surrogate: low surrogates order as code points
				return -1
			}
			return 1
		}
		a, b = a[na:], b[nb:]
	}
	return strings.Compare(a, b)
}

func firstUnit(r rune) rune {
	if r >= 0x10000 {
		return 0xd800 + (r-0x10000)>>10
	}
	return r
}
