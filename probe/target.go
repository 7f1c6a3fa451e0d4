package probe

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
)

// Transport selects how the probe talks to a server.
type Transport string

// Transports. Auto (the default for a URL) follows the MCP backwards
// compatibility procedure: Streamable HTTP first, then the legacy HTTP+SSE
// transport when the POST is refused with 400, 404 or 405.
const (
	TransportAuto           Transport = "auto"
	TransportStreamableHTTP Transport = contract.TransportStreamableHTTP
	TransportSSE            Transport = contract.TransportSSE
	TransportStdio          Transport = contract.TransportStdio
)

// DefaultClientCapabilities is what the probe declares unless configured
// otherwise: what a typical agent declares (roots, sampling, elicitation).
// Servers may list different tools to clients that declare different
// capabilities, so the declaration is fixed and recorded in the snapshot.
const DefaultClientCapabilities = `{"roots":{},"sampling":{},"elicitation":{}}`

// Target is one server to probe: an HTTP endpoint (URL) or a stdio command.
type Target struct {
	// Name is the configured logical server name, recorded in the snapshot.
	Name string

	// URL is the MCP endpoint for HTTP transports. Credentials and query in
	// it are treated as secrets: never logged, never in a snapshot.
	URL string
	// Headers are sent on every HTTP request (bearer tokens, API keys).
	// Their values are treated as secrets.
	Headers http.Header
	// TLS configures the probe's own HTTP client; ignored with HTTPClient.
	TLS *tls.Config
	// HTTPClient, when set, is used as is (a collector receiver passes the
	// client built by confighttp, with its auth extensions and TLS). The
	// probe bounds every request with its own timeouts either way. Header
	// values its transport adds (an auth extension's token, cookies) are
	// recorded as they are written and treated as secrets too.
	HTTPClient *http.Client
	// Secrets are more values never to show: credentials that HTTPClient
	// holds (a proxy password, configured headers) that the probe could
	// otherwise only learn once they were sent.
	Secrets []string

	// Command and Args start a stdio server. Args are recorded in the
	// snapshot: pass secrets in Env, never in Args.
	Command string
	Args    []string
	// Env entries ("KEY=value") are added to the probe's own environment
	// for the child. Their values are treated as secrets.
	Env []string
	// Dir is the child's working directory (default: the probe's).
	Dir string

	// Transport is auto (default for URL), streamable-http, sse or stdio
	// (default for Command).
	Transport Transport

	// ClientCapabilities is the JSON object the probe declares; empty means
	// DefaultClientCapabilities.
	ClientCapabilities json.RawMessage
}

// transport returns the configured transport with defaults applied.
func (t *Target) transport() Transport {
	switch {
	case t.Transport != "":
		return t.Transport
	case t.Command != "":
		return TransportStdio
	default:
		return TransportAuto
	}
}

// Validate reports a target that cannot be probed.
func (t *Target) Validate() error {
	var errs []error
	switch tr := t.transport(); tr {
	case TransportStdio:
		if t.Command == "" {
			errs = append(errs, errors.New("stdio transport needs a command"))
		}
		if t.URL != "" {
			errs = append(errs, errors.New("a target has a URL or a command, not both"))
		}
		for _, kv := range t.Env {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
				errs = append(errs, fmt.Errorf("env entry %q is not KEY=value", contract.TruncateBytes(k, 40)))
			}
		}
	case TransportAuto, TransportStreamableHTTP, TransportSSE:
		if t.Command != "" {
			errs = append(errs, fmt.Errorf("transport %s needs a URL, not a command", tr))
		}
		for name, vs := range t.Headers {
			for _, v := range vs {
				if err := ValidateHeader(name, v); err != nil {
					errs = append(errs, err)
				}
			}
		}
		u, err := url.Parse(t.URL)
		switch {
		case t.URL == "":
			errs = append(errs, errors.New("an HTTP target needs a URL"))
		case err != nil:
			errs = append(errs, fmt.Errorf("invalid URL %s", serverid.Display(t.URL)))
		case u.Scheme != "http" && u.Scheme != "https":
			errs = append(errs, fmt.Errorf("URL scheme must be http or https, not %q", u.Scheme))
		case u.Host == "":
			errs = append(errs, errors.New("URL has no host"))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown transport %q (want auto, streamable-http, sse or stdio)", tr))
	}
	if len(t.ClientCapabilities) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(t.ClientCapabilities, &obj); err != nil || obj == nil {
			errs = append(errs, errors.New("client capabilities must be a JSON object"))
		}
	}
	return errors.Join(errs...)
}

// ValidateHeader reports a header net/http would refuse to send (a name
// that is not a token; a value with CR, LF or another control character),
// which would make every probe fail. The error names the header, never its
// value (a secret).
func ValidateHeader(name, value string) error {
	switch {
	case !httpguts.ValidHeaderFieldName(name):
		return fmt.Errorf("header name %s is not a valid HTTP token", contract.QuoteForDisplay(contract.TruncateBytes(name, 40)))
	case !httpguts.ValidHeaderFieldValue(value):
		return fmt.Errorf("header %s: the value holds CR, LF or another control character", name)
	}
	return nil
}

// clientCapabilities returns the declared capabilities, compacted.
func (t *Target) clientCapabilities() json.RawMessage {
	raw := t.ClientCapabilities
	if len(raw) == 0 {
		raw = json.RawMessage(DefaultClientCapabilities)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw // Validate refuses it before a probe starts
	}
	return b.Bytes()
}

// server returns the snapshot's server identity for this target.
func (t *Target) server(r *redactor, transport string) contract.Server {
	s := contract.Server{Name: t.Name, Transport: transport}
	if t.transport() == TransportStdio {
		s.Command = append(s.Command, r.text(t.Command))
		for _, a := range t.Args {
			s.Command = append(s.Command, r.text(a))
		}
		return s
	}
	s.URL = serverid.RedactURL(t.URL)
	return s
}
