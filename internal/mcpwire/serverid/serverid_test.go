package serverid

import "testing"

func TestURL(t *testing.T) {
	for _, c := range []struct {
		endpoint string
		command  []string
		want     string
	}{
		{endpoint: "https://user:pass@h.example:8443/mcp?token=abc#frag", want: "https://h.example:8443/mcp"},
		{endpoint: "http://h.example/mcp?", want: "http://h.example/mcp"},
		// An @ in the path is no user info: the whole path stays.
		{endpoint: "https://h.example/users/@me/mcp?k=v", want: "https://h.example/users/@me/mcp"},
		{endpoint: "https://u@h.example/a@b", want: "https://h.example/a@b"},
		{endpoint: "http://[::1]:3001/mcp", want: "http://[::1]:3001/mcp"},
		{endpoint: "http://h.example/%zz", want: ""},
		{command: []string{"npx", "-y", "@modelcontextprotocol/server-everything"}, want: "stdio:npx -y @modelcontextprotocol/server-everything"},
		{command: []string{"server"}, want: "stdio:server"},
		{command: []string{}, want: ""},
		{command: []string{""}, want: ""},
		{endpoint: "http://h.example/mcp", command: []string{"ignored"}, want: "http://h.example/mcp"},
	} {
		if got := URL(c.endpoint, c.command); got != c.want {
			t.Errorf("URL(%q, %q) = %q, want %q", c.endpoint, c.command, got, c.want)
		}
	}
}

func TestDisplay(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pass@h.example/mcp?token=abc": "https://h.example/mcp",
		"http://h.example/%zz?token=abc":            "(invalid URL)",
		"":                                          "",
	} {
		if got := Display(in); got != want {
			t.Errorf("Display(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:p@Example.COM:443/mcp/?q=1#f": "https://example.com/mcp",
		"http://example.com:80":                  "http://example.com",
		"HTTP://example.com:80/":                 "http://example.com",
		"http://example.com:8080/sse":            "http://example.com:8080/sse",
		"wss://example.com:443/ws":               "wss://example.com/ws",
		"http://[::1]:3001/mcp":                  "http://[::1]:3001/mcp",
		"http://[::1]/mcp":                       "http://[::1]/mcp",
		"http://[::1]:80/mcp":                    "http://[::1]/mcp",
		"foo://example.com:0/x":                  "foo://example.com:0/x",
		"https://h.example/users/@me/mcp":        "https://h.example/users/@me/mcp",
		" stdio:npx -y server ":                  "stdio:npx -y server",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every spelling of one endpoint, redacted as the emitters do, normalizes
// to one key: what the processor compares.
func TestRedactedSpellingsMeet(t *testing.T) {
	spellings := []string{
		"https://mcp.example.com/mcp",
		"https://mcp.example.com:443/mcp/",
		"https://bot:s3cret@MCP.example.com/mcp?api_key=k#x",
		"HTTPS://mcp.example.com/mcp",
	}
	want := Normalize(spellings[0])
	for _, s := range spellings {
		if got := Normalize(URL(s, nil)); got != want {
			t.Errorf("Normalize(URL(%q)) = %q, want %q", s, got, want)
		}
	}
}

func TestHostPort(t *testing.T) {
	for _, c := range []struct {
		in   string
		host string
		port int
	}{
		{"https://h.example/mcp", "h.example", 443},
		{"http://h.example/mcp", "h.example", 80},
		{"ws://h.example", "h.example", 80},
		{"http://h.example:3001/mcp", "h.example", 3001},
		{"http://[::1]:3001/mcp", "::1", 3001},
		{"foo://h.example/x", "h.example", 0},
		{"stdio:server", "", 0},
		{"http://h.example/%zz", "", 0},
	} {
		host, port := HostPort(c.in)
		if host != c.host || port != c.port {
			t.Errorf("HostPort(%q) = %q, %d, want %q, %d", c.in, host, port, c.host, c.port)
		}
	}
}
