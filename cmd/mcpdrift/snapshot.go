package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
	"github.com/mcpdrift/mcpdrift/probe"
)

// targetFlags are the flags that say which server to probe and how; check
// (release gate) reuses them.
type targetFlags struct {
	url, transport, name, clientCaps, dir string
	headers, env                          []string
	stdio                                 bool
	caFile, certFile, keyFile             string
	insecure                              bool
	timeout, requestTimeout, settle       time.Duration
	// defaultTimeout and defaultRequestTimeout replace the probe's
	// defaults for --timeout and --request-timeout (replay's session and
	// its tool calls last longer than a probe's listings).
	defaultTimeout, defaultRequestTimeout time.Duration
}

func (f *targetFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.url, "url", "", "MCP endpoint URL (Streamable HTTP or legacy SSE)")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "HTTP header 'Name: value' sent on every request (repeatable; values are secrets: never printed)")
	fl.StringVar(&f.transport, "transport", "auto", "HTTP transport: auto, streamable-http or sse")
	fl.BoolVar(&f.stdio, "stdio", false, "run the server given after -- and speak stdio")
	fl.StringArrayVar(&f.env, "env", nil, "KEY=value added to the stdio server's environment (repeatable; values are secrets)")
	fl.StringVar(&f.dir, "cwd", "", "working directory of the stdio server")
	fl.StringVar(&f.name, "name", "", "logical server name recorded in the snapshot")
	fl.StringVar(&f.clientCaps, "client-capabilities", probe.DefaultClientCapabilities, "client capabilities the probe declares (JSON object); servers may list different tools to different clients")
	fl.StringVar(&f.caFile, "ca-file", "", "PEM file of CA certificates to trust (HTTPS)")
	fl.StringVar(&f.certFile, "cert-file", "", "PEM client certificate (mutual TLS)")
	fl.StringVar(&f.keyFile, "key-file", "", "PEM client key (mutual TLS)")
	fl.BoolVar(&f.insecure, "insecure-skip-verify", false, "do not verify the server's certificate (testing only)")
	timeout := probe.DefaultTimeout
	if f.defaultTimeout > 0 {
		timeout = f.defaultTimeout
	}
	fl.DurationVar(&f.timeout, "timeout", timeout, "overall probe timeout")
	requestTimeout := probe.DefaultRequestTimeout
	if f.defaultRequestTimeout > 0 {
		requestTimeout = f.defaultRequestTimeout
	}
	fl.DurationVar(&f.requestTimeout, "request-timeout", requestTimeout, "timeout of each request")
	fl.DurationVar(&f.settle, "settle", probe.DefaultSettle, "quiet period before re-listing; listings repeat until two agree (0: list once)")
}

// target builds the probe target from the flags and the arguments after --.
func (f *targetFlags) target(cmd *cobra.Command, args []string) (probe.Target, error) {
	dash := cmd.ArgsLenAtDash()
	var command []string
	if dash >= 0 {
		command = args[dash:]
		args = args[:dash]
	}
	if len(args) > 0 {
		return probe.Target{}, usageError("unexpected argument %q (put the stdio command after --)", args[0])
	}
	if f.settle < 0 {
		return probe.Target{}, usageError("--settle must not be negative (0 lists once, without settling)")
	}
	t := probe.Target{Name: f.name, ClientCapabilities: json.RawMessage(f.clientCaps)}
	if !json.Valid(t.ClientCapabilities) || !strings.HasPrefix(strings.TrimSpace(f.clientCaps), "{") {
		return t, usageError("--client-capabilities must be a JSON object")
	}
	switch {
	case f.stdio && f.url != "":
		return t, usageError("give --url or --stdio, not both")
	case f.stdio:
		if len(command) == 0 {
			return t, usageError("--stdio needs a command after --")
		}
		t.Transport = probe.TransportStdio
		t.Command, t.Args, t.Env, t.Dir = command[0], command[1:], f.env, f.dir
	case f.url != "":
		if len(command) > 0 {
			return t, usageError("a command after -- needs --stdio")
		}
		t.URL, t.Transport = f.url, probe.Transport(f.transport)
		h, err := parseHeaders(f.headers)
		if err != nil {
			return t, err
		}
		t.Headers = h
		tlsConf, err := f.tlsConfig()
		if err != nil {
			return t, err
		}
		t.TLS = tlsConf
	default:
		return t, usageError("give --url URL or --stdio -- CMD [ARGS...]")
	}
	if err := t.Validate(); err != nil {
		return t, usageError("%v", err)
	}
	return t, nil
}

