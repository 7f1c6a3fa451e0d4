package httpproxy

import (
	"bytes"
	"io"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/sse"
	"github.com/mcpdrift/mcpdrift/proxy/internal/jsonrpc"
)

// rewritingBody passes an event stream through event by event and lets
// rewrite replace the data of any event (the lock filtering listings). An
// event is held only until its blank line arrives (a client cannot act on
// part of one anyway); every event rewrite leaves alone reaches the reader
// byte for byte. An event larger than max passes unread, unless over is
// set: then it is dropped, and an event whose data is over(head) takes its
// place unless that is nil (head: the event's first bytes, as it came). A byte order mark that starts the stream is dropped (every event
// stream parser skips it).
type rewritingBody struct {
	rc      io.ReadCloser
	max     int
	p       sse.Parser
	rewrite func(sse.Event) []byte   // nil: the event as it was
	over    func(head []byte) []byte // nil: an event over max passes unread

	held     []byte // the current event's bytes so far
	out      []byte // bytes ready for the reader
	outOff   int
	ends     eventEnds
	tooLarge bool       // the current event is larger than max: passing through (or dropped)
	head     []byte     // the first bytes of an event over max
	started  bool       // the stream's first bytes (and any byte order mark) were seen
	endCR    bool       // the last event ended in a CR: a LF next ends it too
	rewrote  bool       // the last event was rewritten (its end written as LF)
	ev       *sse.Event // what the parser dispatched for the event being completed
	buf      [4 << 10]byte
}

// eventHead is how much of an event over the limit over is shown: enough
// for the id of a message that starts with it.
const eventHead = 4 << 10

func newRewritingBody(rc io.ReadCloser, max int, rewrite func(sse.Event) []byte) *rewritingBody {
	b := &rewritingBody{rc: rc, max: max, rewrite: rewrite}
	b.p = sse.Parser{Max: max, Dispatch: func(ev sse.Event) { b.ev = &ev }}
	return b
}

func (b *rewritingBody) Read(p []byte) (int, error) {
	for b.outOff == len(b.out) {
		b.out, b.outOff = b.out[:0], 0
		n, err := b.rc.Read(b.buf[:])
		b.take(b.buf[:n])
		if err != nil {
			if !b.tooLarge || b.over == nil {
				b.out = append(b.out, b.held...) // an unfinished event, as it came
			}
			b.held = b.held[:0]
			if b.outOff == len(b.out) {
				return 0, err
			}
			break // the next Read gets err again from rc
		}
	}
	n := copy(p, b.out[b.outOff:])
	b.outOff += n
	return n, nil
}

// take splits chunk at event ends: whole events go to out (rewritten or
// not), the unfinished rest is held.
func (b *rewritingBody) take(chunk []byte) {
	if !b.started && len(chunk) > 0 {
		if b.held = append(b.held, chunk...); len(b.held) < len(jsonrpc.BOM) && bytes.HasPrefix(jsonrpc.BOM, b.held) {
			return // perhaps a byte order mark, not yet whole
		}
		b.started = true
		chunk = bytes.Clone(bytes.TrimPrefix(b.held, jsonrpc.BOM))
		b.held = b.held[:0]
	}
	if b.endCR && len(chunk) > 0 {
		b.endCR = false
		if chunk[0] == '\n' { // the rest of the last event's CRLF
			if !b.rewrote {
				b.out = append(b.out, '\n')
			}
			chunk, b.ends.afterCR = chunk[1:], false
		}
	}
	for len(chunk) > 0 {
		i, end := 0, false
		for ; i < len(chunk); i++ {
			if b.ends.step(chunk[i]) {
				end = true
				i++
				if b.ends.afterCR && i < len(chunk) && chunk[i] == '\n' {
					b.ends.step('\n') // with the LF of its CRLF
					i++
				}
				break
			}
		}
		part := chunk[:i]
		chunk = chunk[i:]
		b.p.Feed(part)
		switch {
		case b.tooLarge:
			if b.over == nil {
				b.out = append(b.out, part...)
			}
		case len(b.held)+len(part) > b.max:
			b.tooLarge = true // too large to rewrite: it passes as it comes, or not at all
			if b.over == nil {
				b.out = append(append(b.out, b.held...), part...)
			} else {
				whole := append(b.held, part...)
				b.head = bytes.Clone(whole[:min(len(whole), eventHead)])
			}
			b.held = b.held[:0]
		default:
			b.held = append(b.held, part...)
		}
		if end {
			b.endEvent()
			b.endCR = b.endCR && len(chunk) == 0 // else the next byte, not a LF, is the next event's
		}
	}
}

// endEvent hands the event just completed to rewrite.
func (b *rewritingBody) endEvent() {
	ev := b.ev
	b.ev = nil
	held := b.held
	b.held = b.held[:0]
	b.endCR, b.rewrote = b.ends.afterCR, false
	if b.tooLarge {
		b.tooLarge = false
		if b.over != nil {
			if data := b.over(b.head); data != nil {
				b.out = appendWithData(b.out, nil, data)
			}
			b.head, b.rewrote = nil, true
		}
		return
	}
	var data []byte
	if ev != nil {
		data = b.rewrite(*ev)
	}
	if data == nil {
		b.out = append(b.out, held...)
		return
	}
	b.out = appendWithData(b.out, held, data)
	b.rewrote = true // its end is written as LF: a LF still to come is dropped
}

// appendWithData appends the event in raw with its data lines replaced by
// data: the other fields (id, event, retry) and comments stay as they were.
func appendWithData(out, raw, data []byte) []byte {
	for len(raw) > 0 {
		i := bytes.IndexAny(raw, "\r\n")
		if i < 0 {
			i = len(raw)
		}
		field := raw[:i]
		raw = raw[min(i+1, len(raw)):]
		if len(field) == 0 || bytes.Equal(field, []byte("data")) || bytes.HasPrefix(field, []byte("data:")) {
			continue // a CRLF's second half, or a data line
		}
		out = append(append(out, field...), '\n')
	}
	for seg := range bytes.SplitSeq(data, []byte("\n")) {
		out = append(append(append(out, "data: "...), seg...), '\n')
	}
	return append(out, '\n')
}

func (b *rewritingBody) Close() error { return b.rc.Close() }

// eventEnds follows an event stream's line ends (CRLF, LF or CR, as the
// HTML standard frames server-sent events) byte by byte.
type eventEnds struct {
	lineLen int  // bytes in the current line so far
	afterCR bool // the last byte was a CR (a LF next is the same line end)
}

// step takes the next byte and reports whether it ends an event (it ends
// a blank line).
func (e *eventEnds) step(c byte) bool {
	if e.afterCR {
		e.afterCR = false
		if c == '\n' {
			return false // the LF of a CRLF: its line already ended
		}
	}
	if c != '\r' && c != '\n' {
		e.lineLen++
		return false
	}
	e.afterCR = c == '\r'
	blank := e.lineLen == 0
	e.lineLen = 0
	return blank
}
