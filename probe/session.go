package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
)

// session is the probe's JSON-RPC client over one conn: it numbers requests,
// adds the per-request metadata of the negotiated generation, answers the
// few requests a server may send a client, and counts list_changed
// notifications for settling.
type session struct {
	rt         *probeRuntime
	c          conn
	clientCaps json.RawMessage
	clientInfo map[string]string

	nextID atomic.Int64
	// modernVersion is set once a 2026-07-28+ version is in use: every
	// request then carries it and the client identity in _meta.
	modernVersion string

	changes atomic.Int64  // list_changed notifications received
	changed chan struct{} // signalled on each, capacity 1

	// Replies to server requests and the listen stream run aside; closing
	// waits for them.
	mu      sync.Mutex
	closed  bool
	replies sync.WaitGroup
	bg      context.Context
	stop    context.CancelFunc
	// Answers to server requests wait here for one of at most
	// answerWorkers goroutines (the queue is bounded by MaxServerRequests).
	answers []queuedAnswer
	workers int
}

// queuedAnswer is a reply to a server request, waiting to be sent.
type queuedAnswer struct {
	method string
	resp   *jsonrpc.Response
}

// answerWorkers bounds the replies to server requests sent at once.
const answerWorkers = 4

func newSession(ctx context.Context, rt *probeRuntime, clientCaps json.RawMessage) *session {
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	return &session{
		rt:         rt,
		clientCaps: clientCaps,
		clientInfo: map[string]string{"name": rt.opts.ClientName, "version": rt.opts.ClientVersion},
		changed:    make(chan struct{}, 1),
		bg:         bg,
		stop:       stop,
	}
}

// request sends method with params (nil for none) and returns the raw
// result. A JSON-RPC error from the server is returned as *rpcError.
func (s *session) request(ctx context.Context, method string, params map[string]any, timeout time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := s.newRequest(method, params)
	if err != nil {
		return nil, err
	}
	return s.exchange(ctx, req)
}

// pending is a request whose answer is awaited aside (see start).
type pending struct {
	done   chan struct{} // closed when result or err is set
	result json.RawMessage
	err    error
	stop   context.CancelFunc
}

// start sends a request and awaits its answer on a goroutine of its own,
// until the answer comes, ctx ends, or cancel is called.
func (s *session) start(ctx context.Context, method string, params map[string]any) *pending {
	ctx, stop := context.WithCancel(ctx)
	p := &pending{done: make(chan struct{}), stop: stop}
	req, err := s.newRequest(method, params)
	if err != nil {
		p.err = err
		close(p.done)
		return p
	}
	go func() {
		defer close(p.done)
		p.result, p.err = s.exchange(ctx, req)
	}()
	return p
}

// cancel stops waiting for the answer and returns once the wait ended.
func (p *pending) cancel() {
	p.stop()
	<-p.done
}

// newRequest numbers a request and adds the metadata of the generation in use.
func (s *session) newRequest(method string, params map[string]any) (*jsonrpc.Request, error) {
	if s.modernVersion != "" {
		params = s.withMeta(params, s.modernVersion)
	}
	id, _ := jsonrpc.MakeID(float64(s.nextID.Add(1)))
	return newRequest(id, method, params)
}

// exchange sends req and returns the raw result of its response.
func (s *session) exchange(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	resp, err := s.c.call(ctx, req)
	if err != nil {
		if ctx.Err() != nil && !isProbeError(err) {
			return nil, timeoutError(ctx, "no response")
		}
		return nil, err
	}
	if resp.Error != nil {
		var we *jsonrpc.Error
		if errors.As(resp.Error, &we) {
			return nil, &rpcError{Code: we.Code, Message: s.rt.red.text(we.Message), Data: we.Data}
		}
		return nil, &rpcError{Message: s.rt.red.text(resp.Error.Error())}
	}
	if len(resp.Result) == 0 || string(resp.Result) == "null" {
		return nil, failure(ClassProtocolError, "the response has neither a result nor an error")
	}
	return resp.Result, nil
}

// timeoutError says that ctx ended: the probe was cancelled, or a timeout
// (the request's or the probe's) expired.
func timeoutError(ctx context.Context, what string) *Error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return &Error{Class: ClassTimeout, Err: fmt.Errorf("%s: the probe was cancelled: %w", what, ctx.Err())}
	}
	return &Error{Class: ClassTimeout, Err: fmt.Errorf("%s in time: %w", what, ctx.Err())}
}

func isProbeError(err error) bool {
	var pe *Error
	return errors.As(err, &pe)
}

// withMeta returns params with the 2026-07-28 per-request metadata.
func (s *session) withMeta(params map[string]any, version string) map[string]any {
	out := make(map[string]any, len(params)+1)
	for k, v := range params {
		out[k] = v
	}
	out[mcpwire.Meta] = map[string]any{
		mcpwire.MetaProtocolVersion:    version,
		mcpwire.MetaClientInfo:         s.clientInfo,
		mcpwire.MetaClientCapabilities: s.clientCaps,
	}
	return out
}

