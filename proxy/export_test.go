package proxy

import (
	"net/http"

	"github.com/mcpdrift/mcpdrift/proxy/internal/h1client"
	"github.com/mcpdrift/mcpdrift/proxy/internal/httpproxy"
)

// The modes' test hooks, for this package's tests.
var (
	SetSessionBounds   = httpproxy.SetSessionBounds
	SetClientIdle      = httpproxy.SetClientIdle
	SetClientKeepAlive = httpproxy.SetClientKeepAlive
	SetHold            = httpproxy.SetHold
	GateSessions       = httpproxy.GateSessions
	PlainForwarder     = httpproxy.PlainForwarder
	StreamTransport    = httpproxy.StreamTransport
	OwnConnection      = h1client.OwnConnection
	Pooled             = h1client.Pooled
)

// Route names the way the upstream client rt sends req (h1client.Transport.Route).
func Route(rt http.RoundTripper, req *http.Request) string {
	return rt.(*h1client.Transport).Route(req)
}
