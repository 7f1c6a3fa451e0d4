package jsonwire

import (
	"bytes"
	"errors"
	"fmt"
	"math"
)

// Limits bound one JSON document's nesting and each string as written; zero
// means no bound.
type Limits struct {
	MaxDepth, MaxStringBytes int
}

// Stats is what Scan noticed on the way, for a caller that must treat such
// text apart (canonical JSON takes its own path for both).
type Stats struct {
	// SurrogateEscapes: a \uD800-\uDFFF escape occurs in some string.
	SurrogateEscapes bool
	// HugeNumbers: a number has more than HugeNumberDigits integer digits
	// or an exponent at least that large, so it may not fit a double.
	HugeNumbers bool
}

// HugeNumberDigits is where a number starts to count for Stats.HugeNumbers.
const HugeNumberDigits = 300

// Errors Scan reports, wrapped in a *LimitError.
var (
	ErrTooDeep       = errors.New("nesting too deep")
	ErrStringTooLong = errors.New("string too long")
)

// LimitError is a limit Scan found exceeded, at Offset.
type LimitError struct {
	Offset int
	Err    error // ErrTooDeep or ErrStringTooLong
	Limit  int
	Size   int // the string's length in bytes (ErrStringTooLong)
}

func (e *LimitError) Error() string {
	if e.Err == ErrStringTooLong {
		return fmt.Sprintf("%v: %d bytes, limit %d", e.Err, e.Size, e.Limit)
	}
	return fmt.Sprintf("%v: more than %d levels", e.Err, e.Limit)
}

func (e *LimitError) Unwrap() error { return e.Err }

// Scan checks depth and string length in one pass over b, without parsing:
// it tracks only whether it is inside a string. Syntax is left to whatever
// reads b next; the scan only has to be right about valid JSON and must not
// be fooled into under-counting by invalid JSON, which that reader rejects
// anyway.
func (l Limits) Scan(b []byte) (Stats, *LimitError) {
	var st Stats
	maxDepth, maxString := l.MaxDepth, l.MaxStringBytes
	if maxDepth <= 0 {
		maxDepth = math.MaxInt
	}
	if maxString <= 0 {
		maxString = math.MaxInt
	}
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			depth++
			if depth > maxDepth {
				return st, &LimitError{Offset: i, Err: ErrTooDeep, Limit: maxDepth}
			}
		case '}', ']':
			depth--
		case 'e', 'E':
			// Outside strings an 'e' is in an exponent or in true/false.
			if i > 0 && (b[i-1] >= '0' && b[i-1] <= '9' || b[i-1] == '.') && exponentAtLeast(b[i+1:], HugeNumberDigits) {
				st.HugeNumbers = true
			}
		case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			j := i + 1
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				j++
			}
			if j-i > HugeNumberDigits {
				st.HugeNumbers = true
			}
			i = j - 1
		case '"':
			end, _ := endOfString(b, i+1)
			if n := end - i - 1; n > maxString {
				return st, &LimitError{Offset: i, Err: ErrStringTooLong, Limit: maxString, Size: n}
			}
			if !st.SurrogateEscapes && hasSurrogateEscape(b[i+1:end]) {
				st.SurrogateEscapes = true
			}
			i = end
		}
	}
	return st, nil
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

// hasSurrogateEscape reports whether a string's content s holds a \u escape
// of a surrogate (D800-DFFF); escapes pair up from the start.
func hasSurrogateEscape(s []byte) bool {
	j := bytes.IndexByte(s, '\\')
	if j < 0 {
		return false
	}
	for ; j+1 < len(s); j++ {
		if s[j] == '\\' {
			if s[j+1] == 'u' && isSurrogateEscape(s[j+2:]) {
				return true
			}
			j++
		}
	}
	return false
}

// isSurrogateEscape reports whether b starts with the hex digits of D800-DFFF.
func isSurrogateEscape(b []byte) bool {
	if len(b) < 2 || b[0] != 'd' && b[0] != 'D' {
		return false
	}
	c := b[1]
	return c >= '8' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
