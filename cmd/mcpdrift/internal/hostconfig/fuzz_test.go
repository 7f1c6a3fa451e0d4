package hostconfig

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzWrapRoundTrip checks the properties wrap promises on any file it
// accepts: unwrap gives the file back byte for byte, wrapping twice changes
// nothing, and the wrapped file parses.
func FuzzWrapRoundTrip(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "hosts", "*.json"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"servers":{"a":{"command":"x","args":[1,true,null,{"k":"\u00e9"}],"env":{}}}}`))
	f.Add([]byte("{\n\t\"mcpServers\": {\n\t\t\"a\": {\n\t\t\t\"url\": \"https://h/mcp\", // c\n\t\t\t\"headers\": {\"A\": \"b\"}\n\t\t}\n\t}\n}"))
	f.Add([]byte(`{"mcpServers":{"a":{"":"","url":"https://h"}}}`)) // a member named "": the digest once skipped it
	f.Add([]byte("{\"mcpServers\": {\"a\": {\"httpUrl\": \"https://h/mcp\"}}, \"x\": 1,}"))
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, top := range []bool{false, true} { // Gemini CLI's top-level stash too
			opts := Options{Command: "mcpdrift", ProxyFlags: []string{"--agent-name", "fuzz"}, Env: []EnvVar{{"K", "v"}}, TopStash: top}
			roundTrip(t, src, opts)
		}
	})
}

func roundTrip(t *testing.T, src []byte, opts Options) {
	{
		res, err := Wrap(src, opts)
		if err != nil {
			return
		}
		if _, _, err := Parse(res.Out); err != nil {
			t.Fatalf("the wrapped file does not parse: %v\n%s", err, res.Out)
		}
		again, err := Wrap(res.Out, opts)
		if err != nil || again.Changed() {
			t.Fatalf("wrapping twice changed the file (%v):\n%s", err, res.Out)
		}
		if pre, _ := Unwrap(src, nil, false); pre.Changed() || pre.Count(Refused) > 0 {
			return // src has wrapped entries already: unwrap restores theirs, not src
		}
		back, err := Unwrap(res.Out, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if back.Count(Refused) > 0 || string(back.Out) != string(src) {
			t.Fatalf("unwrap did not restore the file (%v):\n%q\n%q", back.Servers, src, back.Out)
		}
	}
}

// FuzzTOMLRoundTrip checks the same of config.toml files: no panic, unwrap
// gives the file back byte for byte, wrapping twice changes nothing.
func FuzzTOMLRoundTrip(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "hosts", "codex-config.toml")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("[mcp_servers.a]\ncommand = \"x\"\nargs = ['y']\n[mcp_servers.a.env]\nK = \"v\"\n"))
	f.Add([]byte("[mcp_servers]\na.command = \"x\"\na.env.K = \"v\"\nb = { command = 'y' }"))
	f.Add([]byte("[mcp_servers.\"a b\"]\r\nurl = \"https://h/mcp?k=1\"\r\nhttp_headers = { A = \"b\" }\r\n"))
	opts := Options{Command: "mcpdrift", ProxyFlags: []string{"--agent-name", "fuzz"}, Env: []EnvVar{{"K", "v"}}}
	f.Fuzz(func(t *testing.T, src []byte) {
		res, err := TOML.Wrap(src, opts)
		if err != nil {
			return
		}
		if again, err := TOML.Wrap(res.Out, opts); err != nil || again.Changed() {
			t.Fatalf("wrapping twice changed the file (%v):\n%s", err, res.Out)
		}
		if pre, _ := TOML.Unwrap(src, nil, false); pre.Changed() || pre.Count(Refused) > 0 {
			return // src has wrapped servers already
		}
		back, err := TOML.Unwrap(res.Out, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if back.Count(Refused) > 0 || string(back.Out) != string(src) {
			t.Fatalf("unwrap did not restore the file (%v):\n%q\n%q", back.Servers, src, back.Out)
		}
	})
}
