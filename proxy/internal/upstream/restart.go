package upstream

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mcpdrift/mcpdrift/proxy/internal/streamhttp"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/sse"
)

// When the server restarts — how most deploys, and so most drifts, arrive —
// its sessions die: a request on the old Mcp-Session-Id gets 404, the GET
// stream drops. The agent's session must not break for that. The proxy
// re-initializes upstream on the agent's behalf, replaying the agent's own
// initialize on the proxy's request ids, lists tools again, and if a
// definition changed tells the agent (notifications/tools/list_changed) and
// lets the gate judge its calls on what the server now serves.

// restartQuiet is how long after a re-initialization another one is taken
// as part of the same trouble, and waits first.
const restartQuiet = 30 * time.Second

// restart re-initializes the session after lost died ("" : whatever the
// current session is, if it is known dead). Concurrent callers wait for one
// re-initialization; a caller whose session was already replaced returns at
// once. One that follows the last success within restartQuiet waits first,
// longer each time (the GET stream's back-off): a server that loses every
// session at once (its GET route answers 404, its stream drops after the
// handshake) is not re-initialized as fast as it answers.
func (u *streamable) restart(lost string) error {
	u.restartMu.Lock()
	defer u.restartMu.Unlock()
	current := u.key()
	u.mu.Lock()
	if u.closing || (current != lost && !u.lost) {
		closing := u.closing
		u.mu.Unlock()
		if closing {
			return errors.New("the proxy is shutting down")
		}
		return nil
	}
	u.sid, u.endpoint, u.lost = "", "", true
	u.mu.Unlock()
	init := u.r.InitParams()
	if init == nil {
		return errors.New("the session ended before the agent initialized it")
	}
	if time.Since(u.restarted) >= restartQuiet {
		u.restartWait = listenMinWait
	} else if !u.sleep(&u.restartWait) {
		return errors.New("the proxy is shutting down")
	}
	if u.legacy.Load() {
		// On HTTP+SSE the session is the stream: open a new one first.
		if err := u.connectSSE(); err != nil {
			return fmt.Errorf("the session ended and the SSE stream could not be reopened: %w", err)
		}
	}
	if _, err := u.r.Call(u.ctx, mcpwire.MethodInitialize, init); err != nil {
		return fmt.Errorf("the session ended and re-initializing failed: %w", err)
	}
	if err := u.notifyInitialized(); err != nil {
		return fmt.Errorf("the session ended and re-initializing failed: %w", err)
	}
	u.mu.Lock()
	u.lost = false
	u.mu.Unlock()
	u.restarted = time.Now()
	// What the agent holds may be gone: list on the proxy's ids; a change
	// reaches the agent as list_changed and the gate as the new definitions.
	u.r.RelistTools(u.ctx, true)
	u.listen()
	return nil
}

// notifyInitialized ends the proxy's re-initialization handshake.
func (u *streamable) notifyInitialized() error {
	x := &exchange{frame: []byte(`{"jsonrpc":"2.0","method":"` + mcpwire.NotifyInitialized + `"}`), own: true}
	resp, err := u.post(x, u.session(), func() {})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%s: HTTP %d", mcpwire.NotifyInitialized, resp.StatusCode)
	}
	return nil
}

// Back-off of the GET stream's reconnections.
const (
	listenMinWait = 100 * time.Millisecond
	listenMaxWait = 2 * time.Second
)

// listen opens the GET stream of the current session, for the messages
// the server sends outside any request (list_changed among them), and keeps
// it open: a dropped stream is reopened (with Last-Event-ID, so nothing is
// lost), and a reopening the server refuses as an unknown session
// re-initializes. A server without the stream (405) is left alone. A
// stateless server has no such stream (its agent subscribes itself); on
// HTTP+SSE the session's one stream is opened by connectSSE.
func (u *streamable) listen() {
	u.mu.Lock()
	sid := u.sid
	if u.closing || u.stateless || u.legacy.Load() || sid == "" || u.listening == sid {
		u.mu.Unlock()
		return
	}
	u.listening = sid
	u.bg.Add(1)
	u.mu.Unlock()
	go func() {
		defer u.bg.Done()
		u.listenLoop(sid)
	}()
}

func (u *streamable) listenLoop(sid string) {
	lastID, wait := "", listenMinWait
	for u.ctx.Err() == nil && u.session() == sid {
		resp, err := u.get(sid, lastID)
		switch {
		case err != nil: // down, or restarting: try again
		case sessionLost(resp):
			resp.Body.Close()
			for u.restart(sid) != nil {
				if !u.sleep(&wait) {
					return
				}
				sid = "" // the session is known dead: restart("") retries while it is
			}
			return // restart opened the new session's stream
		case resp.StatusCode == http.StatusMethodNotAllowed:
			resp.Body.Close()
			return // no stream on this server
		case resp.StatusCode == http.StatusOK && streamhttp.IsEventStream(resp):
			wait = listenMinWait
			p := u.readStream(resp.Body, func(frame []byte) { _, _ = u.deliver(&exchange{}, resp, frame) })
			resp.Body.Close()
			if id := p.LastID(); id != "" {
				lastID = id
			}
		default:
			resp.Body.Close() // 409 (another stream is open), 5xx: try again later
		}
		if !u.sleep(&wait) {
			return
		}
	}
}

// maxResumes bounds the reconnections to a POST's event stream that bring
// no new event.
const maxResumes = 5

// resume reads the rest of a POST's event stream that ended before the
// request was answered: a GET with Last-Event-ID, after the stream's retry
// time (else the back-off), as the transport allows — and as servers that
// close a stream to make the client poll (SEP-1699, 2025-11-25) expect. The
// retry time counts up to UpstreamTimeout: a server asking for weeks does
// not hold the request that long. It returns the parser of the last stream
// read; done reports an answer.
func (u *streamable) resume(p *sse.Parser, deliver func([]byte), done func() bool) *sse.Parser {
	sid := u.session()
	lastID, wait := p.LastID(), listenMinWait
	for idle := 0; !done() && sid != "" && lastID != "" && idle < maxResumes && !u.legacy.Load(); idle++ {
		if p.Retry() > 0 {
			wait = min(p.Retry(), u.cfg.UpstreamTimeout)
		}
		if !u.sleep(&wait) {
			break
		}
		resp, err := u.get(sid, lastID)
		if err != nil {
			continue
		}
		if resp.StatusCode != http.StatusOK || !streamhttp.IsEventStream(resp) {
			resp.Body.Close() // 405, 404: the server does not resume it
			break
		}
		p = u.readStream(resp.Body, deliver)
		resp.Body.Close()
		if id := p.LastID(); id != "" && id != lastID {
			lastID, idle = id, -1 // progress: the count starts again
		}
		if p.Dropped > 0 {
			break
		}
	}
	return p
}

// get opens the GET stream.
func (u *streamable) get(sid, lastID string) (*http.Response, error) {
	req, err := u.newRequest(u.ctx, http.MethodGet, u.url, sid, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if v := u.versionFor(&exchange{}); v != "" {
		req.Header.Set(streamhttp.HeaderProtocolVersion, v)
	}
	if lastID != "" {
		req.Header.Set(streamhttp.HeaderLastEventID, lastID)
	}
	return u.do(req)
}

// sleep waits *wait (doubling it, up to listenMaxWait) unless the proxy
// ends first; it reports whether to go on.
func (u *streamable) sleep(wait *time.Duration) bool {
	t := time.NewTimer(*wait)
	defer t.Stop()
	*wait = min(2**wait, listenMaxWait)
	select {
	case <-t.C:
		return true
	case <-u.ctx.Done():
		return false
	}
}
