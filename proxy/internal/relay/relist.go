package relay

import (
	"context"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/proxy/gate"
)

// The proxy lists tools itself, on its own request ids: when the server
// announces a change (a call waits for that relist, so it is judged on
// what the server now serves) and every RelistInterval.

// wantRelist asks the relist loop for a relist (coalesced).
func (r *Relay) wantRelist(announced bool) {
	select {
	case r.relist <- announced:
	default:
	}
}

// announceRelist marks a relist pending (the server said its tools changed)
// and asks for it.
func (r *Relay) announceRelist() {
	r.relistMu.Lock()
	if r.relistWait == nil {
		r.relistWait = make(chan struct{})
	}
	r.relistGen++
	r.relistMu.Unlock()
	r.wantRelist(true)
}

// relisted ends the pending relist if no announcement came since gen.
func (r *Relay) relisted(gen uint64) {
	r.relistMu.Lock()
	defer r.relistMu.Unlock()
	if r.relistWait == nil {
		return
	}
	if r.relistGen != gen {
		r.wantRelist(true) // changed again meanwhile: list once more
		return
	}
	close(r.relistWait)
	r.relistWait = nil
}

// awaitRelist waits (at most UpstreamTimeout) for a pending relist.
func (r *Relay) awaitRelist() {
	r.relistMu.Lock()
	ch := r.relistWait
	r.relistMu.Unlock()
	if ch == nil {
		return
	}
	t := time.NewTimer(r.cfg.UpstreamTimeout)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

// RelistLoop lists tools on the proxy's own request ids when the server
// announces a change, and every RelistInterval.
func (r *Relay) RelistLoop(ctx context.Context) {
	var tick <-chan time.Time
	if r.cfg.RelistInterval > 0 {
		t := time.NewTicker(r.cfg.RelistInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		announced := false
		select {
		case <-ctx.Done():
			return
		case announced = <-r.relist:
		case <-tick:
		}
		r.relistMu.Lock()
		gen := r.relistGen
		r.relistMu.Unlock()
		if r.ready.Load() || (r.sess.Established() && r.sess.ProtocolVersion() >= mcpwire.ProtocolStateless) {
			r.RelistTools(ctx, !announced)
		}
		r.relisted(gen)
	}
}

// RelistTools lists the server's tools on the proxy's own ids and updates
// the gate. When notify is set and a definition changed, the agent is told
// (notifications/tools/list_changed), as the server would have.
func (r *Relay) RelistTools(ctx context.Context, notify bool) bool {
	current, err := r.listTools(ctx)
	if err != nil {
		return false
	}
	changed := r.gate.Learn(current)
	if changed && notify {
		r.notifyListChanged()
	}
	return changed
}

// notifyListChanged tells the agent its listing is stale, and the session.
func (r *Relay) notifyListChanged() {
	frame := []byte(`{"jsonrpc":"2.0","method":"` + mcpwire.NotifyToolsListChanged + `"}`)
	r.ToAgent(frame)
	r.sess.ReceiveFrame(frame)
}

// listTools reads the server's whole tools listing on the proxy's own ids.
func (r *Relay) listTools(ctx context.Context) (gate.Definitions, error) {
	return gate.ListTools(ctx, r.cfg.Limits, true, r.Call)
}
