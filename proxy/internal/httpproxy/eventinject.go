package httpproxy

import (
	"io"
	"sync"
)

// injectingStream passes a session's standing event stream through as it
// comes and lets the proxy add an event of its own between two of the
// server's (never inside one). The stream is read by a goroutine of its own
// (a standing stream is idle most of the time, and an event must go out
// while the reader waits for the server); each chunk goes to the reader
// before the next is read, so nothing is read ahead.
type injectingStream struct {
	rc     io.ReadCloser
	chunks chan streamChunk
	next   chan struct{} // the reader is done with the last chunk
	adds   chan []byte   // events to add (one waits at most: more are the same)
	closed chan struct{}
	once   sync.Once
	onEnd  func()

	// The reader's state (Read is not called concurrently).
	cur      []byte // the rest of the chunk being read
	err      error  // the stream's end, once the pump has read it
	pending  []byte // an event to add at the next boundary
	boundary bool   // what the reader got so far ends between events
	ends     eventEnds
}

type streamChunk struct {
	b   []byte
	err error
}

func newInjectingStream(rc io.ReadCloser, onEnd func()) *injectingStream {
	s := &injectingStream{rc: rc, chunks: make(chan streamChunk), next: make(chan struct{}),
		adds: make(chan []byte, 1), closed: make(chan struct{}), onEnd: onEnd, boundary: true}
	go s.pump()
	return s
}

func (s *injectingStream) pump() {
	buf := make([]byte, 4<<10)
	for {
		n, err := s.rc.Read(buf)
		select {
		case s.chunks <- streamChunk{buf[:n], err}:
		case <-s.closed:
			return
		}
		if err != nil {
			return
		}
		select {
		case <-s.next:
		case <-s.closed:
			return
		}
	}
}

// inject adds ev to the stream at the next event boundary. It reports
// false when the stream has ended.
func (s *injectingStream) inject(ev []byte) bool {
	select {
	case <-s.closed:
		return false
	default:
	}
	select {
	case s.adds <- ev:
	default: // one is waiting already: the same notification
	}
	return true
}

func (s *injectingStream) Read(p []byte) (int, error) {
	for {
		if len(s.pending) > 0 && s.boundary {
			n := copy(p, s.pending)
			s.pending = s.pending[n:]
			return n, nil
		}
		if len(s.cur) > 0 {
			return s.deliver(p), nil
		}
		if s.err != nil {
			return 0, s.err
		}
		select {
		case c := <-s.chunks:
			s.cur, s.err = c.b, c.err
			if len(c.b) == 0 && c.err == nil {
				s.release()
			}
		case ev := <-s.adds:
			if len(s.pending) == 0 {
				s.pending = ev
			}
		case <-s.closed:
			return 0, io.ErrClosedPipe
		}
	}
}

// deliver copies the chunk's bytes to p, stopping at an event boundary if
// an event is waiting to be added there.
func (s *injectingStream) deliver(p []byte) int {
	n := min(len(p), len(s.cur))
	if len(s.pending) == 0 {
		select {
		case ev := <-s.adds:
			s.pending = ev
		default:
		}
	}
	for i, c := range s.cur[:n] {
		s.track(c)
		if s.boundary && len(s.pending) > 0 {
			n = i + 1
			if s.ends.afterCR && n < len(s.cur) && n < len(p) && s.cur[n] == '\n' {
				s.track('\n') // the rest of the CRLF goes before the added event
				n++
			}
			break
		}
	}
	copy(p, s.cur[:n])
	s.cur = s.cur[n:]
	if len(s.cur) == 0 && s.err == nil {
		s.release()
	}
	return n
}

// track follows the stream: boundary is set after the blank line that
// ends an event, cleared by the next event's first byte.
func (s *injectingStream) track(c byte) {
	if s.ends.step(c) {
		s.boundary = true
	} else if c != '\r' && c != '\n' {
		s.boundary = false
	}
}

// release lets the pump read the next chunk.
func (s *injectingStream) release() {
	select {
	case s.next <- struct{}{}:
	case <-s.closed:
	}
}

func (s *injectingStream) Close() error {
	s.once.Do(func() {
		close(s.closed)
		if s.onEnd != nil {
			s.onEnd()
		}
	})
	return s.rc.Close()
}
