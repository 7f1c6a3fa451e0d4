// Package config is what `mcpdrift proxy` is told: the flags of every mode,
// their validation and defaults (the proxy package re-exports it).
package config

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/proxy/gate"
)

// Upstream transports (--upstream-transport).
const (
	// TransportAuto tries Streamable HTTP and falls back to HTTP+SSE when
	// the server refuses the initialize POST with 400, 404 or 405, as the
	// specification's backwards-compatibility section tells clients to.
	TransportAuto           = "auto"
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse" // the deprecated HTTP+SSE transport of 2024-11-05
)

// The gate's modes (--on-stale, --lock-mode).
const (
	OnStaleObserve    = gate.OnStaleObserve
	OnStaleRefuse     = gate.OnStaleRefuse
	LockHide          = gate.LockHide
	LockRefuseSession = gate.LockRefuseSession
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
	// StaleWindow refuses once the first call to a tool within it after the
	// agent was served a changed definition of the tool (a change its
	// arguments cannot show); 0 off.
	StaleWindow time.Duration
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
	if c.RelistInterval < 0 || c.ShutdownGrace < 0 || c.UpstreamTimeout < 0 || c.StaleWindow < 0 {
		return errors.New("durations must not be negative")
	}
	if c.Limits != (contract.Limits{}) {
		return c.Limits.Validate()
	}
	return nil
}

// Complete fills in the defaults.
func (c *Config) Complete() {
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

// Ready validates c, fills in the defaults and returns the gate c's flags
// ask for: what every mode does first.
func (c *Config) Ready() (*gate.Gate, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c.Complete()
	return c.Gate()
}

// Gate is a gate as c's flags ask for it.
func (c *Config) Gate() (*gate.Gate, error) {
	o := gate.Options{Refuse: c.OnStale == OnStaleRefuse, LockMode: c.LockMode, StaleWindow: c.StaleWindow}
	if c.Lock != "" {
		lock, err := gate.ReadLock(c.Lock, c.Limits)
		if err != nil {
			return nil, err
		}
		o.Lock = lock
	}
	return gate.New(o), nil
}