func newRequest(id jsonrpc.ID, method string, params map[string]any) (*jsonrpc.Request, error) {
	req := &jsonrpc.Request{ID: id, Method: method}
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, failure(ClassProtocolError, "encoding %s params: %v", method, err)
		}
		req.Params = raw
	}
	return req, nil
}

// notify sends a notification.
func (s *session) notify(ctx context.Context, method string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	n := &jsonrpc.Request{Method: method}
	if err := s.c.notify(ctx, n); err != nil {
		if ctx.Err() != nil && !isProbeError(err) {
			return timeoutError(ctx, "notification not accepted")
		}
		return err
	}
	return nil
}

// receive handles what the server sends unasked. It runs on a transport's
// reader, so it never blocks: replies are sent aside.
func (s *session) receive(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return
	}
	if !req.IsCall() {
		switch req.Method {
		case mcpwire.NotifyToolsListChanged, mcpwire.NotifyPromptsListChanged, mcpwire.NotifyResourcesListChanged:
			s.changes.Add(1)
			select {
			case s.changed <- struct{}{}:
			default:
			}
		}
		return
	}
	if n := s.rt.serverRequests.Add(1); n > int64(s.rt.opts.MaxServerRequests) {
		if n == int64(s.rt.opts.MaxServerRequests)+1 {
			s.rt.abort(failure(ClassProtocolError, "the server sent more than %d requests to the probe (the limit of server requests)", s.rt.opts.MaxServerRequests))
		}
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.answers = append(s.answers, queuedAnswer{req.Method, answer(req)})
	if s.workers < answerWorkers {
		s.workers++
		s.replies.Add(1)
		go s.answerQueued()
	}
}

// answerQueued sends queued answers until the queue is empty.
func (s *session) answerQueued() {
	defer s.replies.Done()
	for {
		s.mu.Lock()
		if len(s.answers) == 0 || s.closed {
			s.workers--
			s.mu.Unlock()
			return
		}
		a := s.answers[0]
		s.answers = s.answers[1:]
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(s.bg, s.rt.opts.RequestTimeout)
		if err := s.c.reply(ctx, a.resp); err != nil {
			s.rt.opts.Logger.Debug("probe: could not answer a server request", "method", contract.TruncateBytes(s.rt.red.text(a.method), 80), "error", s.rt.red.text(err.Error()))
		}
		cancel()
	}
}

// aside runs f on its own goroutine unless the session is closed; close
// waits for it.
func (s *session) aside(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.replies.Add(1)
	go func() {
		defer s.replies.Done()
		f()
	}()
}

// answer is the probe's reply to a request from the server: it declares
// roots, sampling and elicitation (servers list tools by them) but has no
// roots to share, no model to sample and no user to ask.
func answer(req *jsonrpc.Request) *jsonrpc.Response {
	resp := &jsonrpc.Response{ID: req.ID}
	switch req.Method {
	case mcpwire.MethodPing:
		resp.Result = json.RawMessage(`{}`)
	case mcpwire.MethodRootsList:
		resp.Result = json.RawMessage(`{"roots":[]}`)
	case mcpwire.MethodElicitationCreate:
		resp.Result = json.RawMessage(`{"action":"decline"}`)
	case "sampling/createMessage":
		resp.Error = &jsonrpc.Error{Code: -1, Message: "the mcpdrift probe does not sample"}
	default:
		resp.Error = &jsonrpc.Error{Code: codeMethodNotFound, Message: "method not found"}
	}
	return resp
}

// listen opens a 2026-07-28 subscriptions/listen stream for the list_changed
// notifications the server advertises (capability names such as
// "tools.listChanged"); on that revision it is the only way to hear them.
// It runs until the session closes; the notifications reach receive. Best
// effort: without it settling still works, by re-listing.
func (s *session) listen(capabilityNames []string) {
	subs := map[string]bool{}
	for _, c := range capabilityNames {
		switch c {
		case "tools.listChanged":
			subs["toolsListChanged"] = true
		case "prompts.listChanged":
			subs["promptsListChanged"] = true
		case "resources.listChanged":
			subs["resourcesListChanged"] = true
		}
	}
	if len(subs) == 0 {
		return
	}
	s.aside(func() {
		_, err := s.request(s.bg, mcpwire.MethodSubscriptionsListen, map[string]any{"notifications": subs}, s.rt.opts.Timeout)
		if err != nil && s.bg.Err() == nil {
			s.rt.opts.Logger.Debug("probe: subscriptions/listen ended", "error", s.rt.red.text(err.Error()))
		}
	})
}

// quiet waits until no list_changed has arrived for d, at most 10×d.
func (s *session) quiet(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	limit := time.NewTimer(10 * d)
	defer limit.Stop()
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-s.changed:
			t.Reset(d)
		case <-t.C:
			return nil
		case <-limit.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// close closes the connection and waits for replies in flight.
func (s *session) close(hurry bool) {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop()
	if s.c != nil {
		s.c.close(hurry)
	}
	s.replies.Wait()
}
