package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// faultServer is a small MCP server of our own (2026-07-28, JSON
// responses) that misbehaves in one way at one method.
type faultServer struct {
	at    string // the method that triggers the fault
	fault func(w http.ResponseWriter, r *http.Request, id json.RawMessage)
}

func (f faultServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.serve(w, r, func(method string, id json.RawMessage) bool {
		if method != f.at {
			return false
		}
		f.fault(w, r, id)
		return true
	})
}

// serve decodes a request and lets special handle it; what special declines
// gets the well-behaved answer.
func (f faultServer) serve(w http.ResponseWriter, r *http.Request, special func(method string, id json.RawMessage) bool) {
	id, method, ok := testservers.ReadRequest(w, r)
	if !ok || special(method, id) {
		return
	}
	switch method {
	case "server/discover":
		writeResult(w, id, `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fault","version":"0"}}}`)
	case "tools/list":
		writeResult(w, id, `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, id)
	}
}

func writeResult(w http.ResponseWriter, id json.RawMessage, result string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

func serveFault(t *testing.T, f faultServer) string {
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// faultOptions have small caps and generous budgets: a fault ends the probe
// at once, and no well-behaved step, however slow a loaded machine makes
// it, runs out of time first. A fault that only a timeout ends is tested
// with expectTimeout.
func faultOptions() Options {
	return Options{Timeout: 2 * time.Minute, RequestTimeout: time.Minute, DiscoverTimeout: time.Minute,
		Settle: 10 * time.Millisecond, MaxMessageBytes: 32 << 10, MaxPages: 10}
}

// timeoutBudgets are the request budgets (RequestTimeout, and
// DiscoverTimeout on stdio) expectTimeout tries in turn, as net/http's own
// timeout tests do: the first keeps the test short, and a larger one is
// tried only when a step before the fault ran out of the smaller budget,
// which a well-behaved step can on a loaded machine.
var timeoutBudgets = []time.Duration{250 * time.Millisecond, time.Second, 4 * time.Second, 16 * time.Second}

// expectTimeout probes a target whose fault at step never ends, and checks
// that the request budget ends it there (class timeout at step), well
// before the probe's own Timeout would. A timeout at another step is the
// load, not the fault: the probe is tried again with the next budget. Any
// other failure fails at once.
func expectTimeout(t *testing.T, target Target, step Step) *Error {
	t.Helper()
	var pe *Error
	for _, budget := range timeoutBudgets {
		o := faultOptions()
		o.RequestTimeout, o.DiscoverTimeout = budget, budget
		start := time.Now()
		_, err := Probe(context.Background(), target, o)
		if !errors.As(err, &pe) || pe.Class != ClassTimeout {
			t.Fatalf("got %v, want a timeout at %s", err, step)
		}
		if took := time.Since(start); took >= o.Timeout {
			t.Fatalf("the probe's Timeout (%v) ended it, not its request budget (%v): %v", o.Timeout, budget, pe)
		}
		if pe.Step == step {
			return pe
		}
		t.Logf("budget %v: timed out at %s before the fault at %s; trying a larger budget", budget, pe.Step, step)
	}
	t.Fatalf("got %v with a budget of %v, want a timeout at %s", pe, timeoutBudgets[len(timeoutBudgets)-1], step)
	return nil
}

// expectFailure probes and checks the error's class and step.
func expectFailure(t *testing.T, target Target, o Options, class Class, step Step) *Error {
	t.Helper()
	_, err := Probe(context.Background(), target, o)
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want a %s error", err, class)
	}
	if pe.Class != class || pe.Step != step {
		t.Fatalf("got %s at %s (%v), want %s at %s", pe.Class, pe.Step, pe, class, step)
	}
	return pe
}

func TestHTTPFaults(t *testing.T) {
	verifyNoLeaks(t)
	jsonBody := func(status int, body string) func(http.ResponseWriter, *http.Request, json.RawMessage) {
		return func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, body, id)
		}
	}
	result := func(r string) func(http.ResponseWriter, *http.Request, json.RawMessage) {
		return func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) { writeResult(w, id, r) }
	}
	big := strings.Repeat("x", 40<<10)
	cases := []struct {
		name  string
		f     faultServer
		class Class
		step  Step
		check func(t *testing.T, pe *Error)
	}{
		{"500 on discover", faultServer{"server/discover", jsonBody(500, `{"oops":%s}`)}, ClassHTTPStatus, StepDiscover,
			func(t *testing.T, pe *Error) {
				if pe.StatusCode != 500 {
					t.Errorf("status %d", pe.StatusCode)
				}
			}},
		{"503 on tools/list", faultServer{"tools/list", jsonBody(503, `{"id":%s}`)}, ClassHTTPStatus, StepListTools, nil},
		{"401 with protected-resource metadata", faultServer{"server/discover", func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="https://auth.example.com/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
		}}, ClassAuthRequired, StepDiscover, func(t *testing.T, pe *Error) {
			if pe.ResourceMetadata != "https://auth.example.com/.well-known/oauth-protected-resource/mcp" || pe.StatusCode != 401 {
				t.Errorf("resource metadata %q, status %d", pe.ResourceMetadata, pe.StatusCode)
			}
		}},
		{"401 without a challenge", faultServer{"server/discover", func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			w.WriteHeader(http.StatusUnauthorized)
		}}, ClassAuthRequired, StepDiscover, func(t *testing.T, pe *Error) {
			if !strings.HasSuffix(pe.ResourceMetadata, "/.well-known/oauth-protected-resource/mcp") {
				t.Errorf("resource metadata %q, want the RFC 9728 well-known URL", pe.ResourceMetadata)
			}
		}},
		{"wrong content type", faultServer{"tools/list", func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>hello</html>")
		}}, ClassProtocolError, StepListTools, nil},
		{"malformed JSON", faultServer{"tools/list", jsonBody(200, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[`)}, ClassProtocolError, StepListTools, nil},
		{"duplicate member names", faultServer{"tools/list", result(`{"tools":[{"name":"a","name":"b","inputSchema":{"type":"object"}}]}`)}, ClassInvalidListing, StepListTools, nil},
		{"definition without a name", faultServer{"tools/list", result(`{"tools":[{"inputSchema":{"type":"object"}}]}`)}, ClassInvalidListing, StepListTools, nil},
		{"result without the list", faultServer{"tools/list", result(`{"prompts":[]}`)}, ClassInvalidListing, StepListTools, nil},
		{"cursor that loops", faultServer{"tools/list", result(`{"tools":[{"name":"a"}],"nextCursor":"same"}`)}, ClassInvalidListing, StepListTools, nil},
		{"endless cursor", faultServer{"tools/list", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
			writeResult(w, id, fmt.Sprintf(`{"tools":[],"nextCursor":"c%d"}`, time.Now().UnixNano()))
		}}, ClassTooLarge, StepListTools, nil},
		{"response over the cap", faultServer{"tools/list", result(`{"tools":[{"name":"a","description":"` + big + `"}]}`)}, ClassTooLarge, StepListTools, nil},
		{"SSE event over the cap", faultServer{"tools/list", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[{\"name\":\"%s\"}]}}\n\n", id, big)
		}}, ClassTooLarge, StepListTools, nil},
		// The two that only a timeout ends go on for as long as the
		// client waits, slowly enough that no size cap ends them first
		// with expectTimeout's largest budget.
		{"endless SSE stream", faultServer{"tools/list", func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			every(r, 50*time.Millisecond, func() {
				fmt.Fprint(w, ": keep-alive\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"tick\"}}\n\n")
				w.(http.Flusher).Flush()
			})
		}}, ClassTimeout, StepListTools, nil},
		{"slow drip", faultServer{"tools/list", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
			// The answer's start, then insignificant white space a byte at a time.
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[]`, id)
			every(r, 20*time.Millisecond, func() {
				w.Write([]byte{' '})
				w.(http.Flusher).Flush()
			})
		}}, ClassTimeout, StepListTools, nil},
		{"nesting past the envelope scanner's depth", faultServer{"tools/list", result(`{"tools":[{"name":"a","inputSchema":` + nested(600) + `}]}`)}, ClassTooLarge, StepListTools, nil},
		{"nesting past the document depth limit", faultServer{"tools/list", result(`{"tools":[{"name":"a","inputSchema":` + nested(200) + `}]}`)}, ClassTooLarge, StepListTools, nil},
		{"unknown resultType", faultServer{"tools/list", result(`{"resultType":"input_required","tools":[]}`)}, ClassProtocolError, StepListTools, nil},
		{"JSON-RPC error on tools/list", faultServer{"tools/list", jsonBody(200, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"internal"}}`)}, ClassProtocolError, StepListTools,
			func(t *testing.T, pe *Error) {
				if pe.RPCCode != -32603 {
					t.Errorf("RPC code %d", pe.RPCCode)
				}
			}},
		{"response to another request", faultServer{"tools/list", jsonBody(200, `{"jsonrpc":"2.0","id":999,"result":{"tools":[]},"x":%s}`)}, ClassProtocolError, StepListTools, nil},
		{"no mutually supported version", faultServer{"server/discover", jsonBody(400, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2099-01-01"]}}}`)}, ClassProtocolError, StepDiscover, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := Target{URL: serveFault(t, c.f)}
			var pe *Error
			if c.class == ClassTimeout {
				pe = expectTimeout(t, target, c.step)
			} else {
				pe = expectFailure(t, target, faultOptions(), c.class, c.step)
			}
			if pe.Transport != "streamable-http" {
				t.Errorf("transport %q", pe.Transport)
			}
			if c.check != nil {
				c.check(t, pe)
			}
		})
	}
}

