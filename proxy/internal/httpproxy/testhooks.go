package httpproxy

import (
	"net/http"
	"net/url"
	"time"

	"github.com/mcpdrift/mcpdrift/proxy/internal/config"
	"github.com/mcpdrift/mcpdrift/proxy/internal/h1client"
)

// Hooks for the proxy module's tests: the package is internal, so nothing
// outside the module reaches them, and they are functions, not methods, so
// proxy.Handler (an alias of Handler) does not show them.

// SetSessionBounds sets the gate's session bounds (tests only).
func SetSessionBounds(h *Handler, idle time.Duration, max int) {
	h.gate.mu.Lock()
	h.gate.sessions.Idle, h.gate.sessions.Max = idle, max
	h.gate.mu.Unlock()
}

// SetClientIdle sets how long the handler waits for more of a request
// body (tests only).
func SetClientIdle(h *Handler, d time.Duration) { h.idle = d }

// SetClientKeepAlive sets how long Serve keeps an idle client connection,
// until the returned function restores it (tests only).
func SetClientKeepAlive(d time.Duration) (restore func()) {
	old := clientKeepAlive
	clientKeepAlive = d
	return func() { clientKeepAlive = old }
}

// SetHold sets how long the forwarder holds written bytes for what follows
// them and calls f each time it holds some, until the returned function
// restores both (tests only).
func SetHold(wait time.Duration, f func()) (restore func()) {
	oldWait, oldHook := headerWait, onHold
	headerWait, onHold = wait, f
	return func() { headerWait, onHold = oldWait, oldHook }
}

// GateSessions is the number of sessions the gate keeps state for.
func GateSessions(h *Handler) int {
	h.gate.mu.Lock()
	defer h.gate.mu.Unlock()
	return h.gate.sessions.Len()
}

// PlainForwarder is the HTTP → HTTP proxy without its tap: the forwarder
// over the same upstream transport, recording nothing (a benchmark's
// floor: what the second HTTP exchange costs with this code).
func PlainForwarder(upstream string) (http.Handler, func()) {
	cfg := config.Config{Upstream: upstream}
	cfg.Complete()
	up, _ := url.Parse(upstream)
	base := h1client.New(upstreamTransport(&cfg))
	return &forwarder{target: up, transport: base, unreachable: "unreachable"}, base.Close
}

// StreamTransport is the HTTP → HTTP proxy's upstream client for cfg,
// with the http.Transport under it to adjust (tests only).
func StreamTransport(cfg config.Config) (http.RoundTripper, *http.Transport) {
	cfg.Complete()
	st := h1client.New(upstreamTransport(&cfg))
	return st, st.Base()
}