func parseHeaders(values []string) (http.Header, error) {
	h := http.Header{}
	for _, v := range values {
		name, value, ok := strings.Cut(v, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, usageError("--header wants 'Name: value', got a value without a name")
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}

func (f *targetFlags) tlsConfig() (*tls.Config, error) {
	if f.caFile == "" && f.certFile == "" && f.keyFile == "" && !f.insecure {
		return nil, nil
	}
	c := &tls.Config{InsecureSkipVerify: f.insecure, MinVersion: tls.VersionTLS12} //nolint:gosec // opt-in flag for testing
	if f.caFile != "" {
		pem, err := os.ReadFile(f.caFile)
		if err != nil {
			return nil, usageError("--ca-file: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usageError("--ca-file %s holds no PEM certificate", f.caFile)
		}
		c.RootCAs = pool
	}
	if (f.certFile == "") != (f.keyFile == "") {
		return nil, usageError("--cert-file and --key-file go together")
	}
	if f.certFile != "" {
		cert, err := tls.LoadX509KeyPair(f.certFile, f.keyFile)
		if err != nil {
			return nil, usageError("client certificate: %v", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

func (f *targetFlags) options(progress func(probe.Step)) probe.Options {
	return probe.Options{Timeout: f.timeout, RequestTimeout: f.requestTimeout, Settle: f.settle, Progress: progress}
}

// runProbe probes with a progress line on stderr once the probe is slow,
// and stops on Ctrl-C.
func runProbe(cmd *cobra.Command, f *targetFlags, t probe.Target) (*probe.Result, error) {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	prog := newProgressLine(cmd.ErrOrStderr(), describeTarget(t), 2*time.Second)
	defer prog.stop()
	res, err := probe.ProbeResult(ctx, t, f.options(prog.step))
	if err != nil {
		return nil, probeFailure(err)
	}
	if !res.Settled && f.settle > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "mcpdrift: warning: the server's listings were still changing after %d rounds; the snapshot is the last listing\n", res.Listings)
	}
	return res, nil
}

// describeTarget names the target on the progress line: its server
// identity (serverid), the program's base name for stdio.
func describeTarget(t probe.Target) string {
	if t.Command != "" {
		return serverid.Stdio([]string{filepath.Base(t.Command)})
	}
	return serverid.Display(t.URL)
}

func newSnapshotCommand() *cobra.Command {
	var f targetFlags
	var out string
	cmd := &cobra.Command{
		Use:   "snapshot (--url URL [--header 'K: V']... [--transport auto|streamable-http|sse] | --stdio -- CMD [ARGS...]) [--name NAME] [-o FILE]",
		Short: "Probe an MCP server and write its contract snapshot",
		Long: `Probe an MCP server and write a snapshot of its contract (tools, prompts,
resources, resource templates, instructions, capabilities, protocol version and
spec generation), with the digests of docs/digests.md.

The probe speaks stdio, Streamable HTTP and the legacy HTTP+SSE transport, and
both the 2026-07-28 stateless protocol (server/discover) and the initialize-era
protocol (2024-11-05 to 2025-11-25). With --transport auto it follows the MCP
backwards-compatibility procedure and records which transport answered.

Listings are followed through every page, and repeated after a quiet period
(--settle) until two consecutive listings agree, so an unchanged server gives the
same snapshot every time. --settle 0 lists once. Settling ends, settled or not,
after 5 listings, 10 s, or 90 % of the time left before --timeout
(docs/probe.md#settling).

` + exitStatusHelp("snapshot"),
		Example: `  mcpdrift snapshot --url https://mcp.example.com/mcp -H 'Authorization: Bearer $TOKEN' -o lock.json
  mcpdrift snapshot --stdio -- npx -y @modelcontextprotocol/server-everything
  mcpdrift snapshot --url http://localhost:3001/sse --transport sse`,
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := f.target(cmd, args)
			if err != nil {
				return err
			}
			res, err := runProbe(cmd, &f, t)
			if err != nil {
				return err
			}
			data, err := res.Snapshot.Encode()
			if err != nil {
				return outputError(err)
			}
			if out == "" || out == "-" {
				_, err = cmd.OutOrStdout().Write(data)
				return outputError(err)
			}
			if err := writeFileAtomic(out, data); err != nil {
				return outputError(err)
			}
			s := res.Snapshot
			fmt.Fprintf(cmd.ErrOrStderr(), "mcpdrift: wrote %s: %d tools, %d prompts, %d resources, %d resource templates (%s, %s, %s); contract %s\n",
				out, len(s.Tools), len(s.Prompts), len(s.Resources), len(s.ResourceTemplates),
				s.Server.Transport, s.ProtocolVersion, s.SpecGeneration, s.Digests.Contract)
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the snapshot to FILE (default: standard output)")
	return cmd
}

// progressLine prints the probe's step on stderr once it has taken longer
// than a delay, and on every step after that.
type progressLine struct {
	w      io.Writer
	what   string
	start  time.Time
	delay  time.Duration
	mu     sync.Mutex
	cur    probe.Step
	shown  probe.Step
	ticker *time.Ticker
	done   chan struct{}
	wg     sync.WaitGroup
}

func newProgressLine(w io.Writer, what string, delay time.Duration) *progressLine {
	p := &progressLine{w: w, what: what, start: time.Now(), delay: delay, ticker: time.NewTicker(delay / 4), done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			select {
			case <-p.ticker.C:
				p.show()
			case <-p.done:
				return
			}
		}
	}()
	return p
}

func (p *progressLine) step(s probe.Step) {
	p.mu.Lock()
	p.cur = s
	p.mu.Unlock()
}

func (p *progressLine) show() {
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := time.Since(p.start)
	if elapsed < p.delay || p.cur == p.shown {
		return
	}
	p.shown = p.cur
	fmt.Fprintf(p.w, "mcpdrift: probing %s: %s (%.0fs)\n", p.what, p.cur, elapsed.Seconds())
}

func (p *progressLine) stop() {
	p.ticker.Stop()
	close(p.done)
	p.wg.Wait()
}