// every calls f every period until r's client goes.
func every(r *http.Request, period time.Duration, f func()) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		f()
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// nested is an object nested n levels deep.
func nested(n int) string {
	return strings.Repeat(`{"a":`, n-1) + `{}` + strings.Repeat(`}`, n-1)
}

func TestUnreachable(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL + "/mcp"
	ts.Close()
	expectFailure(t, Target{URL: url}, faultOptions(), ClassUnreachable, StepDiscover)
	expectFailure(t, Target{URL: url, Transport: TransportSSE}, faultOptions(), ClassUnreachable, StepConnect)
}

func TestRedirectToAnotherOriginIsRefused(t *testing.T) {
	other := httptest.NewServer(faultServer{})
	defer other.Close()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer ts.Close()
	pe := expectFailure(t, Target{URL: ts.URL + "/mcp", Transport: TransportStreamableHTTP}, faultOptions(), ClassHTTPStatus, StepDiscover)
	if pe.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("status %d", pe.StatusCode)
	}
}

func TestLegacySSEEndpointOnAnotherOrigin(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: endpoint\ndata: http://evil.example.com/messages\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer ts.Close()
	expectFailure(t, Target{URL: ts.URL + "/sse", Transport: TransportSSE}, faultOptions(), ClassProtocolError, StepConnect)
}

