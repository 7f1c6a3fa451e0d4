package contract

import (
	"bytes"

	"github.com/mcpdrift/mcpdrift/contract/canon"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// A listing is parsed once, by the canonicalizer (see ParsePage); the
// boundaries of its members and elements are then found in the text it
// accepted, and in the canonical text, with jsonwire's scanner, the one
// the interceptor and the probe read frames with.

// element is one element of a list member: its raw text and the raw value
// of its key member (nil when it has none, or is not an object).
type element struct {
	raw, key []byte
}

// splitValidPage walks the valid list result b once and returns the
// elements of each list member, with their key values, and the raw
// nextCursor value. A list member that is not an array is returned as
// notArray.
func splitValidPage(b []byte) (lists map[Kind][]element, nextCursor []byte, notArray string) {
	lists = map[Kind][]element{}
	split := func(key, b []byte, i int) (int, bool) {
		kind, isList := listKind(key)
		if !isList || b[i] != '[' {
			return jsonwire.SkipValue(b, i)
		}
		elems, end, ok := splitElements(b[i:], kind.KeyMember())
		lists[kind] = elems
		return i + end, ok
	}
	o, _ := jsonwire.NewObject(b)
	for {
		m, ok := o.NextSkipping(split)
		if !ok {
			return lists, nextCursor, notArray
		}
		kind, isList := listKind(m.Key)
		switch {
		case isList && m.Value[0] != '[':
			notArray = kind.ListMember()
		case !isList && jsonwire.KeyIs(m.Key, "nextCursor"):
			nextCursor = m.Value
		}
	}
}

// splitElements splits the valid array b, reading each object element's
// key member on the way; end is past the array.
func splitElements(b []byte, keyMember string) (elems []element, end int, ok bool) {
	var key []byte
	readKey := func(b []byte, i int) (int, bool) {
		key = nil
		if b[i] != '{' {
			return jsonwire.SkipValue(b, i)
		}
		o, _ := jsonwire.NewObject(b[i:])
		for {
			m, ok := o.Next()
			if !ok {
				return i + o.End(), !o.Err()
			}
			if key == nil && jsonwire.KeyIs(m.Key, keyMember) {
				key = m.Value
			}
		}
	}
	a, _ := jsonwire.NewArray(b)
	for {
		e, ok := a.NextSkipping(readKey)
		if !ok {
			return elems, a.End(), !a.Err()
		}
		elems = append(elems, element{raw: e, key: key})
	}
}

// listKind is the kind whose list member the raw member name key is.
func listKind(key []byte) (Kind, bool) {
	if bytes.IndexByte(key, '\\') < 0 {
		k, ok := listMembers[string(key)]
		return k, ok
	}
	k, ok := listMembers[keyText(key)]
	return k, ok
}

// keyText is a raw member name (between its quotes) as text; an unpaired
// surrogate escape becomes U+FFFD, as the recipe's UTF-8 encoding of names
// requires.
func keyText(key []byte) string {
	if bytes.IndexByte(key, '\\') < 0 {
		return string(key)
	}
	quoted := make([]byte, 0, len(key)+2)
	quoted = append(append(append(quoted, '"'), key...), '"')
	return unquoteValid(quoted)
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
