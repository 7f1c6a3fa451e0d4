package contract

import (
	"encoding/json"
	"fmt"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"unicode/utf8"
)

// MarshalJSON writes {"key", "digest", "definition"} with the key exact (an
// unpaired surrogate as its escape, where encoding/json would write U+FFFD).
func (d Definition) MarshalJSON() ([]byte, error) {
	b := append([]byte(`{"key":`), canon.AppendJSONKey(nil, d.Key)...)
	b = append(b, `,"digest":`...)
	b = canon.AppendJSONKey(b, d.Digest)
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
	key, ok := canon.UnquoteKey(raw)
	if !ok {
		return "", fmt.Errorf("%w: %s is not a string", canon.ErrSyntax, what)
	}
	return key, nil
}

// storedKeyMatches reports whether a key stored in a snapshot names the
// definition whose key is key. Snapshots written before keys kept unpaired
// surrogates stored them as U+FFFD; those still read.
func storedKeyMatches(stored, key string) bool {
	return stored == key || !utf8.ValidString(key) && stored == canon.KeyUTF8(key)
}