// Configured secrets (headers, URL query and credentials, stdio env) never
// appear in errors or logs, even when the server echoes them back.
func TestSecretsNeverLeak(t *testing.T) {
	const token, key, pass = "tok-0123456789-secret", "key-987654321-secret", "pw-13579-secret"
	echo := faultServer{"tools/list", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"bad credentials %s for %s"}}`, id, r.Header.Get("Authorization"), r.URL.String())
	}}
	url := strings.Replace(serveFault(t, echo), "http://", "http://user:"+pass+"@", 1) + "?api_key=" + key
	var logs bytes.Buffer
	o := faultOptions()
	o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	_, err := Probe(context.Background(), Target{URL: url, Headers: http.Header{"Authorization": {"Bearer " + token}}}, o)
	if err == nil {
		t.Fatal("want an error")
	}
	for _, secret := range []string{token, key, pass} {
		if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
			t.Errorf("secret %q leaked:\nerror: %v\nlogs: %s", secret, err, logs.String())
		}
	}
	if !strings.Contains(err.Error(), redacted) {
		t.Errorf("the echoed secret should read %s: %v", redacted, err)
	}

	// A stdio child that prints its secret environment to stderr.
	const envSecret = "env-24682468-secret"
	pe := expectFailure(t, stdioTarget(t, "exit", "API_TOKEN="+envSecret), faultOptions(), ClassUnreachable, StepDiscover)
	if strings.Contains(pe.Stderr, envSecret) || strings.Contains(pe.Error(), envSecret) {
		t.Errorf("stdio env secret leaked: %q / %v", pe.Stderr, pe)
	}
	if !strings.Contains(pe.Stderr, "fatal: missing configuration") {
		t.Errorf("stderr tail %q lacks the child's message", pe.Stderr)
	}
}

// headerAdder is what confighttp's header RoundTripper and an auth
// extension do: add credentials the probe is never told about.
type headerAdder struct {
	next http.RoundTripper
	h    http.Header
}

func (a headerAdder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, vs := range a.h {
		if prev := req.Header.Get(k); k == "Cookie" && prev != "" { // the jar's cookies
			vs = []string{prev + "; " + vs[0]}
		}
		req.Header[k] = vs
	}
	return a.next.RoundTrip(req)
}

// echoHeaders echoes the request's credentials, as a careless server's
// error page does, and one header that is no secret.
func echoHeaders(r *http.Request) string {
	var b strings.Builder
	for _, k := range []string{"Authorization", "X-Api-Key", "Cookie", "Proxy-Authorization", "Mcp-Method"} {
		fmt.Fprintf(&b, "%s: %s; ", k, r.Header.Get(k))
	}
	return b.String()
}

// Credentials an HTTPClient adds on its own (auth extension tokens, static
// headers of confighttp, cookies of its jar, Basic credentials) never appear
// in errors, logs or snapshots, even when the server echoes them.
func TestSecretsAddedByTheHTTPClientNeverLeak(t *testing.T) {
	const (
		token  = "ext-0123456789-token"
		apiKey = "apikey-2468013579"
		cookie = "cfgcookie-11223344"
		jarred = "srvcookie-99887766"
		pass   = "basic-pw-5544332211"
	)
	secrets := []string{token, apiKey, cookie, jarred, pass}
	added := http.Header{
		"Authorization":       {"Bearer " + token},
		"X-Api-Key":           {apiKey},
		"Cookie":              {"theme=dark-mode-on; sid=" + cookie},
		"Proxy-Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("proxyuser:"+pass))},
	}
	client := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Transport: headerAdder{next: http.DefaultTransport, h: added}, Jar: jar}
	}
	var logs bytes.Buffer
	o := faultOptions()
	o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	check := func(t *testing.T, what, text string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s leaks %q: %s", what, s, text)
			}
		}
	}

	t.Run("error", func(t *testing.T) {
		echo := faultServer{"tools/list", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			msg, _ := json.Marshal("rejected: " + echoHeaders(r))
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%s}}`, id, msg)
		}}
		setCookie := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: jarred, Path: "/"})
			echo.ServeHTTP(w, r)
		})
		ts := httptest.NewServer(setCookie)
		defer ts.Close()
		logs.Reset()
		_, err := Probe(context.Background(), Target{URL: ts.URL + "/mcp", HTTPClient: client()}, o)
		if err == nil || !strings.Contains(err.Error(), redacted) {
			t.Fatalf("want an error with the echoed headers redacted, got %v", err)
		}
		if !strings.Contains(err.Error(), "Mcp-Method: tools/list") {
			t.Errorf("a header that is no credential was redacted too: %v", err)
		}
		if !strings.Contains(logs.String(), "tools/list") {
			t.Fatalf("the probe's debug log is empty: %s", logs.String())
		}
		check(t, "the error", err.Error())
		check(t, "the debug log", logs.String())
	})

	t.Run("status error", func(t *testing.T) {
		url := serveFault(t, faultServer{"tools/list", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
			// A cookie set and echoed in the same response.
			http.SetCookie(w, &http.Cookie{Name: "session", Value: jarred})
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			msg, _ := json.Marshal(echoHeaders(r) + "new session " + jarred)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":%s}}`, id, msg)
		}})
		_, err := Probe(context.Background(), Target{URL: url, HTTPClient: client()}, o)
		var pe *Error
		if !errors.As(err, &pe) || pe.StatusCode != http.StatusForbidden || !strings.Contains(err.Error(), "new session") {
			t.Fatalf("want the 403 with its message, got %v", err)
		}
		check(t, "the error", err.Error())
	})

	t.Run("HTTP/2", func(t *testing.T) {
		ts := httptest.NewUnstartedServer(faultServer{"tools/list", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			msg, _ := json.Marshal(r.Proto + " host " + r.Host + " " + echoHeaders(r))
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%s}}`, id, msg)
		}})
		ts.EnableHTTP2 = true
		ts.StartTLS()
		defer ts.Close()
		h2 := ts.Client()
		h2.Transport = headerAdder{next: h2.Transport, h: added}
		_, err := Probe(context.Background(), Target{URL: ts.URL + "/mcp", HTTPClient: h2}, o)
		if err == nil || !strings.Contains(err.Error(), "HTTP/2.0 host") || !strings.Contains(err.Error(), "Authorization: "+redacted) {
			t.Fatalf("want the HTTP/2 echo, redacted: %v", err)
		}
		check(t, "the error", err.Error())
		if !strings.Contains(err.Error(), "host "+strings.TrimPrefix(ts.URL, "https://")) {
			t.Errorf("HTTP/2 pseudo headers (:authority) are no secrets: %v", err)
		}
	})

	t.Run("cut by truncation", func(t *testing.T) {
		// The probe quotes at most 200 bytes of the versions: the cut falls
		// 12 bytes into the echoed token.
		url := serveFault(t, faultServer{"server/discover", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
			v, _ := json.Marshal(strings.Repeat("v", 200-1-len("Bearer ")-12) + r.Header.Get("Authorization"))
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"unsupported","data":{"supported":[%s]}}}`, id, v)
		}})
		_, err := Probe(context.Background(), Target{URL: url, HTTPClient: client()}, o)
		if err == nil || !strings.Contains(err.Error(), redacted+"…") {
			t.Fatalf("want the versions cut inside the token, redacted: %v", err)
		}
		if strings.Contains(err.Error(), token[:12]) {
			t.Errorf("the head of the token leaked: %v", err)
		}
	})

	t.Run("snapshot", func(t *testing.T) {
		url := serveFault(t, faultServer{"tools/list", func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
			desc, _ := json.Marshal("Called with " + echoHeaders(r))
			writeResult(w, id, fmt.Sprintf(`{"tools":[{"name":"a","description":%s,"inputSchema":{"type":"object","default":%q}}]}`, desc, token))
		}})
		snap, err := Probe(context.Background(), Target{URL: url, HTTPClient: client()}, o)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(snap)
		check(t, "the snapshot", string(raw))
		if !bytes.Contains(raw, []byte(redacted)) {
			t.Errorf("the echoed token should read %s: %s", redacted, raw)
		}
	})
}

