package contract

import (
	"bytes"
	"github.com/mcpdrift/mcpdrift/contract/canon"
)

// A walker over JSON that is already known to be valid: a document that
// jsontext (or our surrogate-aware canonicalizer) has just accepted, or the
// canonical text either produced. Knowing the input is valid, finding the
// boundaries of members and elements needs no parsing, only string-aware
// bracket counting. That is what lets a listing be parsed once, by the
// canonicalizer, rather than twice (see ParsePage). Never call these on
// unvalidated input.

// skipSpace returns the index of the first non-whitespace byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValid returns the index just past the valid JSON value starting at i.
func skipValid(b []byte, i int) int {
	switch b[i] {
	case '"':
		return endOfString(b, i+1) + 1
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			case '"':
				i = endOfString(b, i+1)
			}
		}
		return len(b)
	default: // number or literal
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// endOfString returns the index of the closing quote of the valid string
// whose content starts at i. In valid JSON a quote ends the string exactly
// when an even number of backslashes precedes it.
func endOfString(b []byte, i int) int {
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b)
		}
		q += i
		n := 0
		for n < q-i && b[q-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q
		}
		i = q + 1
	}
}

// nextMember finds the next member of an object: i is just past '{' or past the
// previous value. It returns the quoted name, the index of the value, and
// ok=false at the closing '}' (then next is past it).
func nextMember(b []byte, i int) (name []byte, value int, next int, ok bool) {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] == '}' {
		return nil, 0, i + 1, false
	}
	if b[i] == ',' {
		i = skipSpace(b, i+1)
	}
	nameEnd := skipValid(b, i)
	value = skipSpace(b, skipSpace(b, nameEnd)+1) // past ':'
	return b[i:nameEnd], value, value, true
}

// memberValue returns the raw value of the first member called name of the
// valid object b, or nil.
func memberValue(b []byte, name string) []byte {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil
	}
	for i++; ; {
		n, v, _, ok := nextMember(b, i)
		if !ok {
			return nil
		}
		end := skipValid(b, v)
		if nameIs(n, name) {
			return b[v:end]
		}
		i = end
	}
}

// element is one element of a list member: its raw text and the raw value
// of its key member (nil when it has none, or is not an object).
type element struct {
	raw, key []byte
}

// splitValidPage walks the valid list result b once and returns the elements
// of each list member, with their key values, and the raw nextCursor value.
// A list member that is not an array is returned as notArray.
func splitValidPage(b []byte) (lists map[Kind][]element, nextCursor []byte, notArray string) {
	lists = map[Kind][]element{}
	i := skipSpace(b, 0) + 1 // past '{'
	for {
		name, v, _, ok := nextMember(b, i)
		if !ok {
			return lists, nextCursor, notArray
		}
		kind, isList := listMembers[unquoteValid(name)]
		switch {
		case isList && b[v] == '[':
			lists[kind], i = splitElements(b, v, kind.KeyMember())
		case isList:
			notArray = kind.ListMember()
			i = skipValid(b, v)
		case nameIs(name, "nextCursor"):
			i = skipValid(b, v)
			nextCursor = b[v:i]
		default:
			i = skipValid(b, v)
		}
	}
}

// splitElements splits the valid array at b[i], reading each object
// element's key member on the way; it returns the index past the array.
func splitElements(b []byte, i int, keyMember string) ([]element, int) {
	var elems []element
	i++ // '['
	for {
		i = skipSpace(b, i)
		if i >= len(b) {
			return elems, i
		}
		switch b[i] {
		case ']':
			return elems, i + 1
		case ',':
			i = skipSpace(b, i+1)
		}
		start := i
		if b[i] != '{' {
			i = skipValid(b, i)
			elems = append(elems, element{raw: b[start:i]})
			continue
		}
		var key []byte
		for i++; ; {
			name, v, next, ok := nextMember(b, i)
			if !ok {
				i = next
				break
			}
			i = skipValid(b, v)
			if key == nil && nameIs(name, keyMember) {
				key = b[v:i]
			}
		}
		elems = append(elems, element{raw: b[start:i], key: key})
	}
}

// unquoteValid decodes a valid JSON string token. Unpaired surrogate escapes
// become U+FFFD, as the recipe's UTF-8 encoding of names requires.
func unquoteValid(quoted []byte) string {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	key, ok := canon.UnquoteKey(quoted)
	if !ok {
		return string(inner)
	}
	return canon.KeyUTF8(key)
}

// nameIs reports whether a quoted member name, as written in valid JSON,
// decodes to name.
func nameIs(quoted []byte, name string) bool {
	if len(quoted) == len(name)+2 && string(quoted[1:len(quoted)-1]) == name {
		return true
	}
	return bytes.IndexByte(quoted, '\\') >= 0 && unquoteValid(quoted) == name
}
