package httpproxy

import (
	"io"
	"testing"
	"time"
)

// TestInjectingStreamAtBoundary: an event added while the server's event
// is half sent goes out after that event ends, never inside it; one added
// while the stream is idle goes out at once.
func TestInjectingStreamAtBoundary(t *testing.T) {
	r, w := io.Pipe()
	s := newInjectingStream(r, nil)
	defer s.Close()
	got := make(chan string, 16)
	go func() {
		buf := make([]byte, 64)
		for {
			n, err := s.Read(buf)
			if n > 0 {
				got <- string(buf[:n])
			}
			if err != nil {
				close(got)
				return
			}
		}
	}()
	next := func() string {
		select {
		case g := <-got:
			return g
		case <-time.After(30 * time.Second):
			t.Fatal("nothing read")
			return ""
		}
	}
	io.WriteString(w, "id: 1\r\ndata: a")
	if g := next(); g != "id: 1\r\ndata: a" {
		t.Fatalf("got %q", g)
	}
	s.inject([]byte("data: added\n\n"))
	go io.WriteString(w, "b\r\n\r\ndata: c\n\n")
	var all string
	for len(all) < len("b\r\n\r\ndata: added\n\ndata: c\n\n") {
		all += next()
	}
	if want := "b\r\n\r\ndata: added\n\ndata: c\n\n"; all != want {
		t.Fatalf("got %q, want %q", all, want)
	}
	s.inject([]byte("data: idle\n\n"))
	if g := next(); g != "data: idle\n\n" {
		t.Fatalf("idle stream: got %q", g)
	}
	w.Close()
}
