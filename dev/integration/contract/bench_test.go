package contract_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/contract/canon"
	"github.com/mcpdrift/mcpdrift/dev/testkit/benchutil"
)

// benchListing generates a tools/list result of nTools tools with nParams
// parameters each, in the shape real servers send (descriptions, enums,
// limits, nested objects and arrays); 100 × 20 is about 600 KB.
func benchListing(nTools, nParams int) []byte {
	type obj = map[string]any
	tools := make([]any, 0, nTools)
	for t := range nTools {
		props := obj{}
		var required []string
		for p := range nParams {
			name := fmt.Sprintf("param_%02d_%s", p, []string{"query", "limit", "filter", "mode", "range"}[p%5])
			desc := fmt.Sprintf("Parameter %d of tool %d. %s", p, t, strings.Repeat("Controls how the search narrows results; see the documentation for details. ", 2))
			var s obj
			switch p % 5 {
			case 0:
				s = obj{"type": "string", "description": desc, "minLength": 1, "maxLength": 4096, "pattern": "^[\\w\\s-]+$"}
			case 1:
				s = obj{"type": "integer", "description": desc, "minimum": 1, "maximum": 1000, "default": 10}
			case 2:
				s = obj{"type": "object", "description": desc, "properties": obj{
					"field": obj{"type": "string", "enum": []string{"title", "body", "author", "date"}},
					"value": obj{"type": []string{"string", "number", "null"}},
				}, "required": []string{"field"}, "additionalProperties": false}
			case 3:
				s = obj{"type": "string", "description": desc, "enum": []string{"fast", "balanced", "thorough", "exhaustive"}, "default": "balanced"}
			case 4:
				s = obj{"type": "array", "description": desc, "items": obj{"type": "number", "multipleOf": 0.5}, "minItems": 2, "maxItems": 2, "uniqueItems": true}
			}
			props[name] = s
			if p%3 == 0 {
				required = append(required, name)
			}
		}
		tools = append(tools, obj{
			"name":        fmt.Sprintf("tool_%03d", t),
			"title":       fmt.Sprintf("Tool %d", t),
			"description": fmt.Sprintf("Tool number %d searches an index and returns matching documents with scores and snippets.", t),
			"inputSchema": obj{"type": "object", "properties": props, "required": required, "$schema": "https://json-schema.org/draft/2020-12/schema"},
			"annotations": obj{"readOnlyHint": true, "openWorldHint": false},
		})
	}
	b, err := json.Marshal(obj{"tools": tools})
	if err != nil {
		panic(err)
	}
	return b
}

// hashListingJCS does the same work as HashListing with gowebpki/jcs: split the
// page, canonicalize and hash each tool, then build the set hash.
func hashListingJCS(page []byte) (string, error) {
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(page, &res); err != nil {
		return "", err
	}
	type line struct{ name, hash string }
	lines := make([]line, 0, len(res.Tools))
	for _, raw := range res.Tools {
		c, err := jcs.Transform(raw)
		if err != nil {
			return "", err
		}
		var named struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &named); err != nil {
			return "", err
		}
		lines = append(lines, line{named.Name, canon.HashBytes(c)})
	}
	slices.SortFunc(lines, func(a, b line) int { return canon.CompareUTF16(a.name, b.name) })
	var sb strings.Builder
	for i, l := range lines {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(l.name + ":" + l.hash)
	}
	return canon.HashString(sb.String()), nil
}

// floor is the least any digest of a listing can cost: validate the bytes
// once and hash them once.
func floor(page []byte) bool {
	ok := json.Valid(page)
	sha256.Sum256(page)
	return ok
}

func hashListingOurs(page []byte) (string, error) {
	l, err := contract.DefaultLimits().HashListing(contract.KindTool, page)
	if err != nil {
		return "", err
	}
	return l.SetDigest(), nil
}

// BenchmarkListingDigest measures all per-tool digests plus the set digest of
// a 100-tool × 20-parameter listing (~600 KB) and, in the same run, the same
// work with gowebpki/jcs and the floor (json.Valid + one SHA-256), reporting
// speedup-vs-gowebpki (jcs time / ours) and cost-vs-floor (ours / floor).
func BenchmarkListingDigest(b *testing.B) {
	page := benchListing(100, 20)
	want, err := hashListingOurs(page)
	if err != nil {
		b.Fatal(err)
	}
	if got, err := hashListingJCS(page); err != nil || got != want {
		b.Fatalf("gowebpki/jcs set digest %s (%v) differs from ours %s", got, err, want)
	}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := hashListingOurs(page); err != nil {
			b.Fatal(err)
		}
	}
	ours := benchutil.Elapsed(b)
	b.StopTimer()
	nsJCS := benchutil.NsPerOp(b.N, func() { _, _ = hashListingJCS(page) })
	nsFloor := benchutil.NsPerOp(b.N, func() { floor(page) })
	b.ReportMetric(nsJCS/ours, "speedup-vs-gowebpki")
	b.ReportMetric(ours/nsFloor, "cost-vs-floor")
	b.ReportMetric(float64(len(page))/1024, "listing-KiB")
}

// The baselines on their own, for their MB/s.
func BenchmarkListingDigestGowebpkiJCS(b *testing.B) {
	page := benchListing(100, 20)
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		if _, err := hashListingJCS(page); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListingDigestFloor(b *testing.B) {
	page := benchListing(100, 20)
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		floor(page)
	}
}
