package hostconfig

import (
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// Hostile and odd config.toml files: each round trip gives the bytes back,
// and a second wrap changes nothing.
func TestTOMLRoundTripOddFiles(t *testing.T) {
	for name, src := range map[string]string{
		"crlf":             "model = \"o3\"\r\n\r\n[mcp_servers.a]\r\ncommand = \"npx\"\r\nargs = [\"-y\", \"x\"]\r\n",
		"no final newline": "[mcp_servers.a]\ncommand = \"npx\"",
		"quotes in value":  "[mcp_servers.a]\ncommand = '''odd ''x'' '''\nargs = [\"it's\", 'C:\\path']\n",
		"quoted name":      "[mcp_servers.\"my server\"]\ncommand = \"x\"\n\n[mcp_servers.\"my server\".env]\n\"A B\" = \"c\"\n",
		"multi-line array": "[mcp_servers.a]\ncommand = \"x\"\nargs = [\n  \"one\", # first\n  \"two\",\n]\n# trailing comment\n\n[other]\nk = 1\n",
		"dotted env keys":  "[mcp_servers.a]\ncommand = \"x\"\nenv.K = \"v\"\ntools.echo.approval_mode = \"approve\"\n",
		"unicode":          "[mcp_servers.\"é\"]\ncommand = \"caf\\u00e9\"\nargs = [\"\u2028\"]\n",
		"ends in quote":    "[mcp_servers.a]\ncommand = 'x'",
		"tab and del":      "[mcp_servers.a]\ncommand = \"x\\t\\u007f\"\n",
		"inline table":     "[mcp_servers]\na = { command = \"npx\", args = [\n  \"-y\", # why\n  \"x\",\n], env = { K = \"v\" }, cwd = '/w' } # mine\nb = 1\n",
		"dotted inline":    "mcp_servers.a = {command='x'}",
	} {
		t.Run(name, func(t *testing.T) {
			o := Options{Command: "/opt/mcpdrift", Env: []EnvVar{{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}}}
			res, err := TOML.Wrap([]byte(src), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Count(Wrapped) != 1 {
				t.Fatalf("outcomes %v", res.Servers)
			}
			var doc map[string]any
			if err := toml.Unmarshal(res.Out, &doc); err != nil {
				t.Fatalf("the wrapped file does not parse: %v\n%s", err, res.Out)
			}
			if again, err := TOML.Wrap(res.Out, o); err != nil || again.Changed() {
				t.Errorf("wrapping twice changed the file (%v)", err)
			}
			back, err := TOML.Unwrap(res.Out, nil, false)
			if err != nil || string(back.Out) != src {
				t.Errorf("unwrap (%v) gave\n%q\nwant\n%q", err, back.Out, src)
			}
		})
	}
}

// The wrapped table runs the proxy with the server's command line in
// flags, keeps Codex's other keys, and passes the variables it needs.
func TestTOMLWrappedEntries(t *testing.T) {
	res, err := TOML.Wrap(readHost(t, "codex-config.toml"), testOptions)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Servers map[string]struct {
			Command string            `toml:"command"`
			Args    []string          `toml:"args"`
			Env     map[string]string `toml:"env"`
			EnvVars []string          `toml:"env_vars"`
			Cwd     string            `toml:"cwd"`
			URL     string            `toml:"url"`
		} `toml:"mcp_servers"`
	}
	if err := toml.Unmarshal(res.Out, &doc); err != nil {
		t.Fatal(err)
	}
	e := doc.Servers["everything"]
	if e.Command != "mcpdrift" || e.Cwd != "/home/dev/servers" || e.Env["LOG_LEVEL"] != "info" ||
		strings.Join(e.Args, " ") != "proxy --server-name everything --on-stale refuse --server-command npx --server-arg=-y --server-arg=@modelcontextprotocol/server-everything" {
		t.Errorf("everything: %+v", e)
	}
	f := doc.Servers["figma"]
	if f.URL != "" || !strings.Contains(strings.Join(f.Args, " "), "--bearer-token-env FIGMA_OAUTH_TOKEN") ||
		strings.Join(f.EnvVars, ",") != "FIGMA_TEAM,FIGMA_OAUTH_TOKEN" || f.Env["MCPDRIFT_HEADER_X_FIGMA_REGION"] != "us-east-1" {
		t.Errorf("figma: %+v", f)
	}
	for _, a := range f.Args {
		if strings.Contains(a, "us-east-1") {
			t.Errorf("a header value reached argv: %q", a)
		}
	}
}

// A hand edit of a wrapped table is not undone; a damaged file is refused
// untouched; forms wrap does not edit are named.
func TestTOMLRefusals(t *testing.T) {
	src := "[mcp_servers.a]\ncommand = \"npx\"\n"
	res, err := TOML.Wrap([]byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(res.Out), `"--server-name", "a"`, `"--server-name", "b"`, 1)
	back, err := TOML.Unwrap([]byte(edited), nil, false)
	if err != nil || back.Count(Refused) != 1 || back.Changed() {
		t.Errorf("unwrap of an edited table: %v %v", err, back.Servers)
	}
	reformatted := strings.Replace(string(res.Out), `command = "mcpdrift"`, "command   =   'mcpdrift'   # mine", 1)
	if back, err := TOML.Unwrap([]byte(reformatted), nil, false); err != nil || back.Count(Unwrapped) != 1 || string(back.Out) != src {
		t.Errorf("a reformatted table was taken for an edit: %v %v", err, back.Servers)
	}
	if forced, err := TOML.Unwrap([]byte(edited), nil, true); err != nil || string(forced.Out) != src {
		t.Errorf("--force: %v", err)
	}
	for _, c := range []struct{ src, want string }{
		{"[mcp_servers.a]\ncommand = \"x\"\n[mcp_servers.a]\n", "line 3"},
		{"[mcp_servers.a\ncommand = 1", "line 1"},
		{"model = \"o3\"\n", "no [mcp_servers.NAME] table"},
		{"mcp_servers = 1\n", "not a table"},
	} {
		if _, err := TOML.Wrap([]byte(c.src), Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.src, err, c.want)
		}
	}
	split := "[mcp_servers.a]\ncommand = \"x\"\n[other]\nk = 1\n[mcp_servers.a.env]\nK = \"v\"\n"
	if res, err := TOML.Wrap([]byte(split), Options{}); err != nil || res.Changed() || !strings.Contains(res.Servers[0].Reason, "not together") {
		t.Errorf("split table: %v %+v", err, res)
	}
}
