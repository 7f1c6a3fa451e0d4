package mcpdriftapiextension

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/extension"
	"go.uber.org/zap"

	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/controlplane"
)

// apiExtension serves the API and the dashboard, and holds the sources the
// receivers and the processor register.
type apiExtension struct {
	cfg *Config
	set extension.Settings

	mu     sync.RWMutex
	drift  []driftSource // in registration order
	impact *impactSource

	server *http.Server
	addr   net.Addr // where it listens (tests start on port 0)
	done   chan struct{}
}

type driftSource struct {
	id  component.ID
	src controlplane.DriftSource
}

type impactSource struct {
	id  component.ID
	src controlplane.ImpactSource
}

var (
	_ extension.Extension   = (*apiExtension)(nil)
	_ controlplane.Registry = (*apiExtension)(nil)
)

func newAPIExtension(set extension.Settings, cfg *Config) *apiExtension {
	return &apiExtension{cfg: cfg, set: set}
}

// Start listens on the endpoint and serves. The auth extension, if any,
// guards /api/ only (see Config).
func (e *apiExtension) Start(ctx context.Context, host component.Host) error {
	var authn func(http.Handler) http.Handler
	sc := e.cfg.ServerConfig // ToServer writes defaults into its receiver
	if sc.Auth.HasValue() {
		a := sc.Auth.Get()
		server, err := a.Config.GetServerAuthenticator(ctx, host.GetExtensions())
		if err != nil {
			return fmt.Errorf("mcpdrift_api: %w", err)
		}
		authn = authenticate(server, a.RequestParameters)
		sc.Auth = configoptional.None[confighttp.AuthConfig]()
	}
	ln, err := sc.ToListener(ctx)
	if err != nil {
		return fmt.Errorf("mcpdrift_api: listen on %s: %w", sc.NetAddr.Endpoint, err)
	}
	srv, err := sc.ToServer(ctx, host.GetExtensions(), e.set.TelemetrySettings, newRouter(e, authn))
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("mcpdrift_api: %w", err)
	}
	e.server, e.addr = srv, ln.Addr()
	e.done = make(chan struct{})
	e.set.Logger.Info("mcpdrift control plane listening", zap.String("endpoint", ln.Addr().String()))
	go func() {
		defer close(e.done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(err))
		}
	}()
	return nil
}

// Shutdown stops serving; requests in flight finish or are cut at ctx.
func (e *apiExtension) Shutdown(ctx context.Context) error {
	if e.server == nil {
		return nil
	}
	err := e.server.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		err = errors.Join(err, e.server.Close())
	}
	<-e.done
	return err
}

// RegisterDriftSource adds a receiver's view. Server names must be unique
// across the receivers that register: a name two receivers probe would make
// every route that takes a name ambiguous.
func (e *apiExtension) RegisterDriftSource(id component.ID, s controlplane.DriftSource) (func(), error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	names := map[string]bool{}
	for _, st := range s.Servers() {
		names[st.Name] = true
	}
	for _, d := range e.drift {
		if d.id == id {
			return nil, fmt.Errorf("mcpdrift_api: %s is already registered", id)
		}
		for _, st := range d.src.Servers() {
			if names[st.Name] {
				return nil, fmt.Errorf("mcpdrift_api: target %q is probed by both %s and %s; names must be unique across the receivers that share a control plane", st.Name, d.id, id)
			}
		}
	}
	e.drift = append(e.drift, driftSource{id: id, src: s})
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.drift = slices.DeleteFunc(e.drift, func(d driftSource) bool { return d.id == id })
	}, nil
}

// RegisterImpactSource sets the processor's view; one processor per
// control plane (one index answers a query).
func (e *apiExtension) RegisterImpactSource(id component.ID, s controlplane.ImpactSource) (func(), error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.impact != nil {
		return nil, fmt.Errorf("mcpdrift_api: %s and %s both name this control plane; one mcpimpact processor answers impact queries", e.impact.id, id)
	}
	e.impact = &impactSource{id: id, src: s}
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.impact != nil && e.impact.id == id {
			e.impact = nil
		}
	}, nil
}

// RequestProbe hands a prompt-probe request to the receiver that probes
// server, if it can take one.
func (e *apiExtension) RequestProbe(server string, done func(controlplane.Observation)) bool {
	for _, d := range e.driftSources() {
		if p, ok := d.src.(controlplane.PromptProber); ok && p.ProbeNow(server, done) {
			return true
		}
	}
	return false
}

// driftSources returns a copy of the registered receivers' views.
func (e *apiExtension) driftSources() []driftSource {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return slices.Clone(e.drift)
}

// impactSrc returns the registered processor's view, or nil.
func (e *apiExtension) impactSrc() *impactSource {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.impact
}
