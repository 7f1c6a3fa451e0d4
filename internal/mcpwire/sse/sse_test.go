package sse

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

type event struct{ name, id, data string }

func parseAll(t *testing.T, stream string, chunk int, max int) ([]event, *Parser) {
	t.Helper()
	var got []event
	p := &Parser{Max: max, Dispatch: func(e Event) { got = append(got, event{e.Name, e.ID, string(e.Data)}) }}
	for i := 0; i < len(stream); i += chunk {
		p.Feed([]byte(stream[i:min(i+chunk, len(stream))]))
	}
	return got, p
}

func TestFraming(t *testing.T) {
	stream := ": comment\r\n" +
		"event: endpoint\r\ndata: /message?sessionId=1\r\n\r\n" + // CRLF
		"data: {\"a\":\n" + "data:1}\n\n" + // two data lines, LF; no space after colon
		"id: 7\rretry: 10\r\r" + // CR only, no data: a priming event, not dispatched
		"event: message\ndata\n\n" + // a data field without a value
		"data: last\r\n\r\n"
	want := []event{{"endpoint", "", "/message?sessionId=1"}, {"", "", "{\"a\":\n1}"}, {"message", "7", ""}, {"", "7", "last"}}
	for _, chunk := range []int{1, 2, 3, 7, len(stream)} {
		got, p := parseAll(t, stream, chunk, 1<<20)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("chunk %d:\n got %q\nwant %q", chunk, got, want)
		}
		if p.LastID() != "7" || p.Retry() != 10*time.Millisecond {
			t.Errorf("chunk %d: last event id %q, retry %v", chunk, p.LastID(), p.Retry())
		}
	}
}

// TestByteOrderMark: a byte order mark that starts the stream is skipped,
// however the chunks split it (the first event is read as clients read
// it); one later is part of its line.
func TestByteOrderMark(t *testing.T) {
	stream := "\xef\xbb\xbfdata: first\n\n\xef\xbb\xbfdata: not a field\n\ndata: last\n\n"
	for _, chunk := range []int{1, 2, len(stream)} {
		if got, _ := parseAll(t, stream, chunk, 1<<10); !reflect.DeepEqual(got, []event{{"", "", "first"}, {"", "", "last"}}) {
			t.Errorf("chunk %d: %q", chunk, got)
		}
	}
}

func TestOversizedEventDropped(t *testing.T) {
	stream := "data: " + strings.Repeat("x", 100) + "\n\n" + "data: " + strings.Repeat("y", 30) + "\ndata: " + strings.Repeat("y", 30) + "\n\n" + "data: ok\n\n"
	for _, chunk := range []int{1, 5, len(stream)} {
		got, p := parseAll(t, stream, chunk, 50)
		if !reflect.DeepEqual(got, []event{{"", "", "ok"}}) || p.Dropped != 2 {
			t.Errorf("chunk %d: %q, %d dropped", chunk, got, p.Dropped)
		}
	}
}
