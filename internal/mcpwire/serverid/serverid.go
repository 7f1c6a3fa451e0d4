// Package serverid is server identity, the key on which spans and probes
// meet (docs/design.md "Server identity"): how the receiver, the CLI, the
// interceptor, the proxy and the processor spell a server's
// mcpdrift.server.url, strip secrets from a URL and reduce it to what
// matching compares. It has exactly one implementation, this one.
package serverid

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// URL is the mcpdrift.server.url of a server reached at endpoint (an HTTP
// URL) or started as command (argv): the endpoint without credentials,
// query or fragment, else Stdio(command), else "".
func URL(endpoint string, command []string) string {
	if endpoint != "" {
		return RedactURL(endpoint)
	}
	return Stdio(command)
}

// Stdio is the mcpdrift.server.url of a stdio server: "stdio:" and the
// program and its arguments joined by spaces (never its environment, where
// secrets belong), or "" without a program.
func Stdio(argv []string) string {
	if len(argv) == 0 || argv[0] == "" {
		return ""
	}
	return "stdio:" + strings.Join(argv, " ")
}

// RedactURL returns raw without credentials, query or fragment, so nothing
// secret (a token in the query, a basic-auth user) reaches telemetry,
// snapshots, errors or logs. Input that does not parse yields "".
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// Display is RedactURL for messages: input that does not parse reads
// "(invalid URL)" rather than nothing, and is never quoted.
func Display(raw string) string {
	if s := RedactURL(raw); s != "" || raw == "" {
		return s
	}
	return "(invalid URL)"
}

// Normalize reduces an endpoint URL to what matching compares: scheme, host,
// port and path, without credentials, query or fragment, lower-case scheme
// and host, no default port, no trailing slash. Anything that is not an
// absolute URL (a Stdio form) is only trimmed.
func Normalize(raw string) string {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return raw
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if d := defaultPort(scheme); d != 0 && port == strconv.Itoa(d) {
		port = ""
	}
	hostport := host
	if port != "" {
		hostport = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		hostport = "[" + host + "]"
	}
	return scheme + "://" + hostport + strings.TrimRight(u.EscapedPath(), "/")
}

// HostPort returns server.address and server.port of an endpoint URL, the
// port made explicit for http(s) and ws(s); "", 0 when raw has no host.
func HostPort(raw string) (host string, port int) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", 0
	}
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	} else {
		port = defaultPort(strings.ToLower(u.Scheme))
	}
	return u.Hostname(), port
}

func defaultPort(scheme string) int {
	switch scheme {
	case "http", "ws":
		return 80
	case "https", "wss":
		return 443
	}
	return 0
}
