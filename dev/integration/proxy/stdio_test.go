package proxy_test

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/dev/integration/proxy/internal/testchild"
	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestStdioRelayByteForByte: with injection off every frame crosses
// unchanged both ways, including ones that are not JSON (relayed and marked
// on a span) and ones over the size limit (relayed unparsed); the end of
// the agent's input reaches the server, and its exit status is the proxy's.
func TestStdioRelayByteForByte(t *testing.T) {
	tel := newTelemetry(t)
	limits := contract.DefaultLimits()
	limits.MaxDocumentBytes = 1000
	p := startStdio(t, proxy.Config{Limits: limits}, tel, "echo")

	if got := p.recv(t); got != `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}` {
		t.Errorf("greeting %s", got)
	}
	if got := p.recv(t); got != "this is not json" {
		t.Errorf("unparseable server line came out as %q", got)
	}
	req := `{"jsonrpc":"2.0", "id":1,"method":"tools/call","params":{"name":"a","arguments":{"n":1.50, "s":"<&>"}}}`
	p.send(t, req)
	if got := p.recv(t); got != `{"jsonrpc":"2.0","id":1,"result":{"echo":true}}` {
		t.Errorf("response %s", got)
	}
	p.send(t, "not json from the agent")
	big := `{"jsonrpc":"2.0","id":2,"method":"test/big","params":{"pad":"` + strings.Repeat("y", 2000) + `"}}`
	p.send(t, big)
	if got := p.recv(t); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":2,"result":{"big":"xxx`) || len(got) < 3000 {
		t.Errorf("oversized response came out as %.80s (%d bytes)", got, len(got))
	}
	p.in.Close()
	if code := <-p.code; code != 7 {
		t.Errorf("exit code %d, want the server's 7", code)
	}
	p.code <- 7 // for the cleanup
	log := p.serverLog(t)
	want := []string{req, "not json from the agent", big}
	if strings.Join(log, "\n") != strings.Join(want, "\n") {
		t.Errorf("the server got\n%q\nwant\n%q", log, want)
	}
	if n := len(tel.named("mcpdrift.proxy unparsed frame")); n != 2 {
		t.Errorf("%d unparsed-frame spans, want 2 (one each way)", n)
	}
	if n := len(tel.named("mcpdrift.proxy oversized frame")); n != 2 {
		t.Errorf("%d oversized-frame spans, want 2", n)
	}
	s := tel.named("tools/call a")
	if len(s) != 1 || str(s[0], semconv.ServerURL) != "stdio:"+os.Args[0]+" -test.run=^$" || str(s[0], semconv.NetworkTransport) != "pipe" {
		t.Errorf("tools/call span %v", s)
	}
}

// TestStdioTraceContext: the agent's traceparent is continued (the proxy's
// span is its child) and replaced by the proxy's own in the forwarded frame.
func TestStdioTraceContext(t *testing.T) {
	tel := newTelemetry(t)
	p := startStdio(t, proxy.Config{InjectTraceContext: true}, tel, "echo")
	p.recv(t)
	p.recv(t)
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},"name":"a"}}`)
	p.recvID(t, "1")
	s := tel.waitNamed(t, "tools/call a", 1)[0]
	if s.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("span parent %s, want the agent's", s.Parent.SpanID())
	}
	want := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-` + s.SpanContext.SpanID().String() + `-01"},"name":"a"}}`
	if got := p.serverLog(t)[0]; got != want {
		t.Errorf("the server got\n%s\nwant\n%s", got, want)
	}
}

