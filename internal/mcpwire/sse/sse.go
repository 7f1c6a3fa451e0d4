// Package sse parses text/event-stream bodies incrementally, for every part
// of mcpdrift that reads MCP's Streamable HTTP and legacy SSE responses as
// they arrive: the interceptor's HTTP tap (which only watches the bytes go
// by) and the proxy's upstream client (which relays each event at once).
//
// It is hand-written because the SSE readers in the SDKs are internal and
// consume the body themselves, while long-lived streams never end, so a body
// cannot be read whole.
package sse

import (
	"bytes"
	"io"
	"strconv"
	"time"
)

// Event is one dispatched server-sent event.
type Event struct {
	Name string // the "event" field; "" means "message"
	// ID is the last event ID after this event (the "id" field persists
	// across events, as the HTML standard says): what a client sends as
	// Last-Event-ID to resume after it.
	ID   string
	Data []byte // the data lines joined by LF; the parser's own copy
}

// Parser is fed a stream chunk by chunk; an event is dispatched when its
// blank line arrives, and nothing is buffered beyond the current line and
// event.
//
// Framing follows the HTML standard: a byte order mark that starts the
// stream is skipped, lines end with CRLF, LF or CR (a CRLF
// split across chunks is one terminator), "data" lines accumulate joined by
// LF, "event" names the event, "id" sets the last event ID, lines starting
// with ':' are comments, and an event with no data (a "priming" event) is
// not dispatched.
type Parser struct {
	// Max bounds one line and one event's data; larger events are dropped
	// (and counted in Dropped).
	Max int
	// Dispatch receives each event with data.
	Dispatch func(Event)
	// Dropped counts the events dropped for exceeding Max.
	Dropped int

	line     []byte
	data     []byte
	event    string
	lastID   string
	retry    time.Duration
	hasData  bool
	tooLarge bool
	afterCR  bool
	started  bool // the first line has ended
}

// Feed parses the next chunk of the stream.
func (p *Parser) Feed(b []byte) {
	for len(b) > 0 {
		if p.afterCR {
			p.afterCR = false
			if b[0] == '\n' {
				b = b[1:]
				continue
			}
		}
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			p.appendLine(b)
			return
		}
		p.appendLine(b[:i])
		p.afterCR = b[i] == '\r'
		b = b[i+1:]
		p.endLine()
	}
}

// Consume feeds the parser what r gives, through buf, until r ends (or
// fails) or done reports true after a read; it returns the error that
// ended the reading (io.EOF at the end of the stream), nil when done.
func (p *Parser) Consume(r io.Reader, buf []byte, done func() bool) error {
	for {
		n, err := r.Read(buf)
		p.Feed(buf[:n])
		if err != nil {
			return err
		}
		if done != nil && done() {
			return nil
		}
	}
}

// LastID is the last event ID seen so far.
func (p *Parser) LastID() string { return p.lastID }

// Retry is the reconnection time the stream last asked for ("retry"), 0
// if it never did.
func (p *Parser) Retry() time.Duration { return p.retry }

func (p *Parser) appendLine(b []byte) {
	if len(p.line)+len(b) > p.Max {
		p.tooLarge = true
		return
	}
	p.line = append(p.line, b...)
}

func (p *Parser) endLine() {
	line := p.line
	p.line = p.line[:0]
	if !p.started {
		p.started = true
		line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
	}
	if len(line) == 0 {
		p.endEvent()
		return
	}
	if line[0] == ':' || p.tooLarge {
		return // a comment, or part of an event that is being dropped
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		if len(p.data)+len(value)+1 > p.Max {
			p.tooLarge = true
			return
		}
		if p.hasData {
			p.data = append(p.data, '\n')
		}
		p.data = append(p.data, value...)
		p.hasData = true
	case "event":
		p.event = string(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			p.lastID = string(value)
		}
	case "retry":
		if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil {
			p.retry = time.Duration(ms) * time.Millisecond
		}
	}
}

func (p *Parser) endEvent() {
	switch {
	case p.tooLarge:
		p.Dropped++
	case p.hasData:
		// A fresh copy: the receiver may keep references into it.
		p.Dispatch(Event{Name: p.event, ID: p.lastID, Data: bytes.Clone(p.data)})
	}
	p.data, p.event, p.hasData, p.tooLarge = p.data[:0], "", false, false
}
