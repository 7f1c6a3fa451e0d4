package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpdrift/mcpdrift/contract/canon"
)

// Document formats ReadDocument recognises.
const (
	FormatSnapshot    = "snapshot"         // a Snapshot written by this project
	FormatListResult  = "list_result"      // {"tools":[...],"nextCursor":...} (or prompts, resources, resourceTemplates)
	FormatPages       = "pages"            // [list result, list result, ...]
	FormatDefinitions = "definitions"      // [definition, definition, ...]
	FormatInitialize  = "initialize"       // an initialize or server/discover result
	FormatRPCResponse = "jsonrpc_response" // {"jsonrpc":"2.0","id":..,"result":<any of the above>}
)

// Document is a contract read from a file: a full snapshot, or the parts a
// raw listing carries, completed into a sealed (partial) Snapshot.
type Document struct {
	Format   string
	Snapshot *Snapshot
	// Present says which listings the input carried (for a snapshot: the
	// non-empty ones and those whose capability the server advertised).
	Present map[Kind]bool
	// HasInstructions says the input carried an instructions string.
	HasInstructions bool
}

// ReadOptions tune ReadDocument.
type ReadOptions struct {
	Limits Limits
	// Kind is the kind of a bare definition array; empty guesses from the
	// members (uriTemplate, uri, inputSchema, arguments), defaulting to tool.
	Kind Kind
}

// ReadDocument reads one or more inputs as one contract: several inputs are
// pages of the same listings (and at most one snapshot, which must stand alone).
func ReadDocument(opts ReadOptions, inputs ...[]byte) (*Document, error) {
	b := &documentBuilder{opts: opts, raws: map[Kind][]json.RawMessage{}, present: map[Kind]bool{}}
	for i, in := range inputs {
		if err := b.add(in, 0); err != nil {
			if len(inputs) > 1 {
				return nil, fmt.Errorf("input %d: %w", i+1, err)
			}
			return nil, err
		}
	}
	if b.snapshot != nil {
		if len(inputs) > 1 {
			return nil, fmt.Errorf("a snapshot cannot be combined with other inputs")
		}
		return b.snapshotDocument(), nil
	}
	return b.build()
}

type documentBuilder struct {
	opts     ReadOptions
	formats  []string
	pages    []Page                     // list result pages, hashed as they were parsed
	raws     map[Kind][]json.RawMessage // bare definition arrays, hashed in build
	present  map[Kind]bool
	init     *initializeResult
	snapshot *Snapshot
}

type initializeResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ServerInfo      json.RawMessage `json:"serverInfo"`
	Instructions    *string         `json:"instructions"`
}

func (b *documentBuilder) add(raw []byte, depth int) error {
	l := b.opts.Limits.withDefaults()
	if _, err := l.Canon().Scan(raw); err != nil {
		return err
	}
	switch firstByte(raw) {
	case '[':
		return b.addArray(raw)
	case '{':
	default:
		return fmt.Errorf("%w: input is not a JSON object or array", ErrUnknownFormat)
	}
	members, err := topLevelMembers(raw)
	if err != nil {
		return err
	}
	switch {
	case members["schema_version"] != nil:
		s, err := l.DecodeSnapshot(raw)
		if err != nil {
			return err
		}
		b.snapshot = s
		return nil
	case members["jsonrpc"] != nil && members["result"] != nil && depth == 0:
		b.formats = append(b.formats, FormatRPCResponse)
		return b.add(members["result"], depth+1)
	case hasAny(members, "tools", "prompts", "resources", "resourceTemplates"):
		p, err := l.ParsePage(raw)
		if err != nil {
			return err
		}
		b.addPage(p)
		b.format(FormatListResult, depth)
		return nil
	case hasAny(members, "protocolVersion", "serverInfo", "capabilities"):
		var init initializeResult
		if err := json.Unmarshal(raw, &init); err != nil {
			return fmt.Errorf("%w: initialize result: %v", canon.ErrSyntax, err)
		}
		b.init = &init
		b.format(FormatInitialize, depth)
		return nil
	}
	return ErrUnknownFormat
}

// format records the input's format; inside a JSON-RPC envelope (depth 1)
// the envelope names it.
func (b *documentBuilder) format(f string, depth int) {
	if depth == 0 {
		b.formats = append(b.formats, f)
	}
}

