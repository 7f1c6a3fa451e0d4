// Package streamhttp is what the proxy's two HTTP modes share of
// Streamable HTTP beyond the body: the session and protocol headers, the
// protocol members a 2026-07-28 request carries in _meta, the Mcp-Param-*
// headers of x-mcp-header arguments, and sending a request again.
package streamhttp

import (
	"bytes"
	"encoding/base64"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// Since 2026-07-28 a tool may mark input properties with "x-mcp-header":
// NAME, and a Streamable HTTP client must mirror those arguments of a
// tools/call into Mcp-Param-NAME headers, so gateways can route on them
// without reading the body; servers reject a call whose headers and body
// disagree (a missing header included). An agent behind the stdio → HTTP
// proxy speaks stdio, where the annotation means nothing, so the proxy adds
// the headers itself, from the definitions the agent was served.

const (
	ParamHeaderPrefix = "Mcp-Param-"
	base64Open        = "=?base64?"
	base64Close       = "?="
	maxSafeInteger    = 1<<53 - 1
)

// ParamBinding is one annotated property: its path from the arguments
// object, and the header it is mirrored into.
type ParamBinding struct {
	path   []string
	header string
}

// ParamBindings reads a tool definition's x-mcp-header annotations. A
// definition that breaks the rules (a name that is not an HTTP token, a
// duplicate, a non-primitive property) gets none: a conforming agent does
// not call it, and the server would refuse whatever the proxy made up.
func ParamBindings(def []byte) []ParamBinding {
	if !bytes.Contains(def, []byte("x-mcp-header")) {
		return nil
	}
	var out []ParamBinding
	seen := map[string]bool{}
	if !collectBindings(jsonwire.Lookup(jsonwire.Lookup(def, "inputSchema"), "properties"), nil, seen, &out, 0) {
		return nil
	}
	return out
}

func collectBindings(props []byte, prefix []string, seen map[string]bool, out *[]ParamBinding, depth int) bool {
	if depth > 32 {
		return false
	}
	o, ok := jsonwire.NewObject(props)
	if !ok {
		return true
	}
	for {
		m, ok := o.Next()
		if !ok {
			return !o.Err()
		}
		name, ok := m.Name()
		if !ok {
			return false
		}
		path := append(append([]string(nil), prefix...), name)
		if raw := jsonwire.Lookup(m.Value, "x-mcp-header"); raw != nil {
			header, ok := jsonwire.String(raw)
			typ, _ := jsonwire.String(jsonwire.Lookup(m.Value, "type"))
			if !ok || !isToken(header) || seen[strings.ToLower(header)] || (typ != "string" && typ != "integer" && typ != "boolean") {
				return false
			}
			seen[strings.ToLower(header)] = true
			*out = append(*out, ParamBinding{path: path, header: header})
		}
		if nested := jsonwire.Lookup(m.Value, "properties"); nested != nil {
			if !collectBindings(nested, path, seen, out, depth+1) {
				return false
			}
		}
	}
}

// SetParamHeaders mirrors a tools/call's annotated arguments (args, raw)
// into h. An argument that is absent, null or not a primitive gets no
// header.
func SetParamHeaders(h http.Header, bindings []ParamBinding, args []byte) {
	for _, b := range bindings {
		v := args
		for _, k := range b.path {
			if v = jsonwire.Lookup(v, k); v == nil {
				break
			}
		}
		if s, ok := headerValue(v); ok {
			h.Set(ParamHeaderPrefix+b.header, s)
		}
	}
}

// headerValue renders a primitive argument as the header carries it: a
// string as it is, unless it cannot ride as a plain field value (then
// base64 in the =?base64?…?= sentinel), an integer in decimal, a boolean
// as true or false.
func headerValue(raw []byte) (string, bool) {
	switch {
	case len(raw) == 0 || jsonwire.IsNull(raw):
		return "", false
	case raw[0] == '"':
		s, ok := jsonwire.String(raw)
		if !ok {
			return "", false
		}
		if needsBase64(s) {
			return base64Open + base64.StdEncoding.EncodeToString([]byte(s)) + base64Close, true
		}
		return s, true
	case string(raw) == "true" || string(raw) == "false":
		return string(raw), true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
		return "", false
	}
	return strconv.FormatInt(int64(f), 10), true
}

// needsBase64 reports whether s cannot be sent as a plain header value:
// leading or trailing whitespace, a character outside visible ASCII and
// space, or a plain value that reads as the sentinel itself.
func needsBase64(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return true
		}
	}
	return strings.HasPrefix(s, base64Open) && strings.HasSuffix(s, base64Close)
}

// isToken reports whether s is an HTTP field-name token (RFC 9110 5.1).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
