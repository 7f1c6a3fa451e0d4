package streamhttp

import (
	"mime"
	"net/http"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
)

// Headers of the Streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderMethod          = "Mcp-Method" // 2026-07-28: the method, so gateways route without reading the body
	HeaderName            = "Mcp-Name"   // 2026-07-28: the tool, prompt or resource a request names
	HeaderLastEventID     = "Last-Event-ID"
)

// ProtocolMeta keeps the protocol's own members of a _meta object.
func ProtocolMeta(meta []byte) []byte {
	out := []byte{'{'}
	o, _ := jsonwire.NewObject(meta)
	for {
		m, ok := o.Next()
		if !ok {
			break
		}
		for _, k := range []string{mcpwire.MetaProtocolVersion, mcpwire.MetaClientInfo, mcpwire.MetaClientCapabilities} {
			if jsonwire.KeyIs(m.Key, k) {
				if len(out) > 1 {
					out = append(out, ',')
				}
				out = append(jsonwire.AppendString(out, k), ':')
				out = append(out, m.Value...)
			}
		}
	}
	return append(out, '}')
}

// WithMeta is the JSON object params with "_meta": meta as its first member.
func WithMeta(params, meta []byte) []byte {
	i := jsonwire.SkipSpace(params, 0)
	if i >= len(params) || params[i] != '{' {
		return params
	}
	out := make([]byte, 0, len(params)+len(meta)+10)
	out = append(out, params[:i+1]...)
	out = append(append(out, `"_meta":`...), meta...)
	if j := jsonwire.SkipSpace(params, i+1); j < len(params) && params[j] != '}' {
		out = append(out, ',')
	}
	return append(out, params[i+1:]...)
}

// IsEventStream reports whether resp is an event stream.
func IsEventStream(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == "text/event-stream"
}
