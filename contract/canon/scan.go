package canon

import (
	"bytes"
	"fmt"
)

// Limits bound one JSON value: its size, its nesting and each string as
// written. Every field must be positive (contract.Limits fills defaults).
type Limits struct {
	MaxDocumentBytes, MaxDepth, MaxStringBytes int
}

// Stats is what Scan learned about a document, for AppendScanned.
type Stats struct {
	surrogateEscapes bool // a \uD800-\uDFFF escape occurs: take the surrogate-aware path
	hugeNumber       bool // a number may overflow a double: jsontext would clamp it, we refuse it
}

// Numbers with more integer digits or a larger exponent than this may not fit
// a double; they go to our own parser, which reports them instead of clamping.
const hugeNumberDigits = 300

// Scan checks size, depth and string length in one pass over raw, without
// parsing: it tracks only whether it is inside a string. Syntax is left to the
// parser that follows; the scan only has to be right about valid JSON and
// must not be fooled into under-counting by invalid JSON, which the parser
// rejects anyway.
func (l Limits) Scan(raw []byte) (Stats, error) {
	var st Stats
	if len(raw) > l.MaxDocumentBytes {
		return st, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(raw), l.MaxDocumentBytes)
	}
	depth := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{', '[':
			depth++
			if depth > l.MaxDepth {
				return st, &positionError{Offset: int64(i), Err: fmt.Errorf("%w: more than %d levels", ErrTooDeep, l.MaxDepth)}
			}
		case '}', ']':
			depth--
		case 'e', 'E':
			// Outside strings an 'e' is in an exponent or in true/false.
			if i > 0 && (raw[i-1] >= '0' && raw[i-1] <= '9' || raw[i-1] == '.') && exponentAtLeast(raw[i+1:], hugeNumberDigits) {
				st.hugeNumber = true
			}
		case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			j := i
			for j < len(raw) && raw[j] >= '0' && raw[j] <= '9' {
				j++
			}
			if j-i > hugeNumberDigits {
				st.hugeNumber = true
			}
			i = j - 1
		case '"':
			start := i
			end, sur := scanString(raw, i+1)
			st.surrogateEscapes = st.surrogateEscapes || sur
			if end-start-1 > l.MaxStringBytes {
				return st, &positionError{Offset: int64(start), Err: fmt.Errorf("%w: %d bytes, limit %d", ErrStringTooLong, end-start-1, l.MaxStringBytes)}
			}
			i = end
		}
	}
	return st, nil
}

// scanString returns the index of the closing quote of a string whose content
// starts at i (len(raw) if unterminated), and whether it holds a surrogate
// escape. bytes.IndexByte keeps the common case (long plain text) vectorized.
func scanString(raw []byte, i int) (end int, surrogate bool) {
	for {
		q := bytes.IndexByte(raw[i:], '"')
		if q < 0 {
			return len(raw), surrogate || hasSurrogateEscape(raw[i:])
		}
		seg := raw[i : i+q]
		if bytes.IndexByte(seg, '\\') < 0 {
			return i + q, surrogate
		}
		// Escapes present: walk them to find whether the quote is escaped.
		j := i
		for j < i+q {
			if raw[j] != '\\' {
				j++
				continue
			}
			if j+1 >= len(raw) {
				return len(raw), surrogate
			}
			if raw[j+1] == 'u' && isSurrogateEscape(raw[j+2:]) {
				surrogate = true
			}
			j += 2
		}
		if j == i+q { // the quote is not escaped: end of string
			return i + q, surrogate
		}
		i = j // the quote was the escaped character; continue after it
	}
}

// exponentAtLeast reports whether b starts with an exponent ([+-]digits)
// whose magnitude is at least n.
func exponentAtLeast(b []byte, n int) bool {
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		b = b[1:]
	}
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + int(c-'0')
		if v >= n {
			return true
		}
	}
	return false
}

func hasSurrogateEscape(b []byte) bool {
	for j := 0; j+1 < len(b); j++ {
		if b[j] == '\\' {
			if b[j+1] == 'u' && isSurrogateEscape(b[j+2:]) {
				return true
			}
			j++
		}
	}
	return false
}

// isSurrogateEscape reports whether b starts with four hex digits D800-DFFF.
func isSurrogateEscape(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	if b[0] != 'd' && b[0] != 'D' {
		return false
	}
	c := b[1]
	return c >= '8' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
