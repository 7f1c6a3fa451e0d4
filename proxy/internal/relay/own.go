package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/jsonwire"
	"github.com/mcpdrift/mcpdrift/proxy/internal/jsonrpc"
)

// The proxy's own requests to the server (relists, re-initialization), on
// ids no agent uses.

// Call sends a request on the proxy's own id space and waits for its result.
func (r *Relay) Call(ctx context.Context, method string, params []byte) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.UpstreamTimeout)
	defer cancel()
	id, ch := r.own.register()
	defer r.own.forget(id)
	frame := make([]byte, 0, 64+len(params))
	frame = append(frame, `{"jsonrpc":"2.0","id":`...)
	frame = jsonwire.AppendString(frame, id)
	frame = append(frame, `,"method":`...)
	frame = jsonwire.AppendString(frame, method)
	frame = append(frame, `,"params":`...)
	frame = append(append(frame, params...), '}')
	m := jsonrpc.Parse(frame)
	if err := r.up.Send(ctx, frame, m); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			msg, _ := jsonwire.String(jsonwire.Lookup(m.Error, "message"))
			return nil, fmt.Errorf("%s: %s", method, msg)
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// ownCalls are the proxy's own requests waiting for their responses. Their
// ids are strings no agent uses ("mcpdrift-proxy-N"), so they are never
// confused with the agent's.
type ownCalls struct {
	mu      sync.Mutex
	seq     uint64
	waiting map[interceptor.ID]chan interceptor.Message
}

func (o *ownCalls) register() (string, chan interceptor.Message) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seq++
	id := jsonrpc.OwnPrefix + strconv.FormatUint(o.seq, 10)
	if o.waiting == nil {
		o.waiting = map[interceptor.ID]chan interceptor.Message{}
	}
	ch := make(chan interceptor.Message, 1)
	o.waiting[interceptor.StringID(id)] = ch
	return id, ch
}

func (o *ownCalls) forget(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.waiting, interceptor.StringID(id))
}

// deliver hands a response to the own call it answers. It reports whether
// the response has one of the proxy's ids: such a response (even a late one)
// is never the agent's.
func (o *ownCalls) deliver(m interceptor.Message) bool {
	if !jsonrpc.IsOwnID(m.RawID) {
		return false
	}
	o.mu.Lock()
	ch, ok := o.waiting[m.ID]
	o.mu.Unlock()
	if ok {
		// The waiting call reads the result after the frame is gone.
		m.Result, m.Error = bytes.Clone(m.Result), bytes.Clone(m.Error)
		select {
		case ch <- m:
		default: // answered twice: the first answer stands
		}
	}
	return true
}
