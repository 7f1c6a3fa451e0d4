package mcpdriftreceiver

import (
	"context"
	"net"
	"net/http/httptrace"
	"sync"
)

// withOwnConnections makes a probe's HTTP connections its own: it records
// every connection the probe's requests use (httptrace sees them through
// any wrapping of the collector's HTTP client, which hides the transport's
// CloseIdleConnections) and done closes them once the probe has returned. The
// next probe then opens a new connection, so a load balancer that picks a
// backend per connection picks once per probe rather than once per
// keep-alive, and a mixed fleet is seen. The client must not serve another
// probe meanwhile (a target's probes take turns; samples have clients of
// their own).
func withOwnConnections(ctx context.Context) (_ context.Context, done func()) {
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		mu.Lock()
		defer mu.Unlock()
		conns[info.Conn] = true
	}}
	return httptrace.WithClientTrace(ctx, trace), func() {
		mu.Lock()
		defer mu.Unlock()
		for c := range conns {
			_ = c.Close()
		}
		clear(conns)
	}
}
