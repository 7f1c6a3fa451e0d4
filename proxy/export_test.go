package proxy

import (
	"github.com/mcpdrift/mcpdrift/proxy/internal/httpproxy"
	"github.com/mcpdrift/mcpdrift/proxy/internal/upstream"
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
	Route              = httpproxy.Route
	OwnConnection      = httpproxy.OwnConnection
	Pooled             = httpproxy.Pooled
	OAuthStoreFile     = upstream.OAuthStoreFile
)