// TestStdioExitSignalsAndGroup: the server's exit status is the proxy's; a
// signal is forwarded and the proxy exits 128+signal as the server did;
// the server's own children die with it, also when it exits on its own;
// stderr passes through.
func TestStdioExitSignalsAndGroup(t *testing.T) {
	t.Run("exit status", func(t *testing.T) {
		p := startStdio(t, proxy.Config{}, newTelemetry(t), "echo")
		p.send(t, `{"jsonrpc":"2.0","id":1,"method":"test/stderr"}`)
		p.recvID(t, "1")
		// The server leaves a child of its own behind when it exits: the
		// proxy ends it with the group (startStdio's leftover check).
		p.send(t, `{"jsonrpc":"2.0","id":9,"method":"test/spawn"}`)
		p.recvID(t, "9")
		p.send(t, `{"jsonrpc":"2.0","id":2,"method":"test/exit","params":{"code":3}}`)
		code := <-p.code
		p.code <- code
		if code != 3 {
			t.Errorf("exit code %d, want 3", code)
		}
		if !strings.Contains(p.stderr.String(), "to stderr") {
			t.Errorf("stderr %q", p.stderr.String())
		}
	})
	t.Run("signal and group", func(t *testing.T) {
		p := startStdio(t, proxy.Config{}, newTelemetry(t), "echo")
		p.send(t, `{"jsonrpc":"2.0","id":1,"method":"test/spawn"}`)
		var res struct {
			Result struct{ PID int } `json:"result"`
		}
		if err := json.Unmarshal([]byte(p.recvID(t, "1")), &res); err != nil || res.Result.PID == 0 {
			t.Fatalf("spawn: %v", err)
		}
		p.sigs <- syscall.SIGTERM
		code := <-p.code
		p.code <- code
		if code != 128+int(syscall.SIGTERM) {
			t.Errorf("exit code %d, want %d", code, 128+int(syscall.SIGTERM))
		}
		exited(t, res.Result.PID, "the server's child %d to be gone", res.Result.PID)
	})
}

// TestStdioOwnAnswersUnreadable: the proxy's own relist gets an answer it
// cannot read (a definition nesting too deep to parse; one over the
// document limit, relayed in pieces). Neither may reach the agent, which
// never sent their ids, and the relay goes on: the agent's own requests
// are answered, and the proxy exits with the server.
func TestStdioOwnAnswersUnreadable(t *testing.T) {
	for listing, limit := range map[string]int{"deep": 1 << 20, "big": 1000} {
		t.Run(listing, func(t *testing.T) {
			t.Setenv(testchild.Listing, listing)
			limits := contract.DefaultLimits()
			limits.MaxDocumentBytes = limit
			p := startStdio(t, proxy.Config{Limits: limits, RelistInterval: 10 * time.Millisecond}, newTelemetry(t), "echo")
			p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`)
			p.recvID(t, "1")
			p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			p.awaitServerLog(t, "the proxy did not relist", func(log []string) bool {
				n := 0
				for _, l := range log {
					if strings.Contains(l, `"mcpdrift-proxy-`) {
						n++
					}
				}
				return n >= 3
			})
			p.send(t, `{"jsonrpc":"2.0","id":2,"method":"test/after"}`)
			if line := p.recv(t); line != `{"jsonrpc":"2.0","id":2,"result":{"echo":true}}` {
				t.Errorf("the agent got %.80s, want the answer to its request", line)
			}
			p.in.Close()
			if code := <-p.code; code != 7 {
				t.Errorf("exit code %d, want the server's 7", code)
			}
			p.code <- 7
		})
	}
}

