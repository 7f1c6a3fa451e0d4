package interceptor

import (
	"net/url"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"

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

// ServerURL is the mcpdrift.server.url of the endpoint: the URL without
// credentials, query or fragment, or "stdio:" and the command line (argv
// joined by spaces), or "" for pipes.
func (e Endpoint) ServerURL() string {
	switch {
	case e.URL != "":
		return RedactURL(e.URL)
	case len(e.Command) > 0:
		return "stdio:" + strings.Join(e.Command, " ")
	}
	return ""
}

// RedactURL drops credentials, query and fragment from a URL, so nothing
// secret (tokens in query strings, basic-auth users) lands in telemetry.
// Unparseable input yields "".
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// attributes are the network attributes of the endpoint.
func (e Endpoint) attributes() []attribute.KeyValue {
	switch {
	case e.URL != "":
		u, err := url.Parse(e.URL)
		if err != nil || u.Host == "" {
			return []attribute.KeyValue{attribute.String(semconv.NetworkTransport, semconv.NetworkTransportTCP)}
		}
		kv := []attribute.KeyValue{
			attribute.String(semconv.NetworkTransport, semconv.NetworkTransportTCP),
			attribute.String(semconv.NetworkProtocolName, "http"),
			attribute.String(semconv.ServerAddress, u.Hostname()),
		}
		if port := portOf(u); port > 0 {
			kv = append(kv, attribute.Int(semconv.ServerPort, port))
		}
		return kv
	case len(e.Command) > 0 || e.Pipe:
		return []attribute.KeyValue{attribute.String(semconv.NetworkTransport, semconv.NetworkTransportPipe)}
	}
	return nil
}

func portOf(u *url.URL) int {
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		return n
	}
	switch u.Scheme {
	case "https":
		return 443
	case "http":
		return 80
	}
	return 0
}
