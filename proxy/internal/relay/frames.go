package relay

import (
	"bytes"
	"io"
	"os"
	"time"
)

// Stdio is the agent's side of a stdio proxy: what the host writes to the
// proxy and reads from it. Signals are forwarded to the server (SIGINT and
// SIGTERM, as `mcpdrift proxy` subscribes to them).
type Stdio struct {
	In      io.Reader
	Out     io.Writer
	Err     io.Writer
	Signals <-chan os.Signal
}

// Drained waits up to grace for done, and reports whether it came; a
// signal ends the wait.
func Drained(done <-chan struct{}, grace time.Duration, signals <-chan os.Signal) bool {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
	case <-signals:
	}
	return false
}

// ServeAgent relays the agent's frames from in until it ends; the pieces of
// an oversized one go to send unread (or nowhere, under a lock).
func (r *Relay) ServeAgent(in io.Reader, send func([]byte, bool) error) {
	r.readFrames(in, "agent", r.fromAgent, r.agentPieces(send))
}

// ServeServer relays the server's frames from out until it ends.
func (r *Relay) ServeServer(out io.Reader) {
	r.readFrames(out, "server", r.FromServer, r.fromServerPiece)
}

// readFrames reads newline-delimited frames from in until it ends: whole
// frames to whole, the pieces of an oversized one to piece (after marking
// it), unparsed. The reading goroutine writes each frame on itself: no
// hand-off between goroutines. A frame's bytes are the reader's, valid
// until whole returns: whole copies what it keeps.
func (r *Relay) readFrames(in io.Reader, from string, whole func([]byte), piece func([]byte, bool) error) {
	lr := newLineReader(in, r.cfg.Limits.MaxDocumentBytes)
	inOversized := false
	for {
		b, over, last, err := lr.next()
		if err != nil {
			return
		}
		switch {
		case over || inOversized:
			if !inOversized {
				r.oversized(from)
			}
			inOversized = !last
			if piece(b, last) != nil {
				return
			}
		case len(bytes.TrimSpace(b)) == 0:
		default:
			whole(b)
		}
	}
}
