package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpdrift/mcpdrift/contract"
)

// conn is one transport's connection to a server, at the JSON-RPC message
// level. Messages are the go-sdk's jsonrpc types: a Response's Result is
// the raw wire JSON, which is what the digests need.
type conn interface {
	// call sends a request and returns the server's response to it.
	call(ctx context.Context, req *jsonrpc.Request) (*jsonrpc.Response, error)
	// notify sends a notification.
	notify(ctx context.Context, n *jsonrpc.Request) error
	// reply answers a request the server sent.
	reply(ctx context.Context, r *jsonrpc.Response) error
	// negotiated tells the connection the protocol version in use (and
	// whether it is a 2026-07-28+ one), for transport headers.
	negotiated(version string, modern bool)
	// close ends the connection and releases everything it holds (child
	// process, streams, goroutines) within a bounded time; hurry (the probe
	// was cancelled or timed out) shortens the grace periods.
	close(hurry bool)
	// transport names the transport (contract.Transport*).
	transport() string
}

// inbox receives what a server sends unasked: notifications and requests.
type inbox func(jsonrpc.Message)

// probeRuntime is what every part of one probe shares.
type probeRuntime struct {
	opts   Options
	red    *redactor
	budget *budget
	// abort stops the probe with an *Error from a part that cannot return
	// one (a transport's reader); the probe reports it instead of whatever
	// the cancellation caused.
	abort context.CancelCauseFunc
	// serverRequests counts the requests the server sent, against
	// Options.MaxServerRequests.
	serverRequests atomic.Int64
}

// budget counts the bytes received in one probe against MaxTotalBytes.
type budget struct {
	left atomic.Int64
}

func newBudget(n int64) *budget {
	b := &budget{}
	b.left.Store(n)
	return b
}

func (b *budget) take(n int) error {
	if b.left.Add(-int64(n)) < 0 {
		return failure(ClassTooLarge, "the server sent more than the probe's total byte limit")
	}
	return nil
}

// meteredReader charges every byte read to the probe's budget.
type meteredReader struct {
	r io.Reader
	b *budget
}

func (m *meteredReader) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	if n > 0 {
		if berr := m.b.take(n); berr != nil {
			return n, berr
		}
	}
	return n, err
}

// demux matches responses to waiting calls on transports where all server
// messages arrive on one stream (stdio, legacy SSE).
type demux struct {
	inbox inbox

	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Response
	done    chan struct{}
	err     error // why the stream ended; set before done is closed
}

func newDemux(in inbox) *demux {
	return &demux{inbox: in, pending: map[string]chan *jsonrpc.Response{}, done: make(chan struct{})}
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// register prepares to receive the response to id; call the returned
// function when no longer waiting.
func (d *demux) register(id jsonrpc.ID) (chan *jsonrpc.Response, func()) {
	ch := make(chan *jsonrpc.Response, 1)
	k := idKey(id)
	d.mu.Lock()
	d.pending[k] = ch
	d.mu.Unlock()
	return ch, func() {
		d.mu.Lock()
		delete(d.pending, k)
		d.mu.Unlock()
	}
}

// deliver routes one message from the server.
func (d *demux) deliver(msg jsonrpc.Message) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		d.inbox(msg)
		return
	}
	d.mu.Lock()
	ch := d.pending[idKey(resp.ID)]
	if !resp.ID.IsValid() && len(d.pending) == 1 {
		// An error without id answers the one request in flight (a server
		// that could not parse server/discover answers so); with several in
		// flight it cannot be matched and is dropped.
		for _, only := range d.pending {
			ch = only
		}
	}
	d.mu.Unlock()
	if ch != nil {
		select {
		case ch <- resp:
		default: // a duplicate response: the first one counts
		}
	}
}

// fail ends the stream; every waiting and later call gets err.
func (d *demux) fail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil {
		d.err = err
		close(d.done)
	}
}

func (d *demux) wait(ctx context.Context, ch chan *jsonrpc.Response) (*jsonrpc.Response, error) {
	select {
	case r := <-ch:
		return r, nil
	case <-d.done:
		select { // a response that arrived just before the stream ended still counts
		case r := <-ch:
			return r, nil
		default:
		}
		return nil, d.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// messageStream implements call, notify and reply for transports where the
// probe writes messages one way and every server message arrives on one
// stream (stdio, legacy SSE).
type messageStream struct {
	dm    *demux
	write func(context.Context, jsonrpc.Message) error
}

func (m messageStream) call(ctx context.Context, req *jsonrpc.Request) (*jsonrpc.Response, error) {
	ch, done := m.dm.register(req.ID)
	defer done()
	if err := m.write(ctx, req); err != nil {
		return nil, err
	}
	return m.dm.wait(ctx, ch)
}

func (m messageStream) notify(ctx context.Context, n *jsonrpc.Request) error { return m.write(ctx, n) }

func (m messageStream) reply(ctx context.Context, r *jsonrpc.Response) error { return m.write(ctx, r) }

// decodeMessage decodes one JSON-RPC message from the server into the
// go-sdk's jsonrpc types. It does not use jsonrpc.DecodeMessage, which
// parses the whole message through a streaming decoder that copies a large
// result several times: list results are the bulk of what a probe receives,
// and contract.ParsePage parses them anyway. Here only the envelope is
// walked; small members are decoded, the result is kept raw (a sub-slice).
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	m, err := topMembers(data)
	if err != nil {
		return nil, asError(fmt.Errorf("malformed JSON-RPC message: %w", err))
	}
	var version string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
		return nil, failure(ClassProtocolError, "not a JSON-RPC 2.0 message")
	}
	var rawID any
	if v := m["id"]; v != nil && json.Unmarshal(v, &rawID) != nil {
		return nil, failure(ClassProtocolError, "malformed JSON-RPC id")
	}
	id, err := jsonrpc.MakeID(rawID)
	if err != nil {
		return nil, failure(ClassProtocolError, "malformed JSON-RPC id")
	}
	if v := m["method"]; v != nil {
		var method string
		if err := json.Unmarshal(v, &method); err != nil {
			return nil, failure(ClassProtocolError, "malformed JSON-RPC method")
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: json.RawMessage(m["params"])}, nil
	}
	var rpcErr *jsonrpc.Error
	if v := m["error"]; v != nil && string(v) != "null" {
		if err := json.Unmarshal(v, &rpcErr); err != nil {
			return nil, failure(ClassProtocolError, "malformed JSON-RPC error object")
		}
	}
	if !id.IsValid() && rpcErr == nil {
		// An error may lack an id (the server could not read the request's);
		// a result may not.
		return nil, failure(ClassProtocolError, "a JSON-RPC response without id")
	}
	resp := &jsonrpc.Response{ID: id, Result: json.RawMessage(m["result"])}
	if rpcErr != nil {
		resp.Error = rpcErr
	}
	return resp, nil
}

// errText shortens an error's text for messages about untrusted input.
func errText(err error) string { return contract.TruncateBytes(err.Error(), 300) }

// errClosed is what calls get after the probe closed the connection.
var errClosed = errors.New("connection closed by the probe")

// answers reports whether resp is the response to a request with id: the
// same id, or an error without id (see demux.deliver).
func answers(resp *jsonrpc.Response, id jsonrpc.ID) bool {
	return resp.ID == id || (!resp.ID.IsValid() && resp.Error != nil)
}
