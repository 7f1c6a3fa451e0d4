package proxy_test

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestHTTPLockHostileListings: --lock hide in front of a server that
// serves an unapproved tool ("secret") the ways an agent's SDK still reads
// it — in a batch's answer or a JSON array, with a 201, as
// application/json-rpc, under the id "7" for 7, twice on one stream, with
// a repeated or differently cased member, too deep or too large for the
// proxy, compressed with deflate, on a resumed GET stream, in the answer
// to another request (too large, or an event padded past the limit with a
// comment) — and an event stream with a Content-Length. The agent (reading as lenient clients do:
// arrays, any id, the last of repeated members, names in any case) never
// sees secret: it gets the listing without it, or a JSON-RPC error.
func TestHTTPLockHostileListings(t *testing.T) {
	const limit = 64 << 10
	listing := func(id string, tools ...string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[` + strings.Join(tools, ",") + `]}}`
	}
	echo := `{"name":"echo","inputSchema":{"type":"object"}}`
	secret := `{"name":"secret","inputSchema":{"type":"object"}}`
	both := listing("7", echo, secret)
	nested := func(depth int) string {
		return `{"name":"secret","inputSchema":{"type":"object","default":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}}`
	}
	deep := nested(600) // deeper than the proxy walks
	big := `{"name":"pad","description":"` + strings.Repeat("x", limit) + `","inputSchema":{"type":"object"}}`
	cases := []struct {
		name      string
		get       bool   // the agent resumes a GET stream instead of POSTing tools/list
		batch     bool   // the agent sends its tools/list in a batch
		call      bool   // the agent sends a tools/call (id 8), and a listing for 7 comes in its answer
		refused   bool   // the agent's batch also holds a call the gate refuses (merged into the answer)
		ct        string // the answer's Content-Type (default application/json)
		status    int
		header    map[string]string
		body      string
		wantError bool
	}{
		{name: "batch", batch: true, body: "[" + both + "]"},
		{name: "batch with a refusal", batch: true, refused: true, ct: "text/event-stream", body: "data: " + both + "\n\n"},
		{name: "array", body: "[" + both + "]"},
		{name: "201", status: http.StatusCreated, body: both},
		{name: "json-rpc type", ct: "application/json-rpc", body: both},
		{name: "string id", ct: "text/event-stream", body: "data: " + listing(`"7"`, echo, secret) + "\n\n"},
		{name: "second answer", ct: "text/event-stream", body: "data: " + listing("7", echo) + "\n\ndata: " + both + "\n\n"},
		{name: "sized stream", ct: "text/event-stream", body: "data: " + both + "\n\n"}, // (every answer here has a Content-Length)
		{name: "repeated tools", body: `{"jsonrpc":"2.0","id":7,"result":{"tools":[` + echo + `],"tools":[` + echo + "," + secret + `]}}`},
		{name: "repeated name", body: listing("7", echo, `{"name":"echo","name":"secret","inputSchema":{"type":"object"}}`)},
		{name: "cased result", body: `{"jsonrpc":"2.0","id":7,"result":{"tools":[` + echo + `]},"Result":{"tools":[` + secret + `]}}`},
		{name: "deep definition", body: listing("7", echo, nested(200))},
		{name: "too deep", body: listing("7", echo, deep), wantError: true},
		{name: "too deep event", ct: "text/event-stream", body: "data: " + listing("7", echo, deep) + "\n\n", wantError: true},
		{name: "too large", body: listing("7", echo, secret, big), wantError: true},
		{name: "too large event", ct: "text/event-stream", body: "data: " + listing("7", echo, secret, big) + "\n\n", wantError: true},
		{name: "deflate", header: map[string]string{"Content-Encoding": "deflate"}, body: both, wantError: true},
		{name: "resumed stream", get: true, ct: "text/event-stream", body: "id: 2\ndata: " + both + "\n\n"},
		{name: "in a call's answer", call: true, body: "[" + both + "]"},
		{name: "too large call answer", call: true, body: "[" + listing("7", echo, secret, big) + "]", wantError: true},
		{name: "padded event", call: true, ct: "text/event-stream", body: ": " + strings.Repeat("x", limit) + "\ndata: " + both + "\n\n", wantError: true},
	}
	byName := map[string]int{}
	for i, c := range cases {
		byName[c.name] = i
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		c := cases[byName[r.Header.Get("X-Case")]]
		body := []byte(c.body)
		if c.header["Content-Encoding"] == "deflate" {
			var b bytes.Buffer
			zw := zlib.NewWriter(&b)
			zw.Write(body)
			zw.Close()
			body = b.Bytes()
		}
		ct := c.ct
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		for k, v := range c.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(max(c.status, http.StatusOK))
		w.Write(body)
	}))
	defer up.Close()
	lock := writeLock(t, map[string]string{"echo": `{"name":"echo","inputSchema":{"type":"object"}}`})
	h, err := proxy.NewHandler(proxy.Config{Upstream: up.URL, Listen: "test", Lock: lock,
		Limits: contract.Limits{MaxDocumentBytes: limit}}, newTelemetry(t).Telemetry)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer func() { hs.Close(); h.Close() }()

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`))
			if c.batch {
				batch := `[{"jsonrpc":"2.0","id":7,"method":"tools/list"}]`
				if c.refused {
					batch = `[{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"secret"}},{"jsonrpc":"2.0","id":7,"method":"tools/list"}]`
				}
				req, _ = http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(batch))
			}
			if c.call {
				req, _ = http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo"}}`))
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if c.get {
				req, _ = http.NewRequest(http.MethodGet, hs.URL, nil)
				req.Header.Set("Accept", "text/event-stream")
				req.Header.Set("Last-Event-ID", "1")
			}
			req.Header.Set("Mcp-Session-Id", "s")
			req.Header.Set("X-Case", c.name)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("the answer could not be read whole: %v (%d bytes)", err, len(body))
			}
			names, errors := readListings(t, resp.Header.Get("Content-Type"), body)
			for _, n := range names {
				if strings.EqualFold(n, "secret") {
					t.Fatalf("the agent was served the unapproved tool: %.300s", body)
				}
			}
			if c.wantError && (errors == 0 || len(names) > 0) || !c.wantError && (errors > 0 || len(names) == 0) {
				t.Errorf("tools %v and %d errors (want an error: %v) in %.300s", names, errors, c.wantError, body)
			}
		})
	}
}

