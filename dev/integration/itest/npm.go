package itest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// EverythingCommand runs the real npm server-everything over stdio.
func EverythingCommand(t testing.TB, version string) *exec.Cmd {
	t.Helper()
	return exec.Command(testservers.Node(t), testservers.Everything(t, version), "stdio")
}

// Recorder is an http.RoundTripper that keeps a copy of every response
// body as the client reads it, to learn independently of the interceptor
// what the server sent.
type Recorder struct {
	Base http.RoundTripper
	mu   sync.Mutex
	raw  [][]byte
}

func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	base := r.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	buf := &LockedBuffer{}
	r.mu.Lock()
	r.raw = append(r.raw, nil)
	i := len(r.raw) - 1
	r.mu.Unlock()
	// Streams may never end: keep a snapshot of what arrived after each read.
	resp.Body = &teeBody{ReadCloser: resp.Body, w: buf, snapshot: func() {
		r.mu.Lock()
		r.raw[i] = buf.Bytes()
		r.mu.Unlock()
	}}
	return resp, nil
}

type teeBody struct {
	io.ReadCloser
	w        io.Writer
	snapshot func()
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.Write(p[:n])
		b.snapshot()
	}
	return n, err
}

// Results returns the results of the JSON-RPC responses received so far
// whose result has a top-level member named member ("tools", "serverInfo").
func (r *Recorder) Results(member string) []json.RawMessage {
	r.mu.Lock()
	bodies := append([][]byte(nil), r.raw...)
	r.mu.Unlock()
	var out []json.RawMessage
	for _, b := range bodies {
		for _, msg := range messagesIn(b) {
			if res := resultWith(msg, member); res != nil {
				out = append(out, res)
			}
		}
	}
	return out
}

// messagesIn splits a body into JSON texts: the body itself, or the data of
// each event of an event stream.
func messagesIn(b []byte) [][]byte {
	if json.Valid(b) {
		return [][]byte{b}
	}
	var out [][]byte
	var data []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimPrefix(d, " "))
			continue
		}
		if line == "" && len(data) > 0 {
			out = append(out, []byte(strings.Join(data, "\n")))
			data = nil
		}
	}
	return out
}

func resultWith(msg []byte, member string) json.RawMessage {
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(msg, &env) != nil || json.Unmarshal(env.Result, &members) != nil || members[member] == nil {
		return nil
	}
	return env.Result
}

// LoggedResults is Results for the log of an mcp.LoggingTransport.
func LoggedResults(log []byte, member string) []json.RawMessage {
	var out []json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "read: "); ok {
			if res := resultWith([]byte(line), member); res != nil {
				out = append(out, res)
			}
		}
	}
	return out
}