func (b *documentBuilder) addPage(p Page) {
	b.pages = append(b.pages, p)
	for k := range p.Definitions {
		b.present[k] = true
	}
}

func (b *documentBuilder) addArray(raw []byte) error {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return fmt.Errorf("%w: %v", canon.ErrSyntax, err)
	}
	l := b.opts.Limits.withDefaults()
	isPages := len(elems) > 0
	for _, e := range elems {
		m, err := topLevelMembers(e)
		if err != nil || !hasAny(m, "tools", "prompts", "resources", "resourceTemplates") {
			isPages = false
			break
		}
	}
	if isPages {
		for _, e := range elems {
			p, err := l.ParsePage(e)
			if err != nil {
				return err
			}
			b.addPage(p)
		}
		b.formats = append(b.formats, FormatPages)
		return nil
	}
	kind := b.opts.Kind
	if kind == "" {
		kind = guessKind(elems)
	}
	b.raws[kind] = append(b.raws[kind], elems...)
	b.present[kind] = true
	b.formats = append(b.formats, FormatDefinitions)
	return nil
}

// guessKind names the kind of a bare definition array from its members.
func guessKind(elems []json.RawMessage) Kind {
	seen := map[string]bool{}
	for _, e := range elems {
		m, err := topLevelMembers(e)
		if err != nil {
			continue
		}
		for k := range m {
			seen[k] = true
		}
	}
	switch {
	case seen["uriTemplate"]:
		return KindResourceTemplate
	case seen["uri"]:
		return KindResource
	case !seen["inputSchema"] && seen["arguments"]:
		return KindPrompt
	}
	return KindTool
}

func (b *documentBuilder) build() (*Document, error) {
	l := b.opts.Limits.withDefaults()
	s := &Snapshot{SchemaVersion: SchemaVersion}
	for _, k := range Kinds {
		listing, err := l.HashDefinitions(k, b.raws[k])
		if err != nil {
			return nil, err
		}
		paged, err := l.HashPages(k, b.pages...)
		if err != nil {
			return nil, err
		}
		listing = append(listing, paged...)
		if err := l.checkCount(k, len(listing)); err != nil {
			return nil, err
		}
		s.SetListing(k, listing) // Seal sorts it
	}
	doc := &Document{Present: b.present, Snapshot: s}
	if b.init != nil {
		s.ProtocolVersion = b.init.ProtocolVersion
		s.Capabilities = b.init.Capabilities
		s.ServerInfo = b.init.ServerInfo
		s.Instructions = b.init.Instructions
		doc.HasInstructions = b.init.Instructions != nil
	}
	if err := s.Seal(); err != nil {
		return nil, err
	}
	doc.Format = b.formats[0]
	if len(slices.Compact(slices.Clone(b.formats))) > 1 {
		doc.Format = "merged"
	}
	return doc, nil
}

func (b *documentBuilder) snapshotDocument() *Document {
	s := b.snapshot
	doc := &Document{Format: FormatSnapshot, Snapshot: s, Present: map[Kind]bool{}, HasInstructions: s.Instructions != nil}
	for _, k := range Kinds {
		capName := k.ListMember()
		if k == KindResourceTemplate {
			capName = "resources"
		}
		doc.Present[k] = len(s.Listing(k)) > 0 || slices.Contains(s.CapabilityNames, capName)
	}
	return doc
}

// topLevelMembers returns the raw values of an object's members (first copy
// of a repeated name; canonicalization rejects repeats where it matters).
func topLevelMembers(raw []byte) (map[string]jsontext.Value, error) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, canon.TranslateJSONError(err)
	}
	if tok.Kind() != '{' {
		return nil, ErrNotAnObject
	}
	m := map[string]jsontext.Value{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, canon.TranslateJSONError(err)
		}
		name := tok.String() // tokens are void after the next read
		v, err := dec.ReadValue()
		if err != nil {
			return nil, canon.TranslateJSONError(err)
		}
		if _, dup := m[name]; !dup {
			m[name] = v
		}
	}
	return m, nil
}

func hasAny(m map[string]jsontext.Value, names ...string) bool {
	for _, n := range names {
		if m[n] != nil {
			return true
		}
	}
	return false
}

func firstByte(raw []byte) byte {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 {
		return 0
	}
	return t[0]
}
