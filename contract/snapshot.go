package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"slices"
	"strings"
	"time"
)

// SchemaVersion identifies the snapshot format this package reads and writes.
const SchemaVersion = "mcpdrift.snapshot/v1"

// SpecGeneration says which generation of the MCP specification a server
// speaks: the stateful, initialize-era protocol (2024-11-05 to 2025-11-25) or
// the stateless one that starts with 2026-07-28 (server/discover).
type SpecGeneration string

// Spec generations. Empty means unknown.
const (
	SpecStateful2025  SpecGeneration = "stateful_2025"
	SpecStateless2026 SpecGeneration = "stateless_2026"
)

// Transports a snapshot can have been taken over.
const (
	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
)

// Server identifies the server a snapshot was taken of.
type Server struct {
	// Name is the configured logical name (mcpdrift.server.name).
	Name string `json:"name,omitempty"`
	// URL is the endpoint for HTTP transports, without credentials or query.
	URL string `json:"url,omitempty"`
	// Command is the stdio command line (program and arguments).
	Command []string `json:"command,omitempty"`
	// Transport is the transport that answered: stdio, streamable-http or sse.
	Transport string `json:"transport,omitempty"`
}

// Snapshot is one server's advertised contract at one time. Raw members
// (definitions, serverInfo, capabilities) are kept exactly as received; the
// digests are derived from them by Seal and checked again by DecodeSnapshot.
type Snapshot struct {
	SchemaVersion   string         `json:"schema_version"`
	Server          Server         `json:"server"`
	ObservedAt      time.Time      `json:"observed_at"`
	ProtocolVersion string         `json:"protocol_version,omitempty"`
	SpecGeneration  SpecGeneration `json:"spec_generation,omitempty"`
	// ServerInfo is the server's Implementation object (name, version, ...).
	ServerInfo json.RawMessage `json:"server_info,omitempty"`
	// Capabilities is the server's capabilities object as received.
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
	// CapabilityNames lists capabilities and their enabled sub-flags as
	// dotted paths ("tools", "tools.listChanged"), sorted. Derived.
	CapabilityNames []string `json:"capability_names"`
	// Instructions is nil when the server sent none.
	Instructions *string `json:"instructions,omitempty"`
	// ClientCapabilities is what the probe declared; servers may list
	// different tools to different clients.
	ClientCapabilities json.RawMessage `json:"client_capabilities,omitempty"`

	Tools             Listing `json:"tools"`
	Prompts           Listing `json:"prompts"`
	Resources         Listing `json:"resources"`
	ResourceTemplates Listing `json:"resource_templates"`

	Digests Digests `json:"digests"`
}

// Digests are the derived hashes of a snapshot. See docs/digests.md.
type Digests struct {
	Tools             string  `json:"tools"`
	Prompts           string  `json:"prompts"`
	Resources         string  `json:"resources"`
	ResourceTemplates string  `json:"resource_templates"`
	Instructions      *string `json:"instructions"`
	Capabilities      string  `json:"capabilities"`
	// Contract covers everything that is contract; see ContractDigest.
	Contract string `json:"contract"`
}

// Listing returns the snapshot's listing of one kind.
func (s *Snapshot) Listing(k Kind) Listing {
	switch k {
	case KindPrompt:
		return s.Prompts
	case KindResource:
		return s.Resources
	case KindResourceTemplate:
		return s.ResourceTemplates
	default:
		return s.Tools
	}
}

// SetListing replaces the snapshot's listing of one kind.
func (s *Snapshot) SetListing(k Kind, l Listing) {
	switch k {
	case KindPrompt:
		s.Prompts = l
	case KindResource:
		s.Resources = l
	case KindResourceTemplate:
		s.ResourceTemplates = l
	default:
		s.Tools = l
	}
}

// Seal derives everything derivable: sorted listings, capability names, set
// digests, the instructions digest and the contract digest. Definitions must
// already carry their digests (HashDefinitions gives them).
func (s *Snapshot) Seal() error {
	if s.SchemaVersion == "" {
		s.SchemaVersion = SchemaVersion
	}
	for _, k := range Kinds {
		l := s.Listing(k)
		if l == nil {
			l = Listing{}
		}
		slices.SortFunc(l, compareDefinitions)
		s.SetListing(k, l)
	}
	names, err := CapabilityNames(s.Capabilities)
	if err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	s.CapabilityNames = names
	capDigest := canon.HashString("")
	if len(s.Capabilities) > 0 {
		if capDigest, err = DefaultLimits().Canon().Digest(s.Capabilities); err != nil {
			return fmt.Errorf("capabilities: %w", err)
		}
	}
	d := Digests{
		Tools:             s.Tools.SetDigest(),
		Prompts:           s.Prompts.SetDigest(),
		Resources:         s.Resources.SetDigest(),
		ResourceTemplates: s.ResourceTemplates.SetDigest(),
		Capabilities:      capDigest,
	}
	if s.Instructions != nil {
		h := canon.HashString(*s.Instructions)
		d.Instructions = &h
	}
	d.Contract = contractDigest(s.ProtocolVersion, s.SpecGeneration, d)
	s.Digests = d
	return nil
}

