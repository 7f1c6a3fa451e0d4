package relay

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestLineReader: frames come whole up to the limit, longer ones in pieces
// whose concatenation is the frame, across buffer growth and reads of any
// size; the buffer grows only as the frames need.
func TestLineReader(t *testing.T) {
	const max = 100
	frames := []string{"a", "", strings.Repeat("b", max), strings.Repeat("c", max+1), "d", strings.Repeat("e", 3*max+7), "f"}
	input := strings.Join(frames, "\n") + "\n" + "tail without newline"
	for name, r := range map[string]io.Reader{
		"whole":     strings.NewReader(input),
		"bytewise":  iotest.OneByteReader(strings.NewReader(input)),
		"halfreads": iotest.HalfReader(strings.NewReader(input)),
	} {
		t.Run(name, func(t *testing.T) {
			lr := newLineReader(r, max)
			lr.buf = make([]byte, 8) // start small, so the frames make it grow
			var got []string
			var cur bytes.Buffer
			oversized := false
			for {
				b, over, last, err := lr.next()
				if err != nil {
					break
				}
				if len(b) > max+1 {
					t.Fatalf("a piece of %d bytes (limit %d)", len(b), max)
				}
				cur.Write(b)
				oversized = oversized || over
				if last {
					s := cur.String()
					if oversized != (len(s) > max) {
						t.Errorf("frame of %d bytes: oversized %v", len(s), oversized)
					}
					got = append(got, s)
					cur.Reset()
					oversized = false
				}
			}
			want := append(append([]string{}, frames...), "tail without newline")
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("got %q\nwant %q", got, want)
			}
			if len(lr.buf) > max+1 {
				t.Errorf("buffer grew to %d (limit %d)", len(lr.buf), max+1)
			}
		})
	}
}
