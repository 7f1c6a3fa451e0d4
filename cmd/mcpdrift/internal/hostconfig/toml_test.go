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
		"crlf":                     "model = \"o3\"\r\n\r\n[mcp_servers.a]\r\ncommand = \"npx\"\r\nargs = [\"-y\", \"x\"]\r\n",
		"no final newline":         "[mcp_servers.a]\ncommand = \"npx\"",
		"quotes in value":          "[mcp_servers.a]\ncommand = '''odd ''x'' '''\nargs = [\"it's\", 'C:\\path']\n",
		"quoted name":              "[mcp_servers.\"my server\"]\ncommand = \"x\"\n\n[mcp_servers.\"my server\".env]\n\"A B\" = \"c\"\n",
		"multi-line array":         "[mcp_servers.a]\ncommand = \"x\"\nargs = [\n  \"one\", # first\n  \"two\",\n]\n# trailing comment\n\n[other]\nk = 1\n",
		"dotted env keys":          "[mcp_servers.a]\ncommand = \"x\"\nenv.K = \"v\"\ntools.echo.approval_mode = \"approve\"\n",
		"unicode":                  "[mcp_servers.\"é\"]\ncommand = \"caf\\u00e9\"\nargs = [\"\u2028\"]\n",
		"ends in quote":            "[mcp_servers.a]\ncommand = 'x'",
		"tab and del":              "[mcp_servers.a]\ncommand = \"x\\t\\u007f\"\n",
		"inline table":             "[mcp_servers]\na = { command = \"npx\", args = [\n  \"-y\", # why\n  \"x\",\n], env = { K = \"v\" }, cwd = '/w' } # mine\nb = 1\n",
		"dotted inline":            "mcp_servers.a = {command='x'}",
		"dotted keys":              "[mcp_servers]\na.command = \"npx\" # why\n# between\na.args = [\"-y\", \"x\"]\na.env.K = \"v\"\na.cwd = '/w'\n\n[other]\nk = 1\n",
		"dotted at root":           "mcp_servers.a.command = \"npx\"\nmcp_servers.a.env = { K = \"v\" }\nmodel = \"o3\"\n\n[other]\nk = 1\n",
		"dotted, no final newline": "[mcp_servers]\na.command = \"npx\"",
		"dotted crlf":              "[mcp_servers]\r\na.command = \"npx\"\r\na.args = [\"x\"]\r\n",
		"inline, blank end":        "[mcp_servers]\na = { command = \"npx\" }\n\n",
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

// Servers written as inline tables and dotted keys keep their stash in a
// top-level table at the end of the file, which a host that rewrites
// mcp_servers keeps: several of them, in a file with or without a final
// line break, come back byte for byte.
func TestTOMLStashAtTheEnd(t *testing.T) {
	for _, src := range []string{
		"[mcp_servers]\na = { command = \"x\" }\nb.command = \"y\"\nb.args = [\"z\"]\n\n[mcp_servers.c]\ncommand = \"w\"\n",
		"[mcp_servers]\na = { command = \"x\" }\nb.command = \"y\"",
	} {
		res, err := TOML.Wrap([]byte(src), testOptions)
		if err != nil || res.Count(Wrapped) != len(res.Servers) {
			t.Fatalf("%q: %v %v", src, err, res.Servers)
		}
		out := string(res.Out)
		if strings.Count(out, "[x-mcpdrift.") != len(res.Servers) || !strings.Contains(out, "\n\n[x-mcpdrift.a]\n") || !strings.Contains(out, "'''\n\n[x-mcpdrift.b]\n") {
			t.Errorf("the stash tables:\n%s", out)
		}
		if terminated([]byte(src)) != terminated(res.Out) {
			t.Errorf("the final line break changed:\n%q", out)
		}
		back, err := TOML.Unwrap(res.Out, nil, false)
		if err != nil || string(back.Out) != src {
			t.Errorf("unwrap (%v) gave\n%q\nwant\n%q", err, back.Out, src)
		}
	}
}

