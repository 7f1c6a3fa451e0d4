package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
	"github.com/mcpdrift/mcpdrift/proxy"
)

func newProxyCommand() *cobra.Command {
	var (
		cfg         = proxy.Config{}
		headers     []string
		headerEnv   []string
		noInject    bool
		serverName  string
		upstreamEnv string
		oauth       proxy.OAuth
		useOAuth    bool
		secretEnv   string
		noBrowser   bool
		serverCmd   string
		serverArgs  []string
		bearerEnv   string
	)
	cmd := &cobra.Command{
		Use:   "proxy [flags] (-- CMD [ARGS...] | --upstream URL [--listen ADDR])",
		Short: "Relay an agent's MCP traffic, recording drift-aware spans and gating stale calls",
		Long: `Stand between an agent and an MCP server, with no change to the agent: every
request becomes an OpenTelemetry CLIENT span stamped with the digest of the tool
definition the agent's session was served, and (opt-in) calls planned against a
changed or unapproved definition are refused before they reach the server.

Modes:
  stdio -> stdio   mcpdrift proxy [flags] -- CMD ARGS...
                   the host launches this instead of CMD
  stdio -> HTTP    mcpdrift proxy --upstream URL
                   a stdio server for hosts that only launch commands, in front of a
                   Streamable HTTP or (deprecated) HTTP+SSE server
  HTTP  -> HTTP    mcpdrift proxy --listen 127.0.0.1:PORT --upstream URL

Spans are exported as the standard OTEL_EXPORTER_OTLP_* variables say (OTLP/HTTP
or gRPC); with no endpoint set nothing is exported. See docs/proxy.md.

In stdio -> stdio mode the proxy exits with the server's own exit status (128+N
when signal N ended it); otherwise, or when the proxy itself fails:

` + exitStatusHelp("proxy"),
		Example: `  mcpdrift proxy --server-name files -- npx -y @modelcontextprotocol/server-filesystem /data
  mcpdrift proxy --on-stale refuse --upstream https://mcp.example.com/mcp \
    --header-env 'Authorization=MCP_AUTH'
  mcpdrift proxy --oauth --upstream https://mcp.example.com/mcp
  mcpdrift proxy --listen 127.0.0.1:7001 --upstream http://127.0.0.1:3001/mcp --lock mcp.lock.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			argv, err := serverArgv(cmd, args, serverCmd, serverArgs)
			if err != nil {
				return err
			}
			cfg.Command = argv
			h, err := parseHeaders(headers)
			if err != nil {
				return err
			}
			for _, he := range headerEnv {
				name, env, ok := strings.Cut(he, "=")
				if !ok || strings.TrimSpace(name) == "" || env == "" {
					return usageError("--header-env wants Name=ENV_VAR")
				}
				v, set := os.LookupEnv(env)
				if !set {
					return usageError("--header-env %s: %s is not set", strings.TrimSpace(name), env)
				}
				h.Add(strings.TrimSpace(name), v)
			}
			if bearerEnv != "" {
				v, set := os.LookupEnv(bearerEnv)
				if !set || v == "" {
					return usageError("--bearer-token-env: %s is not set", bearerEnv)
				}
				h.Set("Authorization", "Bearer "+v)
			}
			cfg.Header = h
			if upstreamEnv != "" {
				if cfg.Upstream != "" {
					return usageError("--upstream and --upstream-env are exclusive")
				}
				v, set := os.LookupEnv(upstreamEnv)
				if !set || v == "" {
					return usageError("--upstream-env: %s is not set", upstreamEnv)
				}
				cfg.Upstream = v
			}
			if useOAuth {
				if err := completeOAuth(cmd, &oauth, secretEnv, noBrowser); err != nil {
					return err
				}
				cfg.OAuth = &oauth
			}
			cfg.ServerName = serverName
			cfg.InjectTraceContext = !noInject
			if cfg.AgentName == "" {
				cfg.AgentName = os.Getenv("OTEL_SERVICE_NAME")
			}
			if err := cfg.Validate(); err != nil {
				return usageError("%v", err)
			}
			return runProxy(cmd, cfg)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Upstream, "upstream", "", "the server's MCP endpoint: Streamable HTTP, or an HTTP+SSE stream URL in stdio -> HTTP (stdio -> HTTP, or HTTP -> HTTP with --listen)")
	fl.StringVar(&upstreamEnv, "upstream-env", "", "environment variable holding the upstream URL, for a URL with credentials in it (mcpdrift wrap writes this; the URL is never printed whole)")
	fl.StringVar(&cfg.UpstreamTransport, "upstream-transport", proxy.TransportAuto, "stdio -> HTTP: auto (Streamable HTTP, falling back to the deprecated HTTP+SSE when initialize is refused with 400/404/405), streamable-http, or sse")
	fl.StringVar(&cfg.Listen, "listen", "", "address to serve Streamable HTTP on (HTTP -> HTTP), e.g. 127.0.0.1:7001")
	fl.StringArrayVarP(&headers, "header", "H", nil, "HTTP header 'Name: value' sent upstream (repeatable; values are secrets: never printed)")
	fl.StringArrayVar(&headerEnv, "header-env", nil, "HTTP header Name=ENV_VAR whose value is read from the environment (repeatable)")
	fl.StringVar(&bearerEnv, "bearer-token-env", "", "environment variable holding a bearer token: sent upstream as 'Authorization: Bearer TOKEN' (Codex's bearer_token_env_var)")
	fl.StringVar(&serverCmd, "server-command", "", "the stdio server's command, as an alternative to -- CMD (mcpdrift wrap writes this form: arguments a host appends after the entry's never reach the server)")
	fl.StringArrayVar(&serverArgs, "server-arg", nil, "one argument of --server-command (repeatable, in order; write --server-arg=VALUE for a value that starts with -)")
	fl.BoolVar(&useOAuth, "oauth", false, "stdio -> HTTP: when the upstream answers 401, authorize as the MCP authorization spec says (the user consents in a browser; the token is kept for later runs)")
	fl.StringVar(&oauth.ClientID, "oauth-client-id", "", "a client id registered with the authorization server beforehand (default: dynamic client registration)")
	fl.StringVar(&secretEnv, "oauth-client-secret-env", "", "environment variable holding that client's secret (a confidential client)")
	fl.IntVar(&oauth.RedirectPort, "oauth-redirect-port", 0, "loopback port for the browser's redirect, http://127.0.0.1:PORT/callback (0: a free one, for servers that allow any loopback port)")
	fl.StringVar(&oauth.Store, "oauth-store", "", "directory keeping the tokens between runs, readable by the user alone (default the user config dir's mcpdrift/oauth; 'none' keeps none)")
	fl.BoolVar(&noBrowser, "oauth-no-browser", false, "only print the authorization URL on stderr; do not open a browser")
	fl.StringVar(&serverName, "server-name", "", "mcpdrift.server.name on spans: the receiver's target name (default the server's serverInfo.name)")
	fl.StringVar(&cfg.AgentName, "agent-name", "", "gen_ai.agent.name on spans (default OTEL_SERVICE_NAME, else initialize's clientInfo.name)")
	fl.BoolVar(&noInject, "no-inject", false, "do not write trace context into params._meta: relay frames byte for byte")
	fl.StringVar(&cfg.OnStale, "on-stale", proxy.OnStaleObserve, "observe (record) or refuse calls planned against a tool definition the server no longer serves (judged by the call's arguments, then its digest: docs/mcpimpact.md)")
	fl.DurationVar(&cfg.StaleWindow, "stale-window", 0, "refuse once the first call to a tool within this long after the agent was served a changed definition of it, telling the model to read it again (for changes arguments cannot show: description, annotations; 0: off)")
	fl.DurationVar(&cfg.RelistInterval, "relist-interval", 0, "list tools this often to learn changes from servers that never notify (0: only on list_changed)")
	fl.StringVar(&cfg.Lock, "lock", "", "lock file (as mcpdrift check --lock writes it): tool definitions not in it are not approved")
	fl.StringVar(&cfg.LockMode, "lock-mode", proxy.LockHide, "hide (leave unapproved tools out of tools/list, refuse their calls) or refuse-session")
	fl.DurationVar(&cfg.ShutdownGrace, "shutdown-grace", 5*time.Second, "time the stdio server has to exit after its input closes, before SIGTERM (and as long again before SIGKILL)")
	fl.DurationVar(&cfg.UpstreamTimeout, "upstream-timeout", 30*time.Second, "timeout of an upstream exchange up to its response headers, and of the proxy's own requests")
	groupFlags(cmd, "stdio -> stdio", "server-command", "server-arg", "shutdown-grace")
	groupFlags(cmd, "stdio -> HTTP and HTTP -> HTTP: the upstream", "upstream", "upstream-env", "upstream-timeout",
		"header", "header-env", "bearer-token-env")
	groupFlags(cmd, "stdio -> HTTP only", "upstream-transport", "oauth", "oauth-client-id", "oauth-client-secret-env",
		"oauth-redirect-port", "oauth-store", "oauth-no-browser")
	groupFlags(cmd, "HTTP -> HTTP only", "listen")
	groupFlags(cmd, "Every mode: spans", "server-name", "agent-name", "no-inject")
	groupFlags(cmd, "Every mode: the gate", "on-stale", "stale-window", "relist-interval", "lock", "lock-mode")
	useGroupedFlags(cmd, "stdio -> stdio", "stdio -> HTTP and HTTP -> HTTP: the upstream", "stdio -> HTTP only",
		"HTTP -> HTTP only", "Every mode: spans", "Every mode: the gate")
	return cmd
}

// serverArgv is the stdio server's command line: after --, or given by
// --server-command and --server-arg. In the second form nothing depends on
// -- being last: a host that appends its own arguments after an entry's
// (the MCP Inspector CLI) cannot make them the server's, and any it leaves
// for the proxy are dropped with a warning.
func serverArgv(cmd *cobra.Command, args []string, serverCmd string, serverArgs []string) ([]string, error) {
	var argv []string
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		argv = args[dash:]
		args = args[:dash]
	}
	if serverCmd == "" {
		if len(serverArgs) > 0 {
			return nil, usageError("--server-arg needs --server-command")
		}
		if len(args) > 0 {
			return nil, usageError("unexpected argument %q (put the server command after --)", args[0])
		}
		return argv, nil
	}
	if len(argv) > 0 {
		return nil, usageError("--server-command and -- CMD are exclusive")
	}
	if len(args) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "mcpdrift proxy: ignoring %d argument(s) after the flags: the server's command line is --server-command and --server-arg\n", len(args))
	}
	return append([]string{serverCmd}, serverArgs...), nil
}

// completeOAuth fills in what --oauth's flags leave to the CLI: the
// client secret from the environment, the token store's default place, and
// how the user is shown the authorization URL (stderr, where hosts keep a
// server's log, and a browser).
func completeOAuth(cmd *cobra.Command, o *proxy.OAuth, secretEnv string, noBrowser bool) error {
	if secretEnv != "" {
		v, set := os.LookupEnv(secretEnv)
		if !set || v == "" {
			return usageError("--oauth-client-secret-env: %s is not set", secretEnv)
		}
		o.ClientSecret = v
	}
	switch o.Store {
	case "none":
		o.Store = ""
	case "":
		dir, err := os.UserConfigDir()
		if err != nil {
			return usageError("--oauth-store: no user config directory (%v); give a directory or none", err)
		}
		o.Store = filepath.Join(dir, "mcpdrift", "oauth")
	}
	stderr := cmd.ErrOrStderr()
	o.Open = func(url string) error {
		if u, err := neturl.Parse(url); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return fmt.Errorf("the authorization server's URL is not http(s): %q", url)
		}
		fmt.Fprintf(stderr, "mcpdrift proxy: the MCP server asks for authorization; open this URL to consent:\n  %s\n", url)
		if !noBrowser {
			openBrowser(url)
		}
		return nil
	}
	return nil
}

// openBrowser asks the desktop to open url; with no desktop (a server, a
// container) nothing opens and the URL on stderr is the way. Its output
// goes nowhere: the proxy's stdout is the agent's MCP stream.
func openBrowser(url string) {
	argv := []string{"xdg-open", url}
	switch runtime.GOOS {
	case "darwin":
		argv = []string{"open", url}
	case "windows":
		argv = []string{"rundll32", "url.dll,FileProtocolHandler", url}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return
	}
	c := exec.Command(path, argv[1:]...)
	if c.Start() == nil {
		go func() { _ = c.Wait() }()
	}
}

// runProxy runs the mode cfg names with the OpenTelemetry SDK set up from
// the environment, flushes the spans, and exits as the server did.
func runProxy(cmd *cobra.Command, cfg proxy.Config) error {
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	service := cfg.AgentName
	if service == "" {
		service = "mcpdrift-proxy"
	}
	tel, err := proxy.TelemetryFromEnv(ctx, service)
	if err != nil {
		return usageError("OpenTelemetry setup from the environment: %v", err)
	}
	defer func() {
		flush, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		_ = tel.Shutdown(flush) // an unreachable collector must not change the exit status
	}()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	stdio := proxy.Stdio{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr(), Signals: sigs}
	var code int
	switch {
	case len(cfg.Command) > 0:
		code, err = proxy.RunCommand(ctx, cfg, tel, stdio)
	case cfg.Listen != "":
		l, lerr := net.Listen("tcp", cfg.Listen)
		if lerr != nil {
			return usageError("--listen: %v", lerr)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "mcpdrift proxy: listening on http://%s, upstream %s\n", l.Addr(), serverid.Display(cfg.Upstream))
		go func() {
			<-sigs
			cancel()
		}()
		stopProcs := proxy.GovernProcs()
		err = proxy.Serve(ctx, l, cfg, tel)
		stopProcs()
	default:
		code, err = proxy.RunUpstream(ctx, cfg, tel, stdio)
	}
	if err != nil {
		return probeError(err)
	}
	if code != 0 {
		return &exitError{code: code, err: errQuietExit}
	}
	return nil
}

// errQuietExit carries the server's exit status: nothing to print.
var errQuietExit = errors.New("")
