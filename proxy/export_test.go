package proxy

import (
	"io"
	"net/http"
	"net/url"
	"time"
)

// SetSessionBounds sets the gate's session bounds (tests only).
func (h *Handler) SetSessionBounds(idle time.Duration, max int) {
	h.gate.mu.Lock()
	h.gate.sessions.Idle, h.gate.sessions.Max = idle, max
	h.gate.mu.Unlock()
}

// GateSessions is the number of sessions the gate keeps state for.
func (h *Handler) GateSessions() int {
	h.gate.mu.Lock()
	defer h.gate.mu.Unlock()
	return h.gate.sessions.Len()
}

// PlainForwarder is the HTTP → HTTP proxy without its tap: the forwarder
// over the same upstream transport, recording nothing (a benchmark's
// floor: what the second HTTP exchange costs with this code).
func PlainForwarder(upstream string) (http.Handler, func()) {
	cfg := Config{Upstream: upstream}
	cfg.complete()
	up, _ := url.Parse(upstream)
	base := &streamTransport{base: upstreamTransport(&cfg)}
	return &forwarder{target: up, transport: base, unreachable: "unreachable"}, base.CloseIdleConnections
}

// StreamTransport is the HTTP → HTTP proxy's upstream client for cfg,
// with the http.Transport under it to adjust (tests only).
func StreamTransport(cfg Config) (http.RoundTripper, *http.Transport) {
	cfg.complete()
	st := &streamTransport{base: upstreamTransport(&cfg)}
	return st, st.base
}

// Standing reports whether the upstream client gives req a connection of
// its own.
func Standing(rt http.RoundTripper, req *http.Request) bool {
	return rt.(*streamTransport).standing(req)
}

// OwnConnection reports whether a response body reads from a connection
// of its own.
func OwnConnection(body io.ReadCloser) bool {
	_, ok := body.(*streamBody)
	return ok
}
