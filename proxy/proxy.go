// Package proxy is `mcpdrift proxy`: an MCP proxy that an agent host
// launches (or points at) instead of the server, so agents in any language
// get the interceptor's spans — the definition digest each call was planned
// with, listing staleness, the client session — and an opt-in gate that
// refuses calls planned against a changed or unapproved tool definition,
// with no change to the agent's code. See docs/proxy.md.
//
// Three modes, chosen by Config:
//
//   - stdio → stdio (Command): the proxy starts the server as a child
//     process and relays newline-delimited frames between its own standard
//     input/output and the child's.
//   - stdio → HTTP (Upstream without Listen): a stdio server for the host,
//     speaking Streamable HTTP upstream; it re-initializes on the agent's
//     behalf when the server restarts.
//   - HTTP → HTTP (Listen and Upstream): a reverse proxy for Streamable HTTP.
//
// The MCP bookkeeping (pairing, the per-session listing cache, digests, span
// attributes) is the interceptor's: the proxy feeds an interceptor.Session
// the frames it relays, and the HTTP → HTTP mode runs the interceptor's
// httptap under a reverse proxy.
package proxy

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/proxy/gate"
)

// Stale-gate modes (--on-stale).
const (
	OnStaleObserve = gate.OnStaleObserve // record the stale call, forward it
	OnStaleRefuse  = gate.OnStaleRefuse  // answer it with a STALE_TOOL_SCHEMA tool error, never forward it
)

// Lock modes (--lock-mode).
const (
	LockHide          = gate.LockHide          // unapproved definitions are left out of tools/list; their calls are refused
	LockRefuseSession = gate.LockRefuseSession // a listing with an unapproved definition fails the session
)

// Config is what `mcpdrift proxy` is told on its command line.
type Config struct {
	// Command is the stdio server's argv (stdio → stdio).
	Command []string
	// Upstream is the Streamable HTTP endpoint (stdio → HTTP, HTTP → HTTP).
	Upstream string
	// UpstreamTransport is TransportAuto (the default), TransportStreamableHTTP
	// or TransportSSE (stdio → HTTP only).
	UpstreamTransport string
	// Listen is the address to serve HTTP on (HTTP → HTTP).
	Listen string
	// Header is sent with every upstream request (authorization and the
	// like); it is never logged or recorded.
	Header http.Header
	// OAuth, if set, authorizes the stdio → HTTP proxy with the upstream's
	// authorization server when the upstream asks (a 401); its token then
	// replaces any Authorization in Header.
	OAuth *OAuth

	// ServerName is mcpdrift.server.name; default the server's serverInfo.name.
	ServerName string
	// AgentName is gen_ai.agent.name; default OTEL_SERVICE_NAME, else the
	// initialize clientInfo.name.
	AgentName string
	// InjectTraceContext writes the proxy's span context into the forwarded
	// params._meta; off, frames are relayed byte for byte.
	InjectTraceContext bool

	// OnStale is OnStaleObserve or OnStaleRefuse.
	OnStale string
	// RelistInterval makes the proxy list tools itself this often, for
	// servers that never send notifications/tools/list_changed; 0 never.
	RelistInterval time.Duration
	// Lock is a lock file (a snapshot, as `mcpdrift check --lock` writes):
	// only the tool definitions it holds are approved. Empty: no lock.
	Lock string
	// LockMode is LockHide or LockRefuseSession.
	LockMode string

	// ShutdownGrace is how long the child server has to exit after its
	// standard input closes (then SIGTERM, and as long again before SIGKILL).
	ShutdownGrace time.Duration
	// UpstreamTimeout bounds an upstream HTTP exchange up to its response
	// headers, and the proxy's own requests.
	UpstreamTimeout time.Duration
	// Limits bound what the proxy parses; larger frames are relayed unparsed.
	Limits contract.Limits
}

// Validate reports the first problem with c.
func (c *Config) Validate() error {
	switch {
	case len(c.Command) == 0 && c.Upstream == "":
		return errors.New("give a server command after -- (stdio) or --upstream URL (HTTP)")
	case len(c.Command) > 0 && c.Upstream != "":
		return errors.New("give either a server command or --upstream, not both")
	case c.Listen != "" && c.Upstream == "":
		return errors.New("--listen needs --upstream URL (a stdio server is reached from stdio only)")
	}
	if c.Upstream != "" {
		u, err := url.Parse(c.Upstream)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--upstream must be an http(s) URL")
		}
	}
	if c.OAuth != nil {
		switch {
		case c.Listen != "":
			return errors.New("--oauth is for stdio -> HTTP; the HTTP -> HTTP proxy passes the client's own authorization through")
		case c.Upstream == "":
			return errors.New("--oauth needs --upstream URL")
		case c.OAuth.Open == nil:
			return errors.New("OAuth.Open is required: the user must be shown the authorization URL")
		case c.OAuth.RedirectPort < 0 || c.OAuth.RedirectPort > 65535:
			return fmt.Errorf("--oauth-redirect-port must be a port number, not %d", c.OAuth.RedirectPort)
		case c.OAuth.ClientSecret != "" && c.OAuth.ClientID == "":
			return errors.New("an OAuth client secret needs --oauth-client-id")
		}
	}
	switch c.UpstreamTransport {
	case "", TransportAuto, TransportStreamableHTTP:
	case TransportSSE:
		if c.Listen != "" {
			return errors.New("--upstream-transport sse is for stdio -> HTTP; the HTTP -> HTTP proxy relays Streamable HTTP")
		}
	default:
		return fmt.Errorf("--upstream-transport must be %s, %s or %s, not %q", TransportAuto, TransportStreamableHTTP, TransportSSE, c.UpstreamTransport)
	}
	switch c.OnStale {
	case "", OnStaleObserve, OnStaleRefuse:
	default:
		return fmt.Errorf("--on-stale must be %s or %s, not %q", OnStaleObserve, OnStaleRefuse, c.OnStale)
	}
	switch c.LockMode {
	case "", LockHide, LockRefuseSession:
	default:
		return fmt.Errorf("--lock-mode must be %s or %s, not %q", LockHide, LockRefuseSession, c.LockMode)
	}
	if c.RelistInterval < 0 || c.ShutdownGrace < 0 || c.UpstreamTimeout < 0 {
		return errors.New("durations must not be negative")
	}
	if c.Limits != (contract.Limits{}) {
		return c.Limits.Validate()
	}
	return nil
}

// complete fills in the defaults.
func (c *Config) complete() {
	if c.UpstreamTransport == "" {
		c.UpstreamTransport = TransportAuto
	}
	if c.OnStale == "" {
		c.OnStale = OnStaleObserve
	}
	if c.LockMode == "" {
		c.LockMode = LockHide
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = 5 * time.Second
	}
	if c.UpstreamTimeout == 0 {
		c.UpstreamTimeout = 30 * time.Second
	}
	c.Limits = c.Limits.Complete()
}

// newGate is the gate c's flags ask for.
func newGate(c *Config) (*gate.Gate, error) {
	o := gate.Options{Refuse: c.OnStale == OnStaleRefuse, LockMode: c.LockMode}
	if c.Lock != "" {
		lock, err := gate.ReadLock(c.Lock, c.Limits)
		if err != nil {
			return nil, err
		}
		o.Lock = lock
	}
	return gate.New(o), nil
}
