package probe

import (
	"bytes"
	"encoding/json"
	"errors"
)

// errNotObject is returned by topMembers for input that is not a JSON object.
var errNotObject = errors.New("not a JSON object")

// topMembers returns the raw values of the top-level members of a JSON
// object, without parsing the values: a list result is megabytes of
// definitions that contract.ParsePage validates and canonicalizes anyway,
// so decoding the envelope must not pay for a second full parse. It checks
// the structure it walks (strings, brackets, separators) and refuses a
// repeated top-level name; the content of nested values is left to whoever
// reads them.
func topMembers(raw []byte) (map[string][]byte, error) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, errNotObject
	}
	out := map[string][]byte{}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return out, trailing(raw, i+1)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, errors.New("expected a member name")
		}
		end := stringEnd(raw, i)
		if end < 0 {
			return nil, errors.New("unterminated string")
		}
		name, err := memberName(raw[i:end])
		if err != nil {
			return nil, err
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, errors.New("expected ':' after a member name")
		}
		i = skipSpace(raw, i+1)
		vend, err := valueEnd(raw, i)
		if err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, errors.New("repeated member name " + truncate(name, 40))
		}
		out[name] = raw[i:vend]
		i = skipSpace(raw, vend)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
			continue
		}
		if i < len(raw) && raw[i] == '}' {
			return out, trailing(raw, i+1)
		}
		return nil, errors.New("expected ',' or '}'")
	}
}

func trailing(raw []byte, i int) error {
	if skipSpace(raw, i) != len(raw) {
		return errors.New("data after the JSON object")
	}
	return nil
}

func memberName(quoted []byte) (string, error) {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1]), nil
	}
	var s string
	err := json.Unmarshal(quoted, &s)
	return s, err
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the closing quote of the string that
// starts at raw[i], or -1.
func stringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); {
		k := bytes.IndexAny(raw[j:], `"\`)
		if k < 0 {
			return -1
		}
		j += k
		if raw[j] == '"' {
			return j + 1
		}
		j += 2 // an escape: skip the backslash and the escaped byte
	}
	return -1
}

// valueEnd returns the index after the value that starts at raw[i],
// matching brackets outside strings.
func valueEnd(raw []byte, i int) (int, error) {
	if i >= len(raw) {
		return 0, errors.New("expected a value")
	}
	switch raw[i] {
	case '"':
		if e := stringEnd(raw, i); e >= 0 {
			return e, nil
		}
		return 0, errors.New("unterminated string")
	case '{', '[':
		depth := 0
		for j := i; j < len(raw); j++ {
			switch raw[j] {
			case '"':
				e := stringEnd(raw, j)
				if e < 0 {
					return 0, errors.New("unterminated string")
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errors.New("unterminated object or array")
	default: // number, true, false, null
		j := i
		for j < len(raw) && bytes.IndexByte([]byte(",}] \t\r\n"), raw[j]) < 0 {
			j++
		}
		if j == i {
			return 0, errors.New("expected a value")
		}
		return j, nil
	}
}