// contractDigest is the definition hash of a small JSON object that names
// every part of the contract (docs/digests.md):
//
//	{"capabilities":C,"instructions":I|null,"prompts":P,"protocol_version":V,
//	 "resource_templates":RT,"resources":R,"spec_generation":G,"tools":T,
//	 "v":"mcpdrift.contract/v1"}
//
// where C is the capabilities digest and T, P, R, RT the set digests. Server
// info (name, version), observation time, server identity and the declared
// client capabilities are not contract and are not covered.
func contractDigest(protocol string, gen SpecGeneration, d Digests) string {
	var instr any
	if d.Instructions != nil {
		instr = *d.Instructions
	}
	obj := map[string]any{
		"v":                  "mcpdrift.contract/v1",
		"capabilities":       d.Capabilities,
		"instructions":       instr,
		"prompts":            d.Prompts,
		"protocol_version":   protocol,
		"resource_templates": d.ResourceTemplates,
		"resources":          d.Resources,
		"spec_generation":    string(gen),
		"tools":              d.Tools,
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		panic(err) // only strings: cannot fail
	}
	digest, err := DefaultLimits().Canon().Digest(raw)
	if err != nil {
		panic(err) // produced by encoding/json from valid strings: cannot fail
	}
	return digest
}

// Encode writes the snapshot as indented JSON. Raw members are written as
// received (no HTML escaping), so digests re-derive exactly.
func (s *Snapshot) Encode() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// DecodeSnapshot reads a snapshot written by Encode under the default limits.
func DecodeSnapshot(b []byte) (*Snapshot, error) {
	return DefaultLimits().DecodeSnapshot(b)
}

// DecodeSnapshot reads a snapshot, refusing unknown schema versions, and
// re-derives every digest from the raw definitions: a snapshot whose stored
// digests disagree (edited or corrupted) is an error, not a silent drift.
func (l Limits) DecodeSnapshot(b []byte) (*Snapshot, error) {
	if _, err := l.Canon().Scan(b); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	var head struct {
		SchemaVersion *string `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("snapshot: %w: %v", canon.ErrSyntax, err)
	}
	if head.SchemaVersion == nil {
		return nil, fmt.Errorf("snapshot: %w: no schema_version", ErrUnknownSchema)
	}
	if *head.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("snapshot: %w %s (this build reads %s)", ErrUnknownSchema, QuoteForDisplay(*head.SchemaVersion), SchemaVersion)
	}
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("snapshot: %w: %v", canon.ErrSyntax, err)
	}
	stored := s.Digests
	for _, k := range Kinds {
		raws := make([]json.RawMessage, len(s.Listing(k)))
		for i, d := range s.Listing(k) {
			raws[i] = d.Raw
		}
		rehashed, err := l.HashDefinitions(k, raws)
		if err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
		// Pair stored and derived entries by digest: equal digests mean equal
		// canonical forms, hence equal keys.
		got, want := slices.Clone(s.Listing(k)), slices.Clone(rehashed)
		slices.SortFunc(got, compareDigests)
		slices.SortFunc(want, compareDigests)
		for i, d := range want {
			if got[i].Digest != d.Digest || !storedKeyMatches(got[i].Key, d.Key) {
				return nil, fmt.Errorf("snapshot: %s %s: stored key or digest does not match its definition (stored %s, computed %s)", k, QuoteForDisplay(d.Key), got[i].Digest, d.Digest)
			}
		}
		s.SetListing(k, rehashed)
	}
	if err := s.Seal(); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if stored.Contract != "" && stored.Contract != s.Digests.Contract {
		return nil, fmt.Errorf("snapshot: stored contract digest %s does not match its contents (%s)", stored.Contract, s.Digests.Contract)
	}
	return &s, nil
}

func compareDigests(a, b Definition) int { return compareStrings(a.Digest, b.Digest) }

// CapabilityNames flattens a capabilities object into sorted dotted paths:
// every member whose value is an object (a capability or a nested group) and
// every member that is true. {"tools":{"listChanged":true},"logging":{}}
// gives ["logging", "tools", "tools.listChanged"].
func CapabilityNames(raw json.RawMessage) ([]string, error) {
	names := []string{}
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return names, nil
	}
	var caps map[string]any
	if err := json.Unmarshal(raw, &caps); err != nil {
		return nil, fmt.Errorf("%w: %v", canon.ErrSyntax, err)
	}
	var walk func(prefix string, m map[string]any, depth int)
	walk = func(prefix string, m map[string]any, depth int) {
		for k, v := range m {
			path := k
			if prefix != "" {
				path = prefix + "." + k
			}
			switch v := v.(type) {
			case map[string]any:
				names = append(names, path)
				if depth < 4 {
					walk(path, v, depth+1)
				}
			case bool:
				if v {
					names = append(names, path)
				}
			}
		}
	}
	walk("", caps, 1)
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(a, b) })
	return names, nil
}
