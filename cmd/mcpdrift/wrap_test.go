package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// hostSample copies a sample host config (internal/hostconfig/testdata/hosts)
// into a fresh directory with the given mode.
func hostSample(t *testing.T, name string, mode os.FileMode) (path string, content []byte) {
	t.Helper()
	content, err := os.ReadFile(filepath.Join("internal", "hostconfig", "testdata", "hosts", name))
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, content, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return path, content
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// wrap writes a backup and the wrapped file with the file's mode; a second
// wrap changes nothing and writes no backup; unwrap restores the original
// byte for byte, keeping the first backup; wrap/unwrap cycles leave that one
// backup, not one each.
func TestWrapUnwrapFile(t *testing.T) {
	path, orig := hostSample(t, "mcp.json", 0o640)
	code, out, errOut := cli(t, "", "wrap", "--mcpdrift", "/opt/mcpdrift/bin/mcpdrift", "--on-stale", "refuse", "--lock", "mcp.lock.json", path)
	if code != exitOK || out != "" {
		t.Fatalf("wrap: exit %d, stdout %q\n%s", code, out, errOut)
	}
	for _, want := range []string{"wrapped   everything (stdio)", "wrapped   api (http)", "wrapped   asana (sse)", `skipped   slack: it signs in through the host ("oauth")`, "backup: " + path + ".mcpdrift.bak"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("wrap output lacks %q:\n%s", want, errOut)
		}
	}
	backup := path + ".mcpdrift.bak"
	if string(readBytes(t, backup)) != string(orig) || mode(t, backup) != 0o640 {
		t.Errorf("backup: mode %v", mode(t, backup))
	}
	wrapped := readBytes(t, path)
	if mode(t, path) != 0o640 {
		t.Errorf("the wrapped file has mode %v, want 0640", mode(t, path))
	}
	lockAbs, _ := filepath.Abs("mcp.lock.json")
	for _, want := range []string{`"command": "/opt/mcpdrift/bin/mcpdrift"`, `"--lock", "` + lockAbs + `"`, `"--on-stale", "refuse"`} {
		if !strings.Contains(string(wrapped), want) {
			t.Errorf("wrapped file lacks %s:\n%s", want, wrapped)
		}
	}

	code, _, errOut = cli(t, "", "wrap", "--mcpdrift", "/opt/mcpdrift/bin/mcpdrift", path)
	if code != exitOK || !strings.Contains(errOut, "nothing to change") || string(readBytes(t, path)) != string(wrapped) {
		t.Errorf("second wrap: exit %d\n%s", code, errOut)
	}
	if backups, _ := filepath.Glob(path + ".*bak*"); len(backups) != 1 {
		t.Errorf("backups after a wrap that changed nothing: %v", backups)
	}

	code, _, errOut = cli(t, "", "unwrap", path)
	if code != exitOK || string(readBytes(t, path)) != string(orig) || mode(t, path) != 0o640 {
		t.Fatalf("unwrap: exit %d, mode %v\n%s\n%s", code, mode(t, path), errOut, readBytes(t, path))
	}
	if string(readBytes(t, backup)) != string(orig) {
		t.Error("unwrap overwrote the first backup")
	}
	for range 2 {
		if code, _, errOut := cli(t, "", "wrap", path); code != exitOK {
			t.Fatal(errOut)
		}
		if code, _, errOut := cli(t, "", "unwrap", path); code != exitOK {
			t.Fatal(errOut)
		}
	}
	if backups, _ := filepath.Glob(path + ".*bak*"); len(backups) != 1 || string(readBytes(t, backup)) != string(orig) {
		t.Errorf("backups after wrap/unwrap cycles: %v", backups)
	}
	// Edited after an unwrap, the file is backed up afresh by the next wrap.
	edited := strings.Replace(string(orig), `"everything"`, `"everything2"`, 1)
	if err := os.WriteFile(path, []byte(edited), 0o640); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli(t, "", "wrap", path); code != exitOK || string(readBytes(t, backup)) != edited {
		t.Errorf("wrap after an edit: exit %d, backup not renewed\n%s", code, errOut)
	}
}