// TestStdioAgentStopsReading: an agent that closes its side and no longer
// reads (the server's last answer is still on its way to it) does not keep
// the proxy alive after the server exits: the proxy gives up on that
// answer after ShutdownGrace.
func TestStdioAgentStopsReading(t *testing.T) {
	p := startStdio(t, proxy.Config{ShutdownGrace: 100 * time.Millisecond}, newTelemetry(t), "echo")
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"test/unread"}`)
	p.awaitServerLog(t, "the request did not reach the server", func(log []string) bool {
		return strings.Contains(strings.Join(log, "\n"), "test/unread")
	})
	p.in.Close()
	select {
	case code := <-p.code:
		p.code <- code
		if code != 7 {
			t.Errorf("exit code %d, want the server's 7", code)
		}
	case <-time.After(20 * time.Second):
		t.Error("the proxy outlived its server, waiting on an agent that stopped reading")
	}
}

// TestStdioProxyKilled: a host that SIGKILLs the proxy (no signal to
// forward) does not leave the server running, even one that ignores the
// end of its input (sleep).
func TestStdioProxyKilled(t *testing.T) {
	testservers.MarkProcesses(t)
	// The server says it started on a FIFO, then becomes sleep (same pid).
	started := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(started, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), testchild.Env+"=proxy",
		`MCPDRIFT_PROXY_TEST_SERVER=["sh","-c","echo > \"$0\"; exec sleep 300",`+strconv.Quote(started)+`]`)
	in, err := cmd.StdinPipe() // held open: the proxy does not see its input end
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	opened := make(chan error, 1)
	go func() { _, err := os.ReadFile(started); opened <- err }() // returns once the server wrote
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-opened:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the proxy did not start its server")
	}
	server := childOf(cmd.Process.Pid)
	if server == 0 {
		t.Fatal("the proxy has no child")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	exited(t, server, "the server %d to die with the proxy", server)
}

// childOf is a child process of pid, or 0.
func childOf(pid int) int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		if fs := strings.Fields(string(b)); len(fs) > 0 {
			n, _ := strconv.Atoi(fs[0])
			return n
		}
	}
	return 0
}

// TestStdioLockHostileListings: with --lock, a server's listing the proxy
// cannot read (nesting too deep; over the document limit, which the relay
// would pass in pieces unread) does not reach the agent (it gets an error),
// and one under the agent's id written as a string ("2" for 2, which the
// TypeScript SDK takes as its answer) loses its unapproved tool like any
// other.
func TestStdioLockHostileListings(t *testing.T) {
	lock := writeLock(t, map[string]string{"a": `{"name":"a","inputSchema":{"type":"object"}}`})
	unreadable := `{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"mcpdrift proxy: the server`
	for listing, want := range map[string]string{
		"deep":     unreadable,
		"big":      unreadable,
		"stringid": `{"jsonrpc":"2.0","id":"2","result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}`,
	} {
		t.Run(listing, func(t *testing.T) {
			t.Setenv(testchild.Listing, listing)
			limits := contract.DefaultLimits()
			if listing == "big" {
				limits.MaxDocumentBytes = 2000 // relayed in pieces (its id first)
			}
			p := startStdio(t, proxy.Config{Lock: lock, Limits: limits}, newTelemetry(t), "echo")
			p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`)
			p.recvID(t, "1")
			p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			var got string
			for got == "" || strings.Contains(got, "notifications/") || got == "this is not json" {
				got = p.recv(t)
			}
			if !strings.HasPrefix(got, want) {
				t.Errorf("the agent got %.200s\nwant %s", got, want)
			}
			p.in.Close()
			<-p.code
			p.code <- 7
		})
	}
}

// TestStdioLockOversizedRequest: with --lock, an agent's frame over the
// document limit, which the gate cannot judge, is not streamed to the
// server unread: the request gets an error.
func TestStdioLockOversizedRequest(t *testing.T) {
	lock := writeLock(t, map[string]string{"echo": `{"name":"echo","inputSchema":{"type":"object"}}`})
	limits := contract.DefaultLimits()
	limits.MaxDocumentBytes = 2000 // (the lock file is read within it too)
	p := startStdio(t, proxy.Config{Lock: lock, Limits: limits}, newTelemetry(t), "echo")
	sent := make(chan error, 1)
	go func() { // the error comes while the frame is still being written
		_, err := io.WriteString(p.in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"secret","arguments":{"pad":"`+strings.Repeat("x", 5000)+"\"}}}\n")
		sent <- err
	}()
	if got := p.recvID(t, "2"); !strings.Contains(got, `"error"`) || !strings.Contains(got, "cannot be judged against --lock") {
		t.Errorf("the agent got %.200s", got)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	p.in.Close()
	io.Copy(io.Discard, p.out)
	<-p.code
	p.code <- 7
	for _, line := range p.serverLog(t) {
		if strings.Contains(line, "secret") {
			t.Errorf("the server got %.100s", line)
		}
	}
}

// TestStdioLockUnclearCalls: with --lock, a tools/call naming its tool
// twice (the server would run the last) or carrying no id never reaches the
// server; the agent gets a JSON-RPC error (id null for the one without).
func TestStdioLockUnclearCalls(t *testing.T) {
	lock := writeLock(t, map[string]string{"echo": `{"name":"echo","inputSchema":{"type":"object"}}`})
	p := startStdio(t, proxy.Config{Lock: lock}, newTelemetry(t), "echo")
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","name":"secret"}}`)
	if got := p.recvID(t, "2"); !strings.Contains(got, `"error"`) || !strings.Contains(got, "TOOL_NOT_APPROVED") {
		t.Errorf("the agent got %s", got)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"secret"}}`)
	p.in.Close()
	if rest, _ := io.ReadAll(p.out); !strings.Contains(string(rest), `"id":null,"error"`) {
		t.Errorf("the call without an id: the agent got %q", rest)
	}
	<-p.code
	p.code <- 7
	for _, line := range p.serverLog(t) {
		if strings.Contains(line, "secret") {
			t.Errorf("the server got %s", line)
		}
	}
}