func TestHeaderWithLineBreakIsInvalid(t *testing.T) {
	const secret = "tok-0123456789"
	for _, v := range []string{"Bearer " + secret + "\r\nX-Injected: 1", secret + "\n", "a\rb" + secret} {
		err := (&Target{URL: "http://127.0.0.1:1/mcp", Headers: http.Header{"Authorization": {v}}}).Validate()
		if err == nil || !strings.Contains(err.Error(), "header Authorization") {
			t.Errorf("%q: got %v, want an error naming the header", v, err)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("the error quotes the value: %v", err)
		}
	}
	if err := (&Target{URL: "http://127.0.0.1:1/mcp", Headers: http.Header{"Bad Name": {"x"}}}).Validate(); err == nil {
		t.Error("a header name with a space must be refused")
	}
}

func TestStdioFaults(t *testing.T) {
	verifyNoLeaks(t)
	t.Run("never answers", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		// Silent on server/discover past DiscoverTimeout, then on the
		// fallback initialize past RequestTimeout.
		expectTimeout(t, stdioTarget(t, "silent", "PROBE_TEST_PIDFILE="+pidFile), StepInitialize)
		if pid := waitPID(t, pidFile); !reaped(pid) {
			t.Errorf("the silent child %d (which ignores SIGTERM) was not killed and reaped", pid)
		}
	})
	t.Run("garbage on stdout", func(t *testing.T) {
		expectFailure(t, stdioTarget(t, "garbage"), faultOptions(), ClassProtocolError, StepDiscover)
	})
	t.Run("line over the cap", func(t *testing.T) {
		expectFailure(t, stdioTarget(t, "huge"), faultOptions(), ClassTooLarge, StepDiscover)
	})
	t.Run("exits at once", func(t *testing.T) {
		pe := expectFailure(t, stdioTarget(t, "exit"), faultOptions(), ClassUnreachable, StepDiscover)
		if !strings.Contains(pe.Error(), "exit status 3") {
			t.Errorf("error %v does not give the exit status", pe)
		}
	})
	t.Run("exits while a process it started holds stdout", func(t *testing.T) {
		// The grandchild leaves the process group (setsid), so stdout never
		// reaches EOF: the exit itself must end the probe.
		pidFile := filepath.Join(t.TempDir(), "pid")
		script := `setsid sh -c 'echo $$ > "$1"; exec sleep 60' sh "$1" &
			until [ -s "$1" ]; do sleep 0.01; done; echo "fatal: no config" >&2; exit 3`
		// faultOptions' minute-long budgets: only the exit can end it in time.
		_, err := Probe(context.Background(), Target{Command: "/bin/sh", Args: []string{"-c", script, "sh", pidFile}}, faultOptions())
		t.Cleanup(func() { _ = syscall.Kill(waitPID(t, pidFile), syscall.SIGKILL) })
		var pe *Error
		if !errors.As(err, &pe) || pe.Class != ClassUnreachable || pe.Step != StepDiscover {
			t.Fatalf("got %v, want unreachable at server/discover", err)
		}
		if !strings.Contains(pe.Error(), "exit status 3") || !strings.Contains(pe.Stderr, "fatal: no config") {
			t.Errorf("error %v (stderr %q) does not give the exit status and stderr", pe, pe.Stderr)
		}
	})
	t.Run("command not found", func(t *testing.T) {
		expectFailure(t, Target{Command: filepath.Join(t.TempDir(), "no-such-server")}, faultOptions(), ClassUnreachable, StepConnect)
	})
}