// --dry-run prints a diff that patch(1) applies to give what wrap writes,
// and writes nothing.
func TestWrapDryRun(t *testing.T) {
	path, orig := hostSample(t, "vscode-mcp.json", 0o600)
	code, diff, errOut := cli(t, "", "wrap", "--dry-run", "--mcpdrift", "mcpdrift", path)
	if code != exitOK || !strings.HasPrefix(diff, "--- "+path+"\n+++ "+path+"\n@@ ") {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, diff, errOut)
	}
	if string(readBytes(t, path)) != string(orig) {
		t.Fatal("--dry-run changed the file")
	}
	if _, err := os.Stat(path + ".mcpdrift.bak"); err == nil {
		t.Error("--dry-run wrote a backup")
	}
	patch, err := exec.LookPath("patch")
	if err != nil {
		testservers.SkipLoudly(t, "patch is not installed, so the dry-run diff was not applied")
	}
	copyPath := filepath.Join(t.TempDir(), "copy.json")
	if err := os.WriteFile(copyPath, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(patch, "--silent", copyPath)
	cmd.Stdin = strings.NewReader(diff)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch: %v\n%s", err, out)
	}
	if code, _, errOut := cli(t, "", "wrap", "--mcpdrift", "mcpdrift", path); code != exitOK {
		t.Fatal(errOut)
	}
	if string(readBytes(t, copyPath)) != string(readBytes(t, path)) {
		t.Error("the dry-run diff does not give what wrap writes")
	}
}