// readListings reads an answer as lenient clients do (a JSON body or an
// event stream; a message or an array of them; the last of repeated
// members; result and tools in any case) and returns the tool names its
// listings serve and how many errors it holds.
func readListings(t *testing.T, contentType string, body []byte) (names []string, errors int) {
	t.Helper()
	texts := [][]byte{body}
	if strings.HasPrefix(contentType, "text/event-stream") {
		texts = nil
		for _, ev := range strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n\n") {
			var data []string
			for _, line := range strings.Split(ev, "\n") {
				if d, ok := strings.CutPrefix(line, "data:"); ok {
					data = append(data, strings.TrimPrefix(d, " "))
				}
			}
			if len(data) > 0 {
				texts = append(texts, []byte(strings.Join(data, "\n")))
			}
		}
	}
	for _, text := range texts {
		var v any
		if json.Unmarshal(text, &v) != nil {
			t.Fatalf("an answer the agent cannot read: %.300s", text)
		}
		msgs, ok := v.([]any)
		if !ok {
			msgs = []any{v}
		}
		for _, m := range msgs {
			for k, res := range m.(map[string]any) {
				switch {
				case strings.EqualFold(k, "error"):
					errors++
				case strings.EqualFold(k, "result"):
					for k, tools := range res.(map[string]any) {
						if tools, ok := tools.([]any); ok && strings.EqualFold(k, "tools") {
							for _, tool := range tools {
								for k, name := range tool.(map[string]any) {
									if s, ok := name.(string); ok && strings.EqualFold(k, "name") {
										names = append(names, s)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return names, errors
}

// TestHTTPDeleteRefused: a DELETE the server refuses (405: it does not let
// clients end sessions; or another client's, refused) leaves the session
// as it was, in the gate and in the tap: a session failed by
// --lock-mode refuse-session stays failed, and with hide a call is still
// stamped with the definition the session was served.
func TestHTTPDeleteRefused(t *testing.T) {
	var calls atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"secret","inputSchema":{"type":"object"}}]}}`, m.ID)
		case "tools/call":
			calls.Add(1)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`, m.ID)
		}
	}))
	defer up.Close()
	for _, mode := range []string{proxy.LockRefuseSession, proxy.LockHide} {
		t.Run(mode, func(t *testing.T) {
			calls.Store(0)
			tel := newTelemetry(t)
			url := lockedProxy(t, up.URL, mode, tel)
			send(t, http.MethodPost, url, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			send(t, http.MethodDelete, url, "")
			got := send(t, http.MethodPost, url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
			if mode == proxy.LockRefuseSession {
				if !strings.Contains(got, `"error"`) || calls.Load() != 0 {
					t.Errorf("a call of the failed session after a refused DELETE: %s, %d calls reached the server", got, calls.Load())
				}
				return
			}
			span := tel.waitNamed(t, "tools/call echo", 1)[0]
			if str(span, semconv.ToolDigest) == "" {
				t.Errorf("the call after a refused DELETE is not stamped with the served definition: %v", span.Attributes)
			}
		})
	}
}

// TestHTTPLockUnclearCalls: a tools/call a server could read as calling
// another tool than the gate does — its tool named twice (servers keep the
// last), a name, params or method member in another case (servers on
// encoding/json, mcp-go's, match any case), no id or a null one (a lenient
// server runs it anyway) — is answered by the proxy and never reaches the
// server, alone or in a batch beside a clear call, which passes.
func TestHTTPLockUnclearCalls(t *testing.T) {
	var calls atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		calls.Add(int64(strings.Count(string(body), "tools/call")))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[{"jsonrpc":"2.0","id":9,"result":{"content":[]}}]`)
	}))
	defer up.Close()
	url := lockedProxy(t, up.URL, proxy.LockHide, newTelemetry(t))
	call := func(rest string) string { return `{"jsonrpc":"2.0","id":1,"method":"tools/call",` + rest + `}` }
	for name, body := range map[string]string{
		"name twice":    call(`"params":{"name":"echo","name":"secret"}`),
		"name cased":    call(`"params":{"name":"echo","Name":"secret"}`),
		"params twice":  call(`"params":{"name":"echo"},"params":{"name":"secret"}`),
		"params cased":  call(`"params":{"name":"echo"},"Params":{"name":"secret"}`),
		"method cased":  `{"jsonrpc":"2.0","id":1,"method":"ping","Method":"tools/call","params":{"name":"secret"}}`,
		"null id":       `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"secret"}}`,
		"no id":         `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"secret"}}`,
		"name not text": call(`"params":{"name":["secret"]}`),
		"in a batch":    `[` + call(`"params":{"name":"echo","name":"secret"}`) + `,{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo"}}]`,
	} {
		t.Run(name, func(t *testing.T) {
			calls.Store(0)
			got := send(t, http.MethodPost, url, body)
			want := int64(0)
			if name == "in a batch" {
				want = 1 // the clear call
			}
			if n := calls.Load(); n != want || !strings.Contains(got, `"error"`) || !strings.Contains(got, "TOOL_NOT_APPROVED") {
				t.Errorf("%d calls reached the server (want %d); the agent got %s", n, want, got)
			}
		})
	}
}

// send sends body on session s1 with method and returns the answer's body.
func send(t *testing.T, method, url, body string) string {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Session-Id", "s1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestHTTPLockOversizedRequest: under --lock a request body over the
// document limit, which the gate cannot judge, is refused (413) instead of
// forwarded ungated: a tools/call for an unapproved tool padded past the
// limit never reaches the server.
func TestHTTPLockOversizedRequest(t *testing.T) {
	var reached atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		io.Copy(io.Discard, r.Body)
	}))
	defer up.Close()
	lock := writeLock(t, map[string]string{"echo": `{"name":"echo","inputSchema":{"type":"object"}}`})
	h, err := proxy.NewHandler(proxy.Config{Upstream: up.URL, Listen: "test", Lock: lock,
		Limits: contract.Limits{MaxDocumentBytes: 4 << 10}}, newTelemetry(t).Telemetry)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer func() { hs.Close(); h.Close() }()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"secret","arguments":{"pad":"` + strings.Repeat("x", 8<<10) + `"}}}`
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || reached.Load() != 0 {
		t.Errorf("status %d, %d requests reached the server; want 413 and none", resp.StatusCode, reached.Load())
	}
}
