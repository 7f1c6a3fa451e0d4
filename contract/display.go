package contract

import "github.com/mcpdrift/mcpdrift/contract/internal/safetext"

// Text from servers is attacker-controlled: a terminal escape or a bidi
// override in a tool description can hide or reorder the very lines a reviewer
// reads. Every human-facing format passes server text through SanitizeText.
// The implementation is internal/safetext, which contract/canon shares.

// SanitizeText returns s with control, format (bidi, zero-width, tag),
// line/paragraph-separator, private-use and unassigned-looking characters,
// unpaired surrogates kept in a key (canon's key.go), and bytes that are not
// UTF-8, written as visible escapes (\n, \t, \u{202E}, \u{D800}, \x{FF}).
// Printable text, including non-ASCII letters and emoji, is kept.
func SanitizeText(s string) string { return safetext.Sanitize(s) }

// QuoteForDisplay is SanitizeText inside double quotes, with quotes escaped.
func QuoteForDisplay(s string) string { return safetext.Quote(s) }

// HasInvisible reports whether s contains characters SanitizeText would escape
// other than ordinary line breaks and tabs.
func HasInvisible(s string) bool { return safetext.HasInvisible(s) }

// SafeText escapes control, bidi and invisible characters (and bytes that
// are not UTF-8) but, unlike SanitizeText, leaves backslashes alone: it is
// for text that was built from already sanitized parts, or JSON text, whose
// backslashes are escapes of their own.
func SafeText(s string) string { return safetext.Safe(s) }
