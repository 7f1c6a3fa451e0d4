package contract

import (
	"encoding/json"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
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

// surrogateAt returns the unpaired surrogate whose generalized UTF-8 form
// starts s, if one does.
func surrogateAt(s string) (uint16, bool) {
	if len(s) < 3 || s[0] != 0xed || s[1] < 0xa0 || s[1] > 0xbf || s[2] < 0x80 || s[2] > 0xbf {
		return 0, false
	}
	return 0xd000 | uint16(s[1]&0x3f)<<6 | uint16(s[2]&0x3f), true
}

// keyUnits returns a key as UTF-16 code units, unpaired surrogates included;
// any other byte that is not UTF-8 reads as U+FFFD.
func keyUnits(key string) []uint16 {
	units := make([]uint16, 0, len(key))
	for i := 0; i < len(key); {
		if u, ok := surrogateAt(key[i:]); ok {
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
	return string(utf16.Decode(keyUnits(key)))
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
	return appendUnits(dst, keyUnits(key))
}

// MarshalJSON writes {"key", "digest", "definition"} with the key exact (an
// unpaired surrogate as its escape, where encoding/json would write U+FFFD).
func (d Definition) MarshalJSON() ([]byte, error) {
	b := append([]byte(`{"key":`), AppendJSONKey(nil, d.Key)...)
	b = append(b, `,"digest":`...)
	b = AppendJSONKey(b, d.Digest)
	b = append(b, `,"definition":`...)
	if len(d.Raw) == 0 {
		return append(b, "null}"...), nil
	}
	b = append(b, d.Raw...)
	return append(b, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON writes, keeping the key exact.
func (d *Definition) UnmarshalJSON(b []byte) error {
	var in struct {
		Key    json.RawMessage `json:"key"`
		Digest string          `json:"digest"`
		Raw    json.RawMessage `json:"definition"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	key, err := optionalKey(in.Key, "definition key")
	*d = Definition{Key: key, Digest: in.Digest, Raw: in.Raw}
	return err
}

// optionalKey decodes a JSON string member read as raw JSON into a key;
// absent or null is "".
func optionalKey(raw json.RawMessage, what string) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	key, ok := UnquoteKey(raw)
	if !ok {
		return "", fmt.Errorf("%w: %s is not a string", ErrSyntax, what)
	}
	return key, nil
}

// storedKeyMatches reports whether a key stored in a snapshot names the
// definition whose key is key. Snapshots written before keys kept unpaired
// surrogates stored them as U+FFFD; those still read.
func storedKeyMatches(stored, key string) bool {
	return stored == key || !utf8.ValidString(key) && stored == KeyUTF8(key)
}
