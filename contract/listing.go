package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// Kind is the kind of a definition in a server's contract.
type Kind string

// The definition kinds an MCP server lists.
const (
	KindTool             Kind = "tool"
	KindPrompt           Kind = "prompt"
	KindResource         Kind = "resource"
	KindResourceTemplate Kind = "resource_template"
)

// KindServer is what a change to the server itself is about (instructions,
// capabilities, protocol version): the subject of a Change or a Rule, never
// the kind of a listed definition, so it is not in Kinds.
const KindServer Kind = "server"

// Kinds lists every definition kind in a fixed order.
var Kinds = []Kind{KindTool, KindPrompt, KindResource, KindResourceTemplate}

// rule is this kind's id for r (empty if the kind lacks r, and for KindServer).
func (k Kind) rule(r defRule) RuleID {
	if ids := defRuleIDs[k]; ids != nil {
		return ids[r]
	}
	return ""
}

// KeyMember is the member that identifies a definition of this kind.
func (k Kind) KeyMember() string {
	switch k {
	case KindResource:
		return "uri"
	case KindResourceTemplate:
		return "uriTemplate"
	default:
		return "name"
	}
}

// ListMember is the member of a list result that holds definitions of this kind.
func (k Kind) ListMember() string {
	switch k {
	case KindPrompt:
		return "prompts"
	case KindResource:
		return "resources"
	case KindResourceTemplate:
		return "resourceTemplates"
	default:
		return "tools"
	}
}

// Definition is one definition exactly as the server sent it, with its key
// and its definition hash.
type Definition struct {
	Key    string          `json:"key"`
	Digest string          `json:"digest"`
	Raw    json.RawMessage `json:"definition"`
}

// Listing is every definition of one kind, sorted as the set hash sorts them
// (by key in UTF-16 code unit order, then by digest).
type Listing []Definition

// SetDigest is the recipe's set hash: SHA-256 over the sorted "key:digest"
// lines joined by "\n", as UTF-8 (an unpaired surrogate in a key is written
// as U+FFFD). An empty listing hashes the empty string.
func (l Listing) SetDigest() string {
	if !slices.IsSortedFunc(l, compareDefinitions) {
		l = slices.Clone(l)
		slices.SortFunc(l, compareDefinitions)
	}
	var b bytes.Buffer
	for i, d := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(canon.KeyUTF8(d.Key))
		b.WriteByte(':')
		b.WriteString(d.Digest)
	}
	return canon.HashBytes(b.Bytes())
}

// Lookup returns the first definition with the given key.
func (l Listing) Lookup(key string) (Definition, bool) {
	for _, d := range l {
		if d.Key == key {
			return d, true
		}
	}
	return Definition{}, false
}

// Keys returns the keys in listing order.
func (l Listing) Keys() []string {
	keys := make([]string, len(l))
	for i, d := range l {
		keys[i] = d.Key
	}
	return keys
}

func compareDefinitions(a, b Definition) int {
	if c := compareKeyUnits(a, b); c != 0 {
		return c
	}
	return compareStrings(a.Digest, b.Digest)
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareKeyUnits orders keys by UTF-16 code units, as RFC 8785 orders member
// names; a key that holds an unpaired surrogate is not UTF-8 (see key.go).
func compareKeyUnits(a, b Definition) int {
	if !utf8.ValidString(a.Key) || !utf8.ValidString(b.Key) {
		return slices.Compare(canon.KeyUnits(a.Key), canon.KeyUnits(b.Key))
	}
	return canon.CompareUTF16(a.Key, b.Key)
}

// HashDefinitions hashes the definitions of one kind as received (across all
// pages) and returns them as a sorted Listing. The first definition that has
// no digest (repeated member name, no string key, invalid UTF-8, over a
// limit) fails the whole listing with a *DefinitionError, as the recipe
// requires: a listing with such a definition has no set hash.
func (l Limits) HashDefinitions(kind Kind, defs []json.RawMessage) (Listing, error) {
	l = l.withDefaults()
	if err := l.checkCount(kind, len(defs)); err != nil {
		return nil, err
	}
	bp := canon.Buffers.Get().(*[]byte)
	defer canon.Buffers.Put(bp)
	out := make(Listing, 0, len(defs))
	for i, raw := range defs {
		d, err := l.hashOne(kind, raw, bp)
		if err != nil {
			return nil, &DefinitionError{Kind: kind, Index: i, Key: d.Key, Err: err}
		}
		out = append(out, d)
	}
	slices.SortFunc(out, compareDefinitions)
	return out, nil
}

func (l Limits) checkCount(kind Kind, n int) error {
	if n > l.MaxDefinitions {
		return &DefinitionError{Kind: kind, Index: -1, Err: fmt.Errorf("%w: %d %ss, limit %d", ErrTooMany, n, kind, l.MaxDefinitions)}
	}
	return nil
}

// hashOne canonicalizes and hashes one raw definition, using *bp as scratch.
// On error the returned Definition still carries the key when it was readable.
func (l Limits) hashOne(kind Kind, raw []byte, bp *[]byte) (Definition, error) {
	st, err := l.Canon().Scan(raw)
	if err == nil {
		*bp, err = canon.AppendScanned((*bp)[:0], raw, st, l.MaxDepth)
	}
	if err != nil {
		key, _ := readKey(raw, kind.KeyMember())
		return Definition{Key: key}, err
	}
	return definitionFrom(kind, raw, *bp)
}

// definitionFrom builds a Definition from a raw definition and its canonical
// form: the key is read from the canonical text, the digest hashes it.
func definitionFrom(kind Kind, raw, canonical []byte) (Definition, error) {
	return definitionWithKey(kind, raw, canonical, jsonwire.Lookup(canonical, kind.KeyMember()))
}

// definitionWithKey builds a Definition whose key member's raw value (nil
// when absent) has already been found.
func definitionWithKey(kind Kind, raw, canonical, keyValue []byte) (Definition, error) {
	switch {
	case len(canonical) == 0 || canonical[0] != '{':
		return Definition{}, ErrNotAnObject
	case keyValue == nil:
		return Definition{}, fmt.Errorf("%w: no %q member", ErrNoName, kind.KeyMember())
	case keyValue[0] != '"':
		return Definition{}, fmt.Errorf("%w: %q is not a string", ErrNoName, kind.KeyMember())
	}
	key, _ := canon.UnquoteKey(keyValue)
	return Definition{Key: key, Digest: canon.HashBytes(canonical), Raw: json.RawMessage(raw)}, nil
}

// readKey reads the key member of a raw definition leniently, for error
// messages about definitions that could not be canonicalized.
func readKey(raw []byte, member string) (string, error) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", ErrNotAnObject
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return "", err
		}
		if name.String() == member && dec.PeekKind() == '"' {
			val, err := dec.ReadToken()
			return val.String(), err
		}
		if err := dec.SkipValue(); err != nil {
			return "", err
		}
	}
	return "", ErrNoName
}