// A file that does not parse is refused with its position and left as it
// was: same bytes, same time, no backup.
func TestWrapMalformedFileUntouched(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "claude_desktop_config.json", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"npx\",}\n    \"b\": {}\n  }\n}\n")
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, past, past); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"wrap", "unwrap"} {
		code, out, errOut := cli(t, "", verb, path)
		if code != exitInput || out != "" || !strings.Contains(errOut, path+":4:5: unexpected '\"', expected ',' or '}'; the file is left as it is") {
			t.Errorf("%s: exit %d\n%s", verb, code, errOut)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.ModTime().Equal(past) {
		t.Errorf("the file was touched: %v %v", err, fi.ModTime())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left beside it: %v", entries)
	}
	if code, _, errOut := cli(t, "", "wrap", filepath.Join(dir, "missing.json")); code != exitInput || !strings.Contains(errOut, "no such file") {
		t.Errorf("missing file: exit %d %s", code, errOut)
	}
	toml := writeFile(t, dir, "config.toml", "[mcp_servers.a]\ncommand = \"x\"\n[mcp_servers.a]\n")
	for _, verb := range []string{"wrap", "unwrap"} {
		if code, _, errOut := cli(t, "", verb, toml); code != exitInput || !strings.Contains(errOut, toml+":3:") || !strings.Contains(errOut, "the file is left as it is") {
			t.Errorf("%s of a malformed config.toml: exit %d\n%s", verb, code, errOut)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("files left beside them: %v", entries)
	}
	other := writeFile(t, dir, "settings.json", `{"editor.fontSize": 12}`)
	if code, _, errOut := cli(t, "", "wrap", other); code != exitInput || !strings.Contains(errOut, "not an MCP client configuration") {
		t.Errorf("not a host config: exit %d %s", code, errOut)
	}
}

// A config kept in a dotfiles repository is a symbolic link: it stays one,
// and its target is rewritten.
func TestWrapThroughSymlink(t *testing.T) {
	target, orig := hostSample(t, "cursor-mcp.json", 0o644)
	link := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli(t, "", "wrap", "--mcpdrift", "mcpdrift", link); code != exitOK {
		t.Fatal(errOut)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if string(readBytes(t, target)) == string(orig) || !strings.Contains(string(readBytes(t, target)), "x-mcpdrift") {
		t.Error("the link's target was not wrapped")
	}
}

// unwrap leaves an entry edited since wrap as it is and exits 1; --force
// restores it.
func TestUnwrapEditedEntry(t *testing.T) {
	path, orig := hostSample(t, "claude_desktop_config.json", 0o600)
	if code, _, errOut := cli(t, "", "wrap", "--mcpdrift", "mcpdrift", path); code != exitOK {
		t.Fatal(errOut)
	}
	wrapped := string(readBytes(t, path))
	edited := strings.Replace(wrapped, `"--server-name", "memory",`, `"--server-name", "memory", "--agent-name", "desk",`, 1)
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := cli(t, "", "unwrap", path)
	if code != exitKept || !strings.Contains(errOut, "refused   memory: it was edited after wrap") || !strings.Contains(errOut, "unwrapped filesystem") {
		t.Fatalf("unwrap of an edited entry: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(string(readBytes(t, path)), `"--agent-name", "desk"`) {
		t.Error("the edit was undone")
	}
	if code, _, errOut := cli(t, "", "unwrap", "--force", path); code != exitOK || string(readBytes(t, path)) != string(orig) {
		t.Fatalf("unwrap --force: exit %d\n%s", code, errOut)
	}
}

func TestWrapUsage(t *testing.T) {
	path, _ := hostSample(t, "mcp.json", 0o600)
	for _, args := range [][]string{
		{"wrap"},
		{"wrap", path, path},
		{"wrap", "--on-stale", "block", path},
		{"wrap", "--env", "NOVALUE", path},
		{"unwrap"},
	} {
		if code, _, errOut := cli(t, "", args...); code != exitUsage || errOut == "" {
			t.Errorf("%v: exit %d %q", args, code, errOut)
		}
	}
}

// Run as root (sudo, or a CI job), wrap keeps the user's ownership of
// their file and gives it to the backup: the host running as that user must
// still read and write it.
func TestWrapKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		testservers.SkipLoudly(t, "not root, so keeping a file's owner across a rewrite was not tested")
	}
	path, _ := hostSample(t, "mcp.json", 0o600)
	const nobody = 65534
	if err := os.Chown(path, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli(t, "", "wrap", "--mcpdrift", "mcpdrift", path); code != exitOK {
		t.Fatal(errOut)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != nobody || st.Gid != nobody || fi.Mode().Perm() != 0o600 {
		t.Errorf("owner %d:%d mode %v, want %d:%d 0600", st.Uid, st.Gid, fi.Mode().Perm(), nobody, nobody)
	}
	if fi, err := os.Stat(path + ".mcpdrift.bak"); err != nil || fi.Sys().(*syscall.Stat_t).Uid != nobody {
		t.Errorf("the backup is not the user's: %v", err)
	}
}

// wrap --list finds each host's files under HOME and the working
// directory, and says how many servers each has and which are wrapped.
func TestWrapList(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CODEX_HOME", "")
	gemini := writeFile(t, filepath.Join(home, ".gemini"), "settings.json", `{"mcpServers": {"a": {"command": "x"}, "b": {"httpUrl": "http://h/mcp"}}}`)
	writeFile(t, filepath.Join(home, ".codex"), "config.toml", "[mcp_servers.c]\ncommand = \"x\"\n")
	writeFile(t, filepath.Join(home, ".cursor"), "mcp.json", `{"mcpServers": `)
	if code, _, errOut := cli(t, "", "wrap", "--mcpdrift", "mcpdrift", "--skip", "b", gemini); code != exitOK {
		t.Fatal(errOut)
	}
	code, out, errOut := cli(t, "", "wrap", "--list")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		"Gemini CLI (gemini-cli, user): " + gemini + ": 2 server(s), 1 wrapped\n",
		"  a                                        wrapped\n",
		"  b                                        not wrapped\n",
		"Codex CLI (codex, user): " + filepath.Join(home, ".codex", "config.toml") + ": 1 server(s), 0 wrapped\n",
		"Cursor (cursor, user): " + filepath.Join(home, ".cursor", "mcp.json") + ": unreadable: ",
		"Zed (zed, user): " + filepath.Join(home, ".config", "zed", "settings.json") + ": not found\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--list lacks %q:\n%s", want, out)
		}
	}
	if code, _, _ := cli(t, "", "wrap", "--list", gemini); code != exitUsage {
		t.Errorf("--list with a FILE: exit %d", code)
	}
}

// The agent is named after the host that reads the file (not its
// clientInfo), --host names the host of a file whose name does not tell,
// and --agent-name wins over both.
func TestWrapNamesTheAgent(t *testing.T) {
	dir := t.TempDir()
	entry := `{"mcpServers": {"a": {"command": "x"}}}`
	for _, c := range []struct {
		file string
		args []string
		want string
	}{
		{filepath.Join(".gemini", "settings.json"), nil, `"--agent-name", "gemini-cli"`},
		{".mcp.json", nil, `"--agent-name", "claude-code"`},
		{filepath.Join("zed", "settings.json"), nil, `"--agent-name", "zed"`},
		{"servers.json", []string{"--host", "cline"}, `"--agent-name", "cline"`},
		{filepath.Join(".cursor", "mcp.json"), []string{"--agent-name", "mine"}, `"--agent-name", "mine"`},
	} {
		path := writeFile(t, filepath.Join(dir, filepath.Dir(c.file)), filepath.Base(c.file), entry)
		args := append(append([]string{"wrap", "--mcpdrift", "mcpdrift"}, c.args...), path)
		if code, _, errOut := cli(t, "", args...); code != exitOK {
			t.Fatalf("%v: %s", args, errOut)
		}
		if got := string(readBytes(t, path)); !strings.Contains(got, c.want) || strings.Count(got, "--agent-name") != 1 {
			t.Errorf("%v: %s", args, got)
		}
		os.Remove(path)
	}
	// A relative name is told by the directory it is in.
	path := writeFile(t, filepath.Join(dir, ".gemini"), "settings.json", entry)
	t.Chdir(filepath.Dir(path))
	if code, _, errOut := cli(t, "", "wrap", "--mcpdrift", "mcpdrift", "settings.json"); code != exitOK || !strings.Contains(string(readBytes(t, path)), `"--agent-name", "gemini-cli"`) {
		t.Errorf("settings.json in .gemini: exit %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "", "wrap", "--host", "emacs", filepath.Join(dir, ".mcp.json")); code != exitUsage || !strings.Contains(errOut, "not one of claude-desktop") {
		t.Errorf("--host emacs: exit %d %s", code, errOut)
	}
}

// A file over the size bound is refused and left as it is; a large one
// (Claude Code's ~/.claude.json grows with history) is wrapped and
// unwrapped byte for byte.
func TestWrapHugeFile(t *testing.T) {
	dir := t.TempDir()
	history := `"history": [` + strings.Repeat(`{"display": "a prompt of the history", "pastedContents": {}},`, 100_000) + `{}]`
	large := `{"mcpServers": {"a": {"command": "x"}}, ` + history + "}\n"
	path := writeFile(t, dir, ".claude.json", large)
	if code, _, errOut := cli(t, "", "wrap", "--mcpdrift", "mcpdrift", path); code != exitOK {
		t.Fatal(errOut)
	}
	if code, _, errOut := cli(t, "", "unwrap", path); code != exitOK || string(readBytes(t, path)) != large {
		t.Fatalf("unwrap: exit %d %s", code, errOut)
	}
	over := large[:len(large)-2] + `, "pad": "` + strings.Repeat("x", maxHostConfigBytes-len(large)+10) + "\"}\n"
	huge := writeFile(t, dir, "big.json", over)
	if code, _, errOut := cli(t, "", "wrap", huge); code != exitInput || !strings.Contains(errOut, "more than") || string(readBytes(t, huge)) != over {
		t.Errorf("a file over the bound: exit %d %s", code, errOut)
	}
}
