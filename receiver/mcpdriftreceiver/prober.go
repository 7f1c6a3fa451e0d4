package mcpdriftreceiver

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/probe"
)

// prober takes one snapshot of one target: a scheduled probe, or one of the
// samples a confirmation asks for (several run at once; a sample learns
// nothing about the target). The receiver's is probeClient; tests substitute
// their own.
type prober interface {
	probe(ctx context.Context, t *target, sample bool) (*contract.Snapshot, error)
}

// probeClient probes with the probe package.
type probeClient struct {
	opts probe.Options
}

func newProber(cfg *Config) prober {
	return &probeClient{opts: probe.Options{
		Timeout: cfg.Timeout,
		Settle:  cfg.Settle,
		Limits:  cfg.Limits,
	}}
}

func (p *probeClient) probe(ctx context.Context, t *target, sample bool) (*contract.Snapshot, error) {
	if t.httpClient != nil {
		var done func()
		ctx, done = withOwnConnections(ctx)
		defer done()
	}
	pt, opts := t.probe, p.opts
	opts.Equivalent = t.tracker.equivalent()
	if sample {
		opts.Known = t.hint.known
		// A server whose settled probes never changed after connecting is
		// listed once, unless it announces a change: samples come at once,
		// many, and waiting out settle in each is what made a 1 s target's
		// convergence take 14 s (issue 25).
		opts.SettleOnChange = !t.changesOnConnect.Load()
		if t.sampleClient != nil {
			client, err := t.sampleClient(ctx)
			if err != nil {
				return nil, err
			}
			pt.HTTPClient = client
		}
	} else {
		opts.Known = t.hint.next()
	}
	if pt.HTTPClient != nil {
		defer pt.HTTPClient.CloseIdleConnections() // those no request of the probe used too
	}
	res, err := probe.ProbeResult(ctx, pt, opts)
	if err != nil && opts.Known.Generation != "" && ctx.Err() == nil {
		// The hint may be stale (the server changed generation): a server
		// that answers the full handshake is not down.
		opts.Known = probe.Known{}
		res, err = probe.ProbeResult(ctx, pt, opts)
	}
	var snap *contract.Snapshot
	if err == nil {
		snap = res.Snapshot
		if changedOnConnect(res) {
			t.changesOnConnect.Store(true)
		}
	}
	if !sample {
		t.hint.learn(opts.Known, snap, err)
	}
	return snap, err
}

// changedOnConnect reports that a probe saw the server's listings change
// after it connected: it heard list_changed, or settling made more than
// the two listings that agree at once (a server that registers tools late
// without announcing them).
func changedOnConnect(res *probe.Result) bool {
	agreedAtOnce := res.Listings == 2 && res.Settled
	return res.ListChanged > 0 || res.Listings > 1 && !agreedAtOnce
}

// probeTarget describes the target to the probe. The HTTP client comes from
// confighttp (headers, TLS, auth extensions are applied by it).
func (t *target) probeTarget() probe.Target {
	pt := probe.Target{Name: t.name, ClientCapabilities: t.clientCapabilities}
	if len(t.cfg.Command) > 0 {
		pt.Transport = probe.TransportStdio
		pt.Command, pt.Args, pt.Dir = t.cfg.Command[0], t.cfg.Command[1:], t.cfg.WorkingDir
		for _, k := range slices.Sorted(maps.Keys(t.cfg.Env)) {
			pt.Env = append(pt.Env, k+"="+string(t.cfg.Env[k]))
		}
		return pt
	}
	pt.URL, pt.HTTPClient, pt.Secrets = t.cfg.Endpoint, t.httpClient, t.cfg.secrets()
	pt.Transport = probe.TransportAuto
	if t.cfg.Transport != "" {
		pt.Transport = probe.Transport(t.cfg.Transport)
	}
	return pt
}

// secrets are the credentials the target's HTTP client holds, for the probe
// to redact in whatever a server sends back: header values and the proxy
// URL's user info. An auth extension's token is unknown here; the probe
// learns it as the request is written.
func (tc *TargetConfig) secrets() []string {
	var out []string
	for _, v := range tc.Headers.Iter {
		out = append(out, string(v))
	}
	if u, err := url.Parse(tc.ProxyURL); err == nil && u.User != nil {
		pass, _ := u.User.Password()
		out = append(out, u.User.Username(), pass)
	} else if err != nil && strings.Contains(tc.ProxyURL, "@") {
		out = append(out, tc.ProxyURL) // unparsable: errors quote it whole
	}
	return out
}

// clientCapabilitiesJSON encodes the declared client capabilities: absent
// (nil) is what a typical agent declares, an empty map declares none.
func clientCapabilitiesJSON(caps map[string]any) json.RawMessage {
	if caps == nil {
		return json.RawMessage(probe.DefaultClientCapabilities)
	}
	b, err := json.Marshal(caps)
	if err != nil {
		return json.RawMessage(probe.DefaultClientCapabilities)
	}
	return b
}

// errorClass returns the probe error class and failing step ("internal" for
// errors that are not the probe's).
func errorClass(err error) (class, step string) {
	var pe *probe.Error
	if errors.As(err, &pe) {
		return string(pe.Class), string(pe.Step)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return string(probe.ClassTimeout), ""
	}
	return "internal", ""
}