// Page is one list result split into its raw definitions.
type Page struct {
	// Definitions are the definitions of each kind the page listed, in the
	// order received, each with its key and digest; Raw is a sub-slice of
	// the page as received.
	Definitions map[Kind][]Definition
	// NextCursor is the page's nextCursor when it is a string; the recipe
	// ends a listing when it is absent or empty.
	NextCursor *string
}

var listMembers = map[string]Kind{"tools": KindTool, "prompts": KindPrompt, "resources": KindResource, "resourceTemplates": KindResourceTemplate}

// ParsePage reads one raw list result ({"tools":[...],"nextCursor":...}) and
// hashes every definition on it.
//
// The page is canonicalized whole, once. RFC 8785 is compositional, so each
// definition's canonical form is its slice of the page's canonical form, and
// since the page is then known to be valid, its raw definitions are found by
// the bracket-counting walker instead of a second parse. Only when the page is
// rejected is it split leniently to name the definition at fault.
func (l Limits) ParsePage(raw []byte) (Page, error) {
	l = l.withDefaults()
	p := Page{Definitions: map[Kind][]Definition{}}
	st, err := l.Canon().Scan(raw)
	if err != nil {
		return p, err
	}
	bp := canon.Buffers.Get().(*[]byte)
	defer canon.Buffers.Put(bp)
	canonical, err := canon.AppendScanned((*bp)[:0], raw, st, l.MaxDepth)
	*bp = canonical
	if err != nil {
		if blamed := l.blame(raw); blamed != nil {
			return p, blamed
		}
		return p, err
	}
	if canonical[0] != '{' {
		return p, fmt.Errorf("%w: a list result is a JSON object", ErrUnknownFormat)
	}
	rawLists, _, _ := splitValidPage(raw)
	canonLists, cursor, notArray := splitValidPage(canonical)
	if notArray != "" {
		return p, fmt.Errorf("%w: %q is not an array", ErrUnknownFormat, notArray)
	}
	if cursor != nil && cursor[0] == '"' {
		c := unquoteValid(cursor)
		p.NextCursor = &c
	}
	for kind, canonElems := range canonLists {
		rawElems := rawLists[kind]
		if err := l.checkCount(kind, len(canonElems)); err != nil {
			return p, err
		}
		defs := make([]Definition, len(canonElems))
		for i, c := range canonElems {
			d, err := definitionWithKey(kind, rawElems[i].raw, c.raw, c.key)
			if err != nil {
				key, _ := readKey(rawElems[i].raw, kind.KeyMember())
				return p, &DefinitionError{Kind: kind, Index: i, Key: key, Err: err}
			}
			defs[i] = d
		}
		p.Definitions[kind] = defs
	}
	return p, nil
}

// blame splits a rejected page leniently and returns the error of the first
// definition that cannot be hashed on its own, or nil when every definition
// can (the fault is in the page around them).
func (l Limits) blame(raw []byte) error {
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil
	}
	bp := canon.Buffers.Get().(*[]byte)
	defer canon.Buffers.Put(bp)
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil
		}
		kind, isList := listMembers[name.String()]
		if !isList || dec.PeekKind() != '[' {
			if dec.SkipValue() != nil {
				return nil
			}
			continue
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil
		}
		for i := 0; dec.PeekKind() != ']'; i++ {
			v, err := dec.ReadValue()
			if err != nil {
				return nil
			}
			if d, err := l.hashOne(kind, v, bp); err != nil {
				return &DefinitionError{Kind: kind, Index: i, Key: d.Key, Err: err}
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil
		}
	}
	return nil
}

// HashPages merges the definitions of one kind across parsed pages.
func (l Limits) HashPages(kind Kind, pages ...Page) (Listing, error) {
	l = l.withDefaults()
	var out Listing
	for _, p := range pages {
		out = append(out, p.Definitions[kind]...)
	}
	if err := l.checkCount(kind, len(out)); err != nil {
		return nil, err
	}
	slices.SortFunc(out, compareDefinitions)
	return out, nil
}

// HashListing hashes the definitions of one kind across raw list result pages.
func (l Limits) HashListing(kind Kind, pages ...[]byte) (Listing, error) {
	parsed := make([]Page, 0, len(pages))
	for _, raw := range pages {
		p, err := l.ParsePage(raw)
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, p)
	}
	return l.HashPages(kind, parsed...)
}