// floodServer is a 2026-07-28 server that answers tools/list with an SSE
// stream carrying n requests to the client (roots/list), and the result once
// every request was answered (like a server that lists by the client's
// roots). It counts the replies the probe posts back.
type floodServer struct {
	n       int
	replies atomic.Int64
}

func (f *floodServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/replies" {
		fmt.Fprint(w, f.replies.Load())
		return
	}
	body, _ := io.ReadAll(r.Body)
	if !bytes.Contains(body, []byte(`"method"`)) {
		f.replies.Add(1)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	faultServer{"tools/list", f.stream}.ServeHTTP(w, r)
}

func (f *floodServer) stream(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
	n := f.n
	if q, err := strconv.Atoi(r.URL.Query().Get("n")); err == nil {
		n = q // the benchmark's server floods as much as each URL asks
	}
	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriter(w)
	start := f.replies.Load()
	for i := range n {
		fmt.Fprintf(bw, "data: {\"jsonrpc\":\"2.0\",\"id\":\"s%d\",\"method\":\"roots/list\"}\n\n", i)
	}
	_ = bw.Flush()
	w.(http.Flusher).Flush()
	for f.replies.Load()-start < int64(n) {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(time.Millisecond):
		}
	}
	fmt.Fprintf(bw, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[{\"name\":\"a\"}]}}\n\n", id)
	_ = bw.Flush()
}

// A server cannot make the probe send a POST (and hold a goroutine) for
// every request it streams: past MaxServerRequests the probe fails.
func TestServerRequestFlood(t *testing.T) {
	verifyNoLeaks(t)
	flood := &floodServer{n: 5000}
	ts := httptest.NewServer(flood)
	defer ts.Close()
	pe := expectFailure(t, Target{URL: ts.URL + "/mcp"}, faultOptions(), ClassProtocolError, StepListTools)
	if got := flood.replies.Load(); got > DefaultMaxServerRequests {
		t.Errorf("the probe posted %d replies, more than its cap of %d", got, DefaultMaxServerRequests)
	}
	if !strings.Contains(pe.Error(), "requests") {
		t.Errorf("error %v does not say what was exceeded", pe)
	}

	// A few requests are answered, each once, and the probe succeeds.
	few := &floodServer{n: 3}
	ts2 := httptest.NewServer(few)
	defer ts2.Close()
	o := faultOptions()
	o.Settle = 0
	res := mustProbe(t, Target{URL: ts2.URL + "/mcp"}, o)
	if len(res.Snapshot.Tools) != 1 {
		t.Errorf("got %d tools, want 1", len(res.Snapshot.Tools))
	}
}

// stormServer is a 2026-07-28 server that announces tools/list_changed on
// its subscriptions/listen stream every few milliseconds, forever, and
// lists a different tool each time; with hang, every listing after the first
// hangs until the client gives up.
type stormServer struct {
	hang   bool
	listed atomic.Int64
}

func (f *stormServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	faultServer{"", nil}.serve(w, r, func(method string, id json.RawMessage) bool {
		switch method {
		case "server/discover":
			writeResult(w, id, `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}}}`)
		case "tools/list":
			n := f.listed.Add(1)
			if f.hang && n > 1 {
				<-r.Context().Done()
				return true
			}
			writeResult(w, id, fmt.Sprintf(`{"tools":[{"name":"t%d"}]}`, n))
		case "subscriptions/listen":
			w.Header().Set("Content-Type", "text/event-stream")
			for r.Context().Err() == nil {
				fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
				w.(http.Flusher).Flush()
				time.Sleep(5 * time.Millisecond)
			}
		default:
			return false
		}
		return true
	})
}

// A server that never stops announcing changes yields the last listing,
// marked unsettled, before the probe's deadline: never a timeout, whatever
// the settle options would allow (here 4 quiet waits of up to 2 s each and
// the re-listings, in a probe of 6 s), also when a re-listing hangs. The
// snapshot is assembled in the last tenth of the probe's time (600 ms
// here): with a 3 s probe, 300 ms, a core starved under load missed it.
func TestListChangedStorm(t *testing.T) {
	verifyNoLeaks(t)
	for _, hang := range []bool{false, true} {
		t.Run(fmt.Sprintf("relisting hangs %v", hang), func(t *testing.T) {
			t.Parallel() // each waits out most of its probe's time
			storm := &stormServer{hang: hang}
			ts := httptest.NewServer(storm)
			defer ts.Close()
			o := Options{Timeout: 6 * time.Second, RequestTimeout: time.Minute, Settle: 200 * time.Millisecond}
			res := mustProbe(t, Target{URL: ts.URL + "/mcp"}, o)
			if res.Settled || len(res.Snapshot.Tools) != 1 || res.ListChanged == 0 {
				t.Fatalf("settled %v with %d tools after %d listings and %d list_changed; want an unsettled snapshot of 1 tool",
					res.Settled, len(res.Snapshot.Tools), res.Listings, res.ListChanged)
			}
		})
	}
}

// A re-listing still under way when MaxSettleTime has passed is waited for,
// within the probe's time: a server whose listings are slower than that
// bound (or a probe starved of CPU, as under load) settles, where it used
// to yield its first listing unsettled (a server that registers its tools
// as a client connects would then have been snapshotted without them).
func TestSlowRelistingSettles(t *testing.T) {
	verifyNoLeaks(t)
	const bound = time.Second
	slow := &slowRelistingServer{hold: 2 * bound}
	ts := httptest.NewServer(slow)
	defer ts.Close()
	o := Options{Timeout: 2 * time.Minute, RequestTimeout: time.Minute, Settle: time.Millisecond, MaxSettleTime: bound}
	res := mustProbe(t, Target{URL: ts.URL + "/mcp"}, o)
	if !res.Settled || res.Listings != 2 || len(res.Snapshot.Tools) != 1 {
		t.Fatalf("settled %v after %d listings with %d tools; want the second listing, finished after MaxSettleTime, to settle",
			res.Settled, res.Listings, len(res.Snapshot.Tools))
	}
}

// slowRelistingServer answers every tools/list after the first only after
// hold (or when the client gives up).
type slowRelistingServer struct {
	hold   time.Duration
	listed atomic.Int64
}

func (f *slowRelistingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	faultServer{"", nil}.serve(w, r, func(method string, id json.RawMessage) bool {
		if method != "tools/list" || f.listed.Add(1) == 1 {
			return false
		}
		select {
		case <-time.After(f.hold):
			return false // the well-behaved answer, late
		case <-r.Context().Done():
			return true
		}
	})
}

// announcingServer is a 2026-07-28 server whose first listing announces a
// change on its own response stream, before its result, and lists a second
// tool from then on (a replica registering its tools as a client connects).
type announcingServer struct{ listed atomic.Int64 }

func (f *announcingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	faultServer{"", nil}.serve(w, r, func(method string, id json.RawMessage) bool {
		switch method {
		case "server/discover":
			writeResult(w, id, `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}}}`)
		case "tools/list":
			if f.listed.Add(1) > 1 {
				writeResult(w, id, `{"tools":[{"name":"a"},{"name":"b"}]}`)
				return true
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[{\"name\":\"a\"}]}}\n\n", id)
		default:
			return false
		}
		return true
	})
}
