// Package proxy is `mcpdrift proxy`: an MCP proxy that an agent host
// launches (or points at) instead of the server, so agents in any language
// get the interceptor's spans — the definition digest each call was planned
// with, listing staleness, the client session — and an opt-in gate that
// refuses calls planned against a changed or unapproved tool definition,
// with no change to the agent's code. See docs/proxy.md.
//
// Three modes, chosen by Config:
//
//   - stdio → stdio (Command): the proxy starts the server as a child
//     process and relays newline-delimited frames between its own standard
//     input/output and the child's.
//   - stdio → HTTP (Upstream without Listen): a stdio server for the host,
//     speaking Streamable HTTP upstream; it re-initializes on the agent's
//     behalf when the server restarts.
//   - HTTP → HTTP (Listen and Upstream): a reverse proxy for Streamable HTTP.
//
// The MCP bookkeeping (pairing, the per-session listing cache, digests, span
// attributes) is the interceptor's: the proxy feeds an interceptor.Session
// the frames it relays, and the HTTP → HTTP mode runs the interceptor's
// httptap under a reverse proxy.
//
// This package is the API (Config, the three entry points); each mode is a
// package of its own under internal/ — stdio (stdio → stdio), upstream
// (stdio → HTTP), httpproxy (HTTP → HTTP) — over shared ones: relay (the
// stdio agent side of the first two), jsonrpc (the one parse of a frame,
// and the frames the proxy writes), streamhttp (Streamable HTTP's headers),
// h1client (the HTTP client to the upstream of the two HTTP modes),
// telemetry, config, and maxprocs (HTTP → HTTP's processor count). The gate
// (proxy/gate) and the lock filter (proxy/lockfilter) serve every mode.
package proxy

import (
	"context"
	"net"

	"github.com/mcpdrift/mcpdrift/proxy/internal/config"
	"github.com/mcpdrift/mcpdrift/proxy/internal/httpproxy"
	"github.com/mcpdrift/mcpdrift/proxy/internal/maxprocs"
	"github.com/mcpdrift/mcpdrift/proxy/internal/relay"
	"github.com/mcpdrift/mcpdrift/proxy/internal/stdio"
	"github.com/mcpdrift/mcpdrift/proxy/internal/telemetry"
	"github.com/mcpdrift/mcpdrift/proxy/internal/upstream"
)

// Config is what `mcpdrift proxy` is told on its command line.
type Config = config.Config

// OAuth turns on MCP authorization for the stdio → HTTP proxy.
type OAuth = config.OAuth

// Stale-gate modes (--on-stale).
const (
	OnStaleObserve = config.OnStaleObserve // record the stale call, forward it
	OnStaleRefuse  = config.OnStaleRefuse  // answer it with a STALE_TOOL_SCHEMA tool error, never forward it
)

// Lock modes (--lock-mode).
const (
	LockHide          = config.LockHide          // unapproved definitions are left out of tools/list; their calls are refused
	LockRefuseSession = config.LockRefuseSession // a listing with an unapproved definition fails the session
)

// Upstream transports of stdio → HTTP (--upstream-transport).
const (
	TransportAuto           = config.TransportAuto // Streamable HTTP, falling back to HTTP+SSE
	TransportStreamableHTTP = config.TransportStreamableHTTP
	TransportSSE            = config.TransportSSE // the deprecated HTTP+SSE transport of 2024-11-05
)

// Telemetry is where the proxy's spans and metrics go.
type Telemetry = telemetry.Telemetry

// NoTelemetry records nothing.
func NoTelemetry() Telemetry { return telemetry.None() }

// TelemetryFromEnv exports as the standard OpenTelemetry environment
// variables say; see telemetry.FromEnv.
func TelemetryFromEnv(ctx context.Context, serviceName string) (Telemetry, error) {
	return telemetry.FromEnv(ctx, serviceName)
}

// Stdio is the agent's side of a stdio proxy: what the host writes to the
// proxy and reads from it, and the signals forwarded to the server.
type Stdio = relay.Stdio

// RunCommand runs stdio → stdio: it starts cfg.Command, relays until the
// agent or the server ends the session, and returns the exit code to exit
// with (the server's).
func RunCommand(ctx context.Context, cfg Config, tel Telemetry, io Stdio) (int, error) {
	return stdio.Run(ctx, cfg, tel, io)
}

// RunUpstream runs stdio → HTTP until the agent's input ends or a signal
// arrives, and returns the exit code to exit with: 0, or 128+signal.
func RunUpstream(ctx context.Context, cfg Config, tel Telemetry, io Stdio) (int, error) {
	return upstream.Run(ctx, cfg, tel, io)
}

// Handler is the HTTP → HTTP proxy.
type Handler = httpproxy.Handler

// NewHandler builds the HTTP → HTTP proxy.
func NewHandler(cfg Config, tel Telemetry) (*Handler, error) { return httpproxy.NewHandler(cfg, tel) }

// Serve runs the HTTP → HTTP proxy on l until ctx ends.
func Serve(ctx context.Context, l net.Listener, cfg Config, tel Telemetry) error {
	return httpproxy.Serve(ctx, l, cfg, tel)
}

// GovernProcs runs the process on one processor while the load leaves it
// well under a core, and on the runtime's default otherwise, until stop is
// called (which restores the default). `mcpdrift proxy --listen` calls it
// around Serve: a proxy between agents and their server mostly waits, and
// on one processor its waits and wake-ups cost ≈ 0.75× the CPU
// (docs/proxy.md "Measured"). A program embedding the Handler sizes its own
// process; a GOMAXPROCS environment variable is left alone.
func GovernProcs() (stop func()) { return maxprocs.Govern() }
