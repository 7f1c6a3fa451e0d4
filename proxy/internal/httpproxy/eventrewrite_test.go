package httpproxy

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/sse"
)

// TestRewritingBody: whatever the chunking, events rewrite leaves alone pass
// byte for byte, the rewritten one keeps its other fields, and a CRLF split
// across reads after it is not doubled.
func TestRewritingBody(t *testing.T) {
	stream := ": c\r\nid: 1\r\ndata: keep\r\n\r\n" +
		"event: message\rid: 2\rdata: old\rdata: two\r\r" +
		"data: after\r\n\r\n" + "data: unfinished"
	want := ": c\r\nid: 1\r\ndata: keep\r\n\r\n" +
		"event: message\nid: 2\ndata: new\ndata: lines\n\n" +
		"data: after\r\n\r\n" + "data: unfinished"
	for chunk := 1; chunk <= len(stream); chunk++ {
		var seen []string
		b := newRewritingBody(io.NopCloser(&chunker{s: stream, n: chunk}), 1<<10, func(ev sse.Event) []byte {
			seen = append(seen, string(ev.Data))
			if string(ev.Data) == "old\ntwo" {
				return []byte("new\nlines")
			}
			return nil
		})
		got, err := io.ReadAll(iotest.OneByteReader(b))
		if err != nil || string(got) != want {
			t.Fatalf("chunks of %d: %v\n got %q\nwant %q", chunk, err, got, want)
		}
		if strings.Join(seen, "|") != "keep|old\ntwo|after" {
			t.Fatalf("chunks of %d: events %q", chunk, seen)
		}
	}
}

// TestRewritingBodyOversized: an event over the limit passes as it came,
// or (over set: under a lock) is dropped and replaced by what over makes
// of its first bytes, or by nothing; either way the next event is
// rewritten as usual, and a byte order mark that starts the stream is
// dropped however it is split.
func TestRewritingBodyOversized(t *testing.T) {
	stream := "\xef\xbb\xbfdata: " + strings.Repeat("x", 100) + "\r\n\r\ndata: small\n\n"
	for _, over := range []string{"", "error", "nothing"} {
		for _, chunk := range []int{1, 2, 7, len(stream)} {
			b := newRewritingBody(io.NopCloser(&chunker{s: stream, n: chunk}), 50, func(ev sse.Event) []byte {
				return []byte("rewritten")
			})
			want := "data: " + strings.Repeat("x", 100) + "\r\n\r\ndata: rewritten\n\n"
			var head string
			switch over {
			case "error":
				b.over = func(h []byte) []byte { head = string(h); return []byte("error") }
				want = "data: error\n\ndata: rewritten\n\n"
			case "nothing":
				b.over = func(h []byte) []byte { return nil }
				want = "data: rewritten\n\n"
			}
			got, _ := io.ReadAll(b)
			if string(got) != want || over == "error" && !strings.HasPrefix(head, "data: xxx") {
				t.Errorf("over %q, chunks of %d: got %q (head %q)\nwant %q", over, chunk, got, head, want)
			}
		}
	}
}

// chunker reads s n bytes at a time.
type chunker struct {
	s string
	n int
}

func (c *chunker) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := copy(p, c.s[:min(c.n, len(c.s))])
	c.s = c.s[k:]
	return k, nil
}
