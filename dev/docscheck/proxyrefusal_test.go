package docscheck

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// demoSwitchingURL is how the docs write the quickstart's demo server that
// serves v1 and switches to v2 (it announces the change with
// notifications/tools/list_changed).
const demoSwitchingURL = "http://127.0.0.1:18080/mcp"

// proxyRefusal plays the agent in front of `mcpdrift proxy ARGS`: it lists
// the demo server's tools while the server serves v1, the server switches to
// v2, and once the proxy passes on list_changed the agent calls create_ticket
// with the arguments it planned on v1. The output is that call's result, one
// top-level member a line, digests elided as the docs elide them.
func (s *scene) proxyRefusal(t *testing.T, args []string) string {
	t.Helper()
	url, server := s.demoServer(t, "v1")
	args = slices.Clone(args)
	for i, a := range args {
		if a == demoSwitchingURL {
			args[i] = url
		}
	}
	if !slices.Contains(args, url) {
		t.Fatalf("%q: a proxy command names the demo server as %s", strings.Join(args, " "), demoSwitchingURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.build(t, "./cmd/mcpdrift"), args[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil && ctx.Err() == nil {
			t.Logf("proxy: %v\n%s", err, stderr.String())
		}
	}()

	frames := make(chan map[string]json.RawMessage)
	go func() {
		defer close(frames)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
		for sc.Scan() {
			var f map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &f) == nil {
				select {
				case frames <- f:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	send := func(frame string) {
		t.Helper()
		if _, err := io.WriteString(stdin, frame+"\n"); err != nil {
			t.Fatalf("writing to the proxy: %v\n%s", err, stderr.String())
		}
	}
	// await reads frames until one has key with value want.
	await := func(key, want string) map[string]json.RawMessage {
		t.Helper()
		for {
			select {
			case f, ok := <-frames:
				if !ok {
					t.Fatalf("the proxy closed its output before %s %s\n%s", key, want, stderr.String())
				}
				if string(f[key]) == want {
					if e := f["error"]; e != nil {
						t.Fatalf("%s %s: error %s", key, want, e)
					}
					return f
				}
			case <-ctx.Done():
				t.Fatalf("no %s %s from the proxy\n%s", key, want, stderr.String())
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"docscheck","version":"1"}}}`)
	await("id", "1")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	await("id", "2")
	if err := server.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	await("method", `"notifications/tools/list_changed"`)
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_ticket","arguments":{"title":"example"}}}`)
	return memberLines(t, await("id", "3")["result"])
}

// digestMember is a digest in a refusal's structuredContent.
var digestMember = regexp.MustCompile(`("(?:planned|current)_digest":)"[0-9a-f]{64}"`)

// memberLines writes a JSON object compactly, one top-level member a line,
// in the order it came in.
func memberLines(t *testing.T, obj json.RawMessage) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", obj)
	}
	var members []string
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, value); err != nil {
			t.Fatal(err)
		}
		name, _ := json.Marshal(key)
		members = append(members, fmt.Sprintf("%s:%s", name, digestMember.ReplaceAllString(compact.String(), `$1"…"`)))
	}
	return "{" + strings.Join(members, ",\n ") + "}\n"
}
