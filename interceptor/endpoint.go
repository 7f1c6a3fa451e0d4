package interceptor

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// Endpoint says how a session reaches its server. Front-ends fill it in from
// the transport they wrap.
type Endpoint struct {
	// URL is the HTTP endpoint (Streamable HTTP, or the legacy SSE stream URL).
	URL string
	// Command is the argv of a stdio server.
	Command []string
	// Pipe is set for transports over pipes with no command or URL to name
	// the server (in-memory, IO); give WithServerURL to name it.
	Pipe bool
}

// ServerURL is the mcpdrift.server.url of the endpoint (serverid.URL): the
// URL without credentials, query or fragment, or "stdio:" and the command
// line, or "" for pipes.
func (e Endpoint) ServerURL() string { return serverid.URL(e.URL, e.Command) }

// attributes are the network attributes of the endpoint.
func (e Endpoint) attributes() []attribute.KeyValue {
	switch {
	case e.URL != "":
		host, port := serverid.HostPort(e.URL)
		if host == "" {
			return []attribute.KeyValue{attribute.String(semconv.NetworkTransport, semconv.NetworkTransportTCP)}
		}
		kv := []attribute.KeyValue{
			attribute.String(semconv.NetworkTransport, semconv.NetworkTransportTCP),
			attribute.String(semconv.NetworkProtocolName, "http"),
			attribute.String(semconv.ServerAddress, host),
		}
		if port > 0 {
			kv = append(kv, attribute.Int(semconv.ServerPort, port))
		}
		return kv
	case len(e.Command) > 0 || e.Pipe:
		return []attribute.KeyValue{attribute.String(semconv.NetworkTransport, semconv.NetworkTransportPipe)}
	}
	return nil
}
