package hostconfig

import (
	"path/filepath"
	"strings"
)

// Host is an agent host whose MCP configuration wrap edits.
type Host struct {
	// Name is the agent's name on spans (proxy --agent-name), the name
	// the host goes by on the command line.
	Name  string
	Title string
	// TopStash: the host refuses members it does not know in a server
	// entry, so wrap keeps its stash at the top level (Options.TopStash).
	TopStash bool
}

// Hosts wrap knows, by name.
var (
	ClaudeDesktop = &Host{Name: "claude-desktop", Title: "Claude Desktop"}
	ClaudeCode    = &Host{Name: "claude-code", Title: "Claude Code"}
	Cursor        = &Host{Name: "cursor", Title: "Cursor"}
	VSCode        = &Host{Name: "vscode", Title: "VS Code"}
	GeminiCLI     = &Host{Name: "gemini-cli", Title: "Gemini CLI", TopStash: true}
	Codex         = &Host{Name: "codex", Title: "Codex CLI"}
	Windsurf      = &Host{Name: "windsurf", Title: "Windsurf"}
	Zed           = &Host{Name: "zed", Title: "Zed"}
	Cline         = &Host{Name: "cline", Title: "Cline"}
)

// AllHosts in the order wrap --list shows them.
var AllHosts = []*Host{ClaudeDesktop, ClaudeCode, Cursor, VSCode, GeminiCLI, Codex, Windsurf, Zed, Cline}

// HostNamed returns the host called name, or nil.
func HostNamed(name string) *Host {
	for _, h := range AllHosts {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// clineDir is where the Cline extension keeps its settings in VS Code's
// global storage.
const clineDir = "globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"

// HostOf tells the host from a configuration file's path (its name and
// the directory it is in), or returns nil for a file no host is known to
// read under that name.
func HostOf(path string) *Host {
	p := filepath.ToSlash(filepath.Clean(path))
	base := filepath.Base(p)
	dir := filepath.Base(filepath.Dir(p))
	switch {
	case base == "claude_desktop_config.json":
		return ClaudeDesktop
	case base == ".mcp.json", base == ".claude.json":
		return ClaudeCode
	case strings.HasSuffix(base, ".toml") && dir == ".codex":
		return Codex
	case base == "mcp.json" && dir == ".cursor":
		return Cursor
	case base == "mcp.json" && (dir == ".vscode" || dir == "User" || strings.Contains(p, "/profiles/")):
		return VSCode
	case base == "settings.json" && dir == ".gemini":
		return GeminiCLI
	case base == "settings.json" && (dir == "zed" || dir == ".zed" || dir == "Zed"):
		return Zed
	case base == "mcp_config.json" && (dir == "windsurf" || dir == ".windsurf" || dir == ".codeium"):
		return Windsurf
	case base == "cline_mcp_settings.json":
		return Cline
	}
	return nil
}

// Location is a file a host reads its MCP servers from.
type Location struct {
	Host  *Host
	Path  string
	Scope string // "user", "project"
}

// Env is what Locations needs of the environment: HOME and the like, the
// working directory, and the operating system.
type Env struct {
	Home, Cwd, GOOS string
	Getenv          func(string) string
}

// Locations returns where each host keeps its MCP configuration on this
// machine, user files first, then those of the project in Cwd. Whether a
// file exists is for the caller to find out.
func Locations(e Env) []Location {
	home := func(p ...string) string { return filepath.Join(append([]string{e.Home}, p...)...) }
	cwd := func(p ...string) string { return filepath.Join(append([]string{e.Cwd}, p...)...) }
	// appData is where desktop apps keep their settings: Application
	// Support on macOS, %APPDATA% on Windows, XDG_CONFIG_HOME elsewhere.
	appData := home(".config")
	switch e.GOOS {
	case "darwin":
		appData = home("Library", "Application Support")
	case "windows":
		if v := e.Getenv("APPDATA"); v != "" {
			appData = v
		}
	default:
		if v := e.Getenv("XDG_CONFIG_HOME"); v != "" {
			appData = v
		}
	}
	xdg := home(".config") // Zed reads ~/.config/zed on macOS too
	if v := e.Getenv("XDG_CONFIG_HOME"); v != "" && e.GOOS != "darwin" {
		xdg = v
	}
	if e.GOOS == "windows" {
		xdg = appData
	}
	codexHome := home(".codex")
	if v := e.Getenv("CODEX_HOME"); v != "" {
		codexHome = v
	}
	zed := filepath.Join(xdg, "zed", "settings.json")
	if e.GOOS == "windows" {
		zed = filepath.Join(appData, "Zed", "settings.json")
	}
	user := func(h *Host, p string) Location { return Location{h, p, "user"} }
	project := func(h *Host, p string) Location { return Location{h, p, "project"} }
	return []Location{
		user(ClaudeDesktop, filepath.Join(appData, "Claude", "claude_desktop_config.json")),
		user(ClaudeCode, home(".claude.json")),
		user(Cursor, home(".cursor", "mcp.json")),
		user(VSCode, filepath.Join(appData, "Code", "User", "mcp.json")),
		user(GeminiCLI, home(".gemini", "settings.json")),
		user(Codex, filepath.Join(codexHome, "config.toml")),
		user(Windsurf, home(".codeium", "windsurf", "mcp_config.json")),
		user(Zed, zed),
		user(Cline, filepath.Join(appData, "Code", "User", filepath.FromSlash(clineDir))),
		user(Cline, home(".cline", "data", "settings", "cline_mcp_settings.json")),
		project(ClaudeCode, cwd(".mcp.json")),
		project(Cursor, cwd(".cursor", "mcp.json")),
		project(VSCode, cwd(".vscode", "mcp.json")),
		project(GeminiCLI, cwd(".gemini", "settings.json")),
		project(Codex, cwd(".codex", "config.toml")),
		project(Zed, cwd(".zed", "settings.json")),
	}
}
