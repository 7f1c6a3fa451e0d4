// Package safetext writes attacker-controlled server text so that it shows
// as what it is: the implementation behind contract.SanitizeText and its
// kin, kept below contract/canon so canon's error messages can quote a JSON
// pointer the same way.
package safetext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text from servers is attacker-controlled: a terminal escape or a bidi
// override in a tool description can hide or reorder the very lines a reviewer
// reads. Every human-facing format passes server text through SanitizeText.

// SanitizeText returns s with control, format (bidi, zero-width, tag),
// line/paragraph-separator, private-use and unassigned-looking characters,
// unpaired surrogates kept in a key (key.go), and bytes that are not UTF-8,
// written as visible escapes (\n, \t, \u{202E}, \u{D800}, \x{FF}). Printable text, including non-ASCII letters and emoji, is kept.
func Sanitize(s string) string {
	if isPlainText(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if u, ok := SurrogateAt(s[i:]); ok { // an unpaired surrogate in a key
			b.WriteString(`\u{`)
			b.WriteString(strings.ToUpper(strconv.FormatUint(uint64(u), 16)))
			b.WriteByte('}')
			i += 3
			continue
		}
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\x{`)
			b.WriteString(strings.ToUpper(strconv.FormatUint(uint64(s[i]), 16)))
			b.WriteByte('}')
			i++
			continue
		}
		i += size
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\\':
			b.WriteString(`\\`)
		case NeedsEscape(r):
			b.WriteString(`\u{`)
			b.WriteString(strings.ToUpper(strconv.FormatInt(int64(r), 16)))
			b.WriteByte('}')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// QuoteForDisplay is SanitizeText inside double quotes, with quotes escaped.
func Quote(s string) string {
	return `"` + strings.ReplaceAll(Sanitize(s), `"`, `\"`) + `"`
}

func isPlainText(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// NeedsEscape reports characters that render invisibly, move the cursor,
// reorder text or could not be told apart from others on screen.
func NeedsEscape(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f: // C1 controls
		return true
	case r == 0x2028 || r == 0x2029: // line / paragraph separator
		return true
	case r == 0x00ad || r == 0x034f || r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0: // invisible fillers
		return true
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef: // variation selectors
		return true
	case r == utf8.RuneError:
		return true
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Cs, r) || !unicode.IsPrint(r) && !unicode.IsSpace(r)
}

// HasInvisible reports whether s contains characters SanitizeText would escape
// other than ordinary line breaks and tabs.
func HasInvisible(s string) bool {
	for _, r := range s {
		if r != '\n' && r != '\t' && r != '\r' && NeedsEscape(r) {
			return true
		}
	}
	return false
}

// SafeText escapes control, bidi and invisible characters (and bytes that
// are not UTF-8) but, unlike SanitizeText, leaves backslashes alone: it is
// for text that was built from already sanitized parts, or JSON text, whose
// backslashes are escapes of their own.
func Safe(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || NeedsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x{%X}`, s[i])
		case NeedsEscape(r):
			fmt.Fprintf(&b, `\u{%X}`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// SurrogateAt returns the unpaired surrogate whose generalized UTF-8 form
// (WTF-8, as a key keeps it) starts s, if one does.
func SurrogateAt(s string) (uint16, bool) {
	if len(s) < 3 || s[0] != 0xed || s[1] < 0xa0 || s[1] > 0xbf || s[2] < 0x80 || s[2] > 0xbf {
		return 0, false
	}
	return 0xd000 | uint16(s[1]&0x3f)<<6 | uint16(s[2]&0x3f), true
}