// codex-config.rewritten.toml is what Codex 0.171 made of
// codex-config.wrapped.toml when `codex mcp add added -- npx added-server`
// rewrote it: mcp_servers moved after the stash tables, without comments,
// its keys unknown to Codex dropped, the dotted-key server written as a
// [mcp_servers.memory] table. unwrap needs no backup: every server gets its
// original keys and values back (the dotted-key one as a table of them),
// no stash table is left, nor a run of blank lines where they were.
func TestTOMLUnwrapAfterCodexRewrite(t *testing.T) {
	res, err := TOML.Unwrap(readHost(t, "codex-config.rewritten.toml"), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Action{"everything": Unwrapped, "figma": Unwrapped, "notion": Unwrapped, "inline": Unwrapped, "memory": Unwrapped, "scoped": Skipped, "added": Skipped}
	for _, o := range res.Servers {
		if want[o.Server] != o.Action {
			t.Errorf("%s: %s (%s), want %s", o.Server, o.Action, o.Reason, want[o.Server])
		}
	}
	out := string(res.Out)
	if strings.Contains(out, StashKey) || strings.Contains(out, "mcpdrift") || strings.Contains(out, "\n\n\n") {
		t.Errorf("unwrap left:\n%s", out)
	}
	var got, orig struct {
		Servers map[string]map[string]any `toml:"mcp_servers"`
	}
	if err := toml.Unmarshal(res.Out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := toml.Unmarshal(readHost(t, "codex-config.toml"), &orig); err != nil {
		t.Fatal(err)
	}
	for name, v := range orig.Servers {
		if tomlDigest(got.Servers[name]) != tomlDigest(v) {
			t.Errorf("%s: %v, want %v", name, got.Servers[name], v)
		}
	}
	for _, line := range []string{"[mcp_servers.memory]\ncommand = \"npx\"\n", "\nenv.MEMORY_FILE_PATH = ", "inline = { command = \"uvx\", args = [\"mcp-server-time\"] }\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("no %q in\n%s", line, out)
		}
	}
}

// A server the host rewrote in a form its original cannot be put back as
// (a table that became dotted keys) is left wrapped, with its stash, and
// named.
func TestTOMLUnwrapFormChanged(t *testing.T) {
	res, err := TOML.Wrap([]byte("[mcp_servers.a]\ncommand = \"x\"\n"), Options{Command: "mcpdrift"})
	if err != nil {
		t.Fatal(err)
	}
	stash := string(res.Out[strings.Index(string(res.Out), "[x-mcpdrift.a]"):])
	dotted := "[mcp_servers]\na.command = \"mcpdrift\"\na.args = [\"proxy\", \"--server-name\", \"a\", \"--server-command\", \"x\"]\n\n" + stash
	back, err := TOML.Unwrap([]byte(dotted), nil, false)
	if err != nil || back.Changed() || back.Count(Refused) != 1 || !strings.Contains(back.Servers[0].Reason, "written as dotted keys since wrap") {
		t.Errorf("%v %+v", err, back)
	}
}

// A file wrapped before the stash of an inline table moved to the end of
// the file (an x-mcpdrift key inside the table) still unwraps.
func TestTOMLUnwrapMemberStash(t *testing.T) {
	orig := `{ command = "uvx", args = ["mcp-server-time"] }`
	wrapped := `{ command = "mcpdrift", args = ["proxy", "--server-name", "t", "--server-command", "uvx", "--server-arg=mcp-server-time"] }`
	var v map[string]map[string]any
	if err := toml.Unmarshal([]byte("t = "+wrapped), &v); err != nil {
		t.Fatal(err)
	}
	stash := `, x-mcpdrift = { wrapped = "` + tomlDigest(v["t"]) + `", original = ` + tomlQuote(orig) + ` } }`
	src := "[mcp_servers]\nt = " + strings.TrimSuffix(wrapped, " }") + stash + "\n"
	res, err := TOML.Unwrap([]byte(src), nil, false)
	if err != nil || res.Count(Unwrapped) != 1 || string(res.Out) != "[mcp_servers]\nt = "+orig+"\n" {
		t.Errorf("%v %v\n%s", err, res.Servers, res.Out)
	}
}
