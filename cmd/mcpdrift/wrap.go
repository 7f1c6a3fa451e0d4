package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/cmd/mcpdrift/internal/hostconfig"
)

// maxHostConfigBytes bounds a host configuration file (Claude Code's
// ~/.claude.json, the largest, keeps history and grows to megabytes).
const maxHostConfigBytes = 32 << 20

func newWrapCommand() *cobra.Command {
	var o hostconfig.Options
	var env []string
	var agent, onStale, lock, host string
	var dryRun, list bool
	cmd := &cobra.Command{
		Use:   "wrap [--dry-run] [--on-stale observe|refuse] [--lock FILE] [--agent-name NAME] [--host NAME] [--env K=V]... [--skip NAME]... FILE | wrap --list",
		Short: "Route every MCP server of an agent host's config through mcpdrift proxy",
		Long: `Rewrite the MCP client configuration of an agent host so that it starts every
server through 'mcpdrift proxy', which records each call as an OpenTelemetry span
with the definition the agent was served (and can refuse calls to changed or
unapproved tools). No code changes in the agent.

FILE is the MCP configuration of an agent host: claude_desktop_config.json
(Claude Desktop), .mcp.json or ~/.claude.json (Claude Code, with its
per-project servers), .cursor/mcp.json (Cursor), .vscode/mcp.json (VS Code),
.gemini/settings.json (Gemini CLI), ~/.codex/config.toml (Codex CLI),
mcp_config.json (Windsurf), zed/settings.json (Zed) or cline_mcp_settings.json
(Cline). 'wrap --list' shows which of them exist here, how many servers each
has and which are wrapped. A stdio server becomes
  mcpdrift proxy --server-name NAME --agent-name HOST --server-command COMMAND --server-arg=ARG...
with its env kept; a remote (url) server becomes
  mcpdrift proxy --server-name NAME --upstream URL --header-env H=VAR...
with its header values moved into the entry's env, so no secret reaches the
proxy's command line. Each wrapped entry keeps the original under
"x-mcpdrift" (Gemini CLI and Codex, which drop or warn of unknown members in an
entry: in a top-level x-mcpdrift), which 'mcpdrift unwrap' restores exactly.
Spans name the agent after the host (claude-code, gemini-cli, codex, …).

Only the entries wrapped change; formatting, comments and every other member
stay as they were. Wrapping twice changes nothing. Before the first wrap, FILE
is copied to FILE.mcpdrift.bak (one backup per file, whatever the number of
wrap/unwrap cycles); a file that does not parse is refused and left untouched.
Restart the host afterwards.
See docs/wrapping.md.

` + exitStatusHelp("wrap"),
		Example: `  mcpdrift wrap --dry-run ~/Library/Application\ Support/Claude/claude_desktop_config.json
  mcpdrift wrap --env OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 .mcp.json
  mcpdrift wrap --on-stale refuse --lock mcp.lock.json .vscode/mcp.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if list {
				if len(args) > 0 {
					return usageError("wrap --list takes no FILE")
				}
				return nil
			}
			return exactlyOneFile("wrap")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				return listHostConfigs(cmd.OutOrStdout())
			}
			if onStale != "" && onStale != "observe" && onStale != "refuse" {
				return usageError("--on-stale must be observe or refuse, not %q", onStale)
			}
			abs, err := filepath.Abs(args[0]) // "settings.json" run in ~/.gemini is Gemini's
			if err != nil {
				return usageError("%s: %v", args[0], err)
			}
			h := hostconfig.HostOf(abs)
			if host != "" {
				if h = hostconfig.HostNamed(host); h == nil {
					return usageError("--host %q: not one of %s", host, hostNames())
				}
			}
			if h != nil {
				if agent == "" {
					agent = h.Name // the host, not its clientInfo (Gemini CLI's health check says mcp-test-client)
				}
				o.TopStash = h.TopStash
			}
			o.AgentFlag(agent)
			if onStale != "" {
				o.ProxyFlags = append(o.ProxyFlags, "--on-stale", onStale)
			}
			if lock != "" {
				abs, err := filepath.Abs(lock) // hosts start servers in a directory of their choosing
				if err != nil {
					return usageError("--lock: %v", err)
				}
				o.ProxyFlags = append(o.ProxyFlags, "--lock", abs)
			}
			for _, kv := range env {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" || strings.ContainsAny(k, " \t") {
					return usageError("--env wants KEY=VALUE, got %q", k)
				}
				o.Env = append(o.Env, hostconfig.EnvVar{Name: k, Value: v})
			}
			if !cmd.Flags().Changed("mcpdrift") {
				o.Command = defaultProxyCommand()
			}
			format := hostconfig.FormatOf(args[0])
			return rewriteHostConfig(cmd, args[0], dryRun, true, func(src []byte) (*hostconfig.Result, error) {
				return format.Wrap(src, o)
			})
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&dryRun, "dry-run", false, "print the change as a unified diff and write nothing")
	fl.StringVar(&o.Command, "mcpdrift", "", `the command hosts run (default: this mcpdrift's absolute path; "mcpdrift" to find it on the host's PATH)`)
	fl.StringVar(&agent, "agent-name", "", "proxy --agent-name: the agent's name on spans (default: the host's name, claude-code, gemini-cli, codex, …, told from FILE's name; for a file of no known host, OTEL_SERVICE_NAME, else the host's clientInfo name)")
	fl.StringVar(&host, "host", "", "the host that reads FILE, when its name does not tell: "+hostNames())
	fl.BoolVar(&list, "list", false, "show every host's configuration files on this machine and in this directory: which exist, their servers, which are wrapped")
	fl.StringVar(&onStale, "on-stale", "", "proxy --on-stale: observe (default) or refuse calls to tools whose definition changed since the agent listed them")
	fl.StringVar(&lock, "lock", "", "proxy --lock: hide and refuse tools whose definition is not in this lock (see mcpdrift approve)")
	fl.StringArrayVar(&env, "env", nil, "KEY=VALUE added to every wrapped server's env, e.g. OTEL_EXPORTER_OTLP_ENDPOINT (repeatable; a variable the entry sets keeps its value)")
	fl.StringArrayVar(&o.Skip, "skip", nil, "leave the server NAME as it is (repeatable)")
	return cmd
}

func newUnwrapCommand() *cobra.Command {
	var skip []string
	var dryRun, force bool
	cmd := &cobra.Command{
		Use:   "unwrap [--dry-run] [--force] [--skip NAME]... FILE",
		Short: "Restore the MCP servers 'mcpdrift wrap' routed through the proxy",
		Long: `Restore every entry of FILE that 'mcpdrift wrap' rewrote to exactly what it was
before (kept under "x-mcpdrift"). An entry edited by hand since it was wrapped is
left wrapped, with a message: restoring it would silently undo the edit; --force
restores the original anyway. FILE.mcpdrift.bak, the file before it was first
wrapped, is kept (written if missing).

` + exitStatusHelp("unwrap"),
		Example: `  mcpdrift unwrap .mcp.json
  mcpdrift unwrap --dry-run .vscode/mcp.json`,
		Args: exactlyOneFile("unwrap"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format := hostconfig.FormatOf(args[0])
			return rewriteHostConfig(cmd, args[0], dryRun, false, func(src []byte) (*hostconfig.Result, error) {
				return format.Unwrap(src, skip, force)
			})
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&dryRun, "dry-run", false, "print the change as a unified diff and write nothing")
	fl.BoolVar(&force, "force", false, "restore entries edited since they were wrapped, dropping the edits")
	fl.StringArrayVar(&skip, "skip", nil, "leave the server NAME as it is (repeatable)")
	return cmd
}

func exactlyOneFile(verb string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageError("%s takes one configuration FILE (got %d arguments)", verb, len(args))
		}
		return nil
	}
}

// defaultProxyCommand is this executable's absolute path: hosts such as
// Claude Desktop start servers without the user's shell PATH.
func defaultProxyCommand() string {
	if exe, err := os.Executable(); err == nil {
		return exe
	}
	return "mcpdrift"
}

// rewriteHostConfig reads FILE, rewrites it, reports per server, and writes
// it (after a backup) unless dryRun. isWrap says whether this is wrap,
// whose first run on a file renews its backup.
func rewriteHostConfig(cmd *cobra.Command, path string, dryRun, isWrap bool, fn func([]byte) (*hostconfig.Result, error)) error {
	src, err := readLimited(nil, path, maxHostConfigBytes)
	if err != nil {
		return err // an input error
	}
	res, err := fn(src)
	var se *hostconfig.SyntaxError
	switch {
	case errors.As(err, &se):
		return inputError(fmt.Errorf("%s:%d:%d: %s; the file is left as it is", path, se.Line, se.Col, se.Msg))
	case err != nil:
		return inputError(fmt.Errorf("%s: %v; the file is left as it is", path, err))
	}
	stderr := cmd.ErrOrStderr()
	reportOutcomes(stderr, res.Servers)
	refused := refusedError(res)
	if !res.Changed() {
		fmt.Fprintf(stderr, "mcpdrift: %s: nothing to change\n", path)
		return refused
	}
	if dryRun {
		_, err := io.WriteString(cmd.OutOrStdout(), res.Diff(path, path))
		if err != nil {
			return err
		}
		return refused
	}
	// A host may rewrite its file at any time (Claude Code does): write only
	// over what was read.
	if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, src) {
		return outputError(fmt.Errorf("%s changed while it was being rewritten; nothing was written, run again", path))
	}
	backup, err := keepBackup(path, src, isWrap && !anyWrapped(hostconfig.FormatOf(path), src))
	if err != nil {
		return outputError(fmt.Errorf("backing up %s: %w; nothing was written", path, err))
	}
	if err := writeFileAtomic(path, res.Out); err != nil {
		return outputError(fmt.Errorf("writing %s: %w (the original is in %s)", path, err, backup))
	}
	fmt.Fprintf(stderr, "mcpdrift: wrote %s (backup: %s); restart the host to use it\n", path, backup)
	return refused
}

// anyWrapped reports whether src has a server that runs mcpdrift proxy.
func anyWrapped(f hostconfig.Format, src []byte) bool {
	servers, _ := f.List(src)
	for _, s := range servers {
		if s.Wrapped {
			return true
		}
	}
	return false
}

func reportOutcomes(w io.Writer, outs []hostconfig.Outcome) {
	for _, o := range outs {
		line := fmt.Sprintf("mcpdrift: %-9s %s", o.Action, o.Server)
		if o.Scope != "" {
			line += " [" + o.Scope + "]"
		}
		if o.Kind != "" {
			line += " (" + o.Kind + ")"
		}
		if o.Reason != "" {
			line += ": " + o.Reason
		}
		fmt.Fprintln(w, line)
	}
}

func refusedError(res *hostconfig.Result) error {
	if n := res.Count(hostconfig.Refused); n > 0 {
		return &exitError{code: exitKept, err: fmt.Errorf("%d server(s) left as they were (see above)", n)}
	}
	return nil
}

func hostNames() string {
	names := make([]string, len(hostconfig.AllHosts))
	for i, h := range hostconfig.AllHosts {
		names[i] = h.Name
	}
	return strings.Join(names, ", ")
}

// listHostConfigs prints, for every host, the files it reads its MCP
// servers from here: whether each exists, its servers and which of them
// are wrapped.
func listHostConfigs(w io.Writer) error {
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	locs := hostconfig.Locations(hostconfig.Env{Home: home, Cwd: cwd, GOOS: runtime.GOOS, Getenv: os.Getenv})
	for _, l := range locs {
		head := fmt.Sprintf("%s (%s, %s): %s", l.Host.Title, l.Host.Name, l.Scope, l.Path)
		src, err := readLimited(nil, l.Path, maxHostConfigBytes)
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(w, "%s: not found\n", head)
			continue
		}
		var servers []hostconfig.Server
		if err == nil {
			servers, err = hostconfig.FormatOf(l.Path).List(src)
		}
		if err != nil {
			fmt.Fprintf(w, "%s: unreadable: %v\n", head, err)
			continue
		}
		n := 0
		for _, s := range servers {
			if s.Wrapped {
				n++
			}
		}
		fmt.Fprintf(w, "%s: %d server(s), %d wrapped\n", head, len(servers), n)
		for _, s := range servers {
			state := "not wrapped"
			if s.Wrapped {
				state = "wrapped"
			}
			name := s.Name
			if s.Scope != "" {
				name += " [" + s.Scope + "]"
			}
			fmt.Fprintf(w, "  %-40s %s\n", name, state)
		}
	}
	return nil
}
