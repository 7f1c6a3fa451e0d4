// Package benchdata generates the listings the diff benchmarks compare, so
// that the contract benchmark (diff alone) and the witness benchmark (diff
// with witnesses) measure the same pair.
package benchdata

import (
	"encoding/json"
	"fmt"
	"strings"
)

// DriftListing generates a 100-tool tools/list result whose input schemas
// nest objects depth levels deep with width parameters per level (a $ref'd
// definition at the bottom). With changed set, 10 tools differ at the
// deepest level: a number narrowed to integer, a new required parameter,
// an enum value removed and a reworded description. Size grows linearly
// with width.
func DriftListing(width, depth int, changed bool) []byte {
	return driftListing(width, depth, changed, false)
}

// DistinctDriftListing is DriftListing with every tool's schema made
// unique (its enum names the tool), so that no work done for one changed
// tool can be reused for another.
func DistinctDriftListing(width, depth int, changed bool) []byte {
	return driftListing(width, depth, changed, true)
}

func driftListing(width, depth int, changed, distinct bool) []byte {
	type obj = map[string]any
	defs := make([]string, 0, 100)
	for t := range 100 {
		deep := t%10 == 0 && changed
		modes := []string{"fast", "slow", "exact"}
		if distinct {
			modes = []string{fmt.Sprintf("fast_%d", t), "slow", "exact"}
		}
		if deep {
			modes = modes[:2]
		}
		leaf := obj{"type": "object", "properties": obj{
			"score": obj{"type": map[bool]string{false: "number", true: "integer"}[deep], "description": "Score threshold"},
			"mode":  obj{"type": "string", "enum": modes},
		}, "required": []string{"mode"}}
		if deep {
			leaf["properties"].(obj)["cursor"] = obj{"type": "string"}
			leaf["required"] = []string{"mode", "cursor"}
		}
		level := obj{"$ref": "#/$defs/Leaf"}
		for d := range depth {
			props := obj{"next": level}
			for w := range width {
				desc := fmt.Sprintf("Parameter %d at level %d controls filtering.", w, d)
				if deep && d == 0 && w == 0 {
					desc = "Parameter 0 at the deepest level filters results."
				}
				props[fmt.Sprintf("p%d_%d", d, w)] = obj{"type": "string", "description": desc, "maxLength": 256}
			}
			level = obj{"type": "object", "properties": props, "required": []string{"next"}, "additionalProperties": false}
		}
		level["$defs"] = obj{"Leaf": leaf}
		b, _ := json.Marshal(obj{"name": fmt.Sprintf("tool_%03d", t), "description": "Searches an index.", "inputSchema": level})
		defs = append(defs, string(b))
	}
	return []byte(`{"tools":[` + strings.Join(defs, ",") + `]}`)
}
