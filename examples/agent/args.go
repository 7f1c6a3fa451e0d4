package main

import (
	"encoding/json"
)

// argumentsFor makes up arguments that satisfy an input schema's required
// properties, the way a planner fills in what it must: the first enum
// value, the minimum of a number, a short string. It reads the schema as
// JSON whatever the SDK's type for it.
func argumentsFor(schema any) map[string]any {
	var s jsonSchema
	if raw, err := json.Marshal(schema); err == nil {
		_ = json.Unmarshal(raw, &s)
	}
	args := map[string]any{}
	for _, name := range s.Required {
		args[name] = valueFor(s.Properties[name], 0)
	}
	return args
}

type jsonSchema struct {
	Type       any                    `json:"type"`
	Properties map[string]*jsonSchema `json:"properties"`
	Required   []string               `json:"required"`
	Enum       []any                  `json:"enum"`
	Const      any                    `json:"const"`
	Default    any                    `json:"default"`
	Minimum    *float64               `json:"minimum"`
	Items      *jsonSchema            `json:"items"`
	MinItems   int                    `json:"minItems"`
}

func valueFor(s *jsonSchema, depth int) any {
	if s == nil {
		return "example"
	}
	switch {
	case s.Const != nil:
		return s.Const
	case len(s.Enum) > 0:
		return s.Enum[0]
	case s.Default != nil:
		return s.Default
	}
	typ, _ := s.Type.(string)
	if types, ok := s.Type.([]any); ok && len(types) > 0 {
		typ, _ = types[0].(string)
	}
	switch typ {
	case "integer", "number":
		if s.Minimum != nil {
			return *s.Minimum
		}
		return 1
	case "boolean":
		return true
	case "array":
		items := []any{}
		for range s.MinItems {
			items = append(items, valueFor(s.Items, depth+1))
		}
		return items
	case "object":
		obj := map[string]any{}
		if depth < 4 {
			for _, name := range s.Required {
				obj[name] = valueFor(s.Properties[name], depth+1)
			}
		}
		return obj
	case "null":
		return nil
	}
	return "example"
}
