package streamhttp

import (
	"net/http"
	"testing"
)

func TestParamHeaderRules(t *testing.T) {
	for _, tc := range []struct {
		name, def, args string
		want            map[string]string // nil: no binding at all
	}{
		{"plain", `{"inputSchema":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`, `{"a":"x y"}`, map[string]string{"Mcp-Param-A": "x y"}},
		{"sentinel collision", `{"inputSchema":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`, `{"a":"=?base64?eA==?="}`, map[string]string{"Mcp-Param-A": "=?base64?PT9iYXNlNjQ/ZUE9PT89?="}},
		{"control character", `{"inputSchema":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`, `{"a":"a\nb"}`, map[string]string{"Mcp-Param-A": "=?base64?YQpi?="}},
		{"boolean and integer", `{"inputSchema":{"properties":{"b":{"type":"boolean","x-mcp-header":"B"},"n":{"type":"integer","x-mcp-header":"N"}}}}`, `{"b":false,"n":7.0}`, map[string]string{"Mcp-Param-B": "false", "Mcp-Param-N": "7"}},
		{"fraction and unsafe integer omitted", `{"inputSchema":{"properties":{"n":{"type":"integer","x-mcp-header":"N"},"m":{"type":"integer","x-mcp-header":"M"}}}}`, `{"n":1.5,"m":9007199254740993}`, map[string]string{}},
		{"null and object omitted", `{"inputSchema":{"properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"B"}}}}`, `{"a":null,"b":{"x":1}}`, map[string]string{}},
		{"not a token", `{"inputSchema":{"properties":{"a":{"type":"string","x-mcp-header":"A B"}}}}`, `{"a":"x"}`, nil},
		{"header injection", `{"inputSchema":{"properties":{"a":{"type":"string","x-mcp-header":"A\r\nX-Evil: 1"}}}}`, `{"a":"x"}`, nil},
		{"duplicate", `{"inputSchema":{"properties":{"a":{"type":"string","x-mcp-header":"K"},"b":{"type":"string","x-mcp-header":"k"}}}}`, `{"a":"x"}`, nil},
		{"number type", `{"inputSchema":{"properties":{"a":{"type":"number","x-mcp-header":"A"}}}}`, `{"a":1}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := ParamBindings([]byte(tc.def))
			if tc.want == nil {
				if b != nil {
					t.Fatalf("bindings %v for an invalid definition", b)
				}
				return
			}
			h := http.Header{}
			SetParamHeaders(h, b, []byte(tc.args))
			if len(h) != len(tc.want) {
				t.Errorf("headers %v, want %v", h, tc.want)
			}
			for k, v := range tc.want {
				if h.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, h.Get(k), v)
				}
			}
		})
	}
}
