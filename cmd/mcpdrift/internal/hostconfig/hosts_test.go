package hostconfig

import (
	"path/filepath"
	"testing"
)

// Every file Locations names is told back to its host by HostOf, so wrap
// names the agent right for each file --list shows.
func TestLocationsAndHostOf(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		env := Env{Home: "/home/u", Cwd: "/home/u/app", GOOS: goos, Getenv: func(k string) string {
			if k == "APPDATA" {
				return "/home/u/AppData/Roaming"
			}
			return ""
		}}
		seen := map[*Host]bool{}
		for _, l := range Locations(env) {
			if got := HostOf(l.Path); got != l.Host {
				t.Errorf("%s: HostOf(%s) = %v, want %s", goos, l.Path, got, l.Host.Name)
			}
			seen[l.Host] = true
		}
		if len(seen) != len(AllHosts) {
			t.Errorf("%s: locations for %d hosts, want %d", goos, len(seen), len(AllHosts))
		}
	}
	for path, want := range map[string]*Host{
		"/tmp/mcp.json":                         nil,
		"/tmp/settings.json":                    nil,
		filepath.Join("/x", ".codex", "a.toml"): Codex,
		"/p/.vscode/mcp.json":                   VSCode,
		"/p/.mcp.json":                          ClaudeCode,
	} {
		if got := HostOf(path); got != want {
			t.Errorf("HostOf(%s) = %v, want %v", path, got, want)
		}
	}
	if HostNamed("gemini-cli") != GeminiCLI || HostNamed("emacs") != nil {
		t.Error("HostNamed")
	}
}
