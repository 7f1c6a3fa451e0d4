package proxy

import (
	"net/http"
	"net/url"
)

// PlainForwarder is the HTTP → HTTP proxy without its tap: the forwarder
// over the same upstream transport, recording nothing (a benchmark's
// floor: what the second HTTP exchange costs with this code).
func PlainForwarder(upstream string) (http.Handler, func()) {
	cfg := Config{Upstream: upstream}
	cfg.complete()
	up, _ := url.Parse(upstream)
	base := upstreamTransport(&cfg)
	return &forwarder{target: up, transport: base, unreachable: "unreachable"}, base.CloseIdleConnections
}
