// Package scaleout runs the two-tier deployment of docs/scale-out.md on one
// machine for the end-to-end tests: otelcol-mcpdrift tier-2 instances, each
// exporting to a Store of its own in the test process; a tier-1 Collector
// (the extras build, with the loadbalancing exporter) balancing over them;
// and an OTLP load generator. The configurations are the docs' own
// examples, merged (`--config a --config b`) with overlays that change only
// what one machine needs: loopback ports, directories, the static resolver.
package scaleout

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/procs"
)

// Collector is one Collector process of the deployment. Its ports and
// directory stay the same across restarts.
type Collector struct {
	Name   string
	Dir    string // storage and the process's log
	Port   int    // OTLP/gRPC
	health int
	bin    string
	args   []string
	env    []string
	proc   *procs.Proc
}

// Endpoint is the Collector's OTLP/gRPC address.
func (c *Collector) Endpoint() string { return "127.0.0.1:" + strconv.Itoa(c.Port) }

// LogFile is the Collector's combined output (appended across restarts).
func (c *Collector) LogFile() string { return filepath.Join(c.Dir, c.Name+".log") }

// Proc is the running process.
func (c *Collector) Proc() *procs.Proc { return c.proc }

func newCollector(name, dir, bin string, configs []string, env []string) (*Collector, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	ports, err := procs.FreePorts(2)
	if err != nil {
		return nil, err
	}
	c := &Collector{Name: name, Dir: filepath.Join(dir, name), Port: ports[0], health: ports[1], bin: bin}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, err
	}
	for _, cfg := range configs {
		c.args = append(c.args, "--config", cfg)
	}
	c.env = append([]string{
		"E2E_DIR=" + c.Dir,
		"E2E_OTLP_PORT=" + strconv.Itoa(c.Port),
		"E2E_HEALTH_PORT=" + strconv.Itoa(c.health),
	}, env...)
	return c, nil
}

// Start starts the process and waits for its health check.
func (c *Collector) Start(ctx context.Context) error {
	p, err := procs.Start(c.Name, c.bin, c.args, c.env, c.LogFile())
	if err != nil {
		return err
	}
	c.proc = p
	health := fmt.Sprintf("http://127.0.0.1:%d/", c.health)
	if err := p.WaitHTTP(ctx, health, time.Minute, procs.StatusOK); err != nil {
		p.Stop(5 * time.Second)
		return fmt.Errorf("%s did not become healthy (see %s): %w", c.Name, c.LogFile(), err)
	}
	return nil
}

// Kill ends the process with SIGKILL, as a crash or an OOM kill would:
// nothing is flushed. It returns when the process has exited.
func (c *Collector) Kill() { c.proc.Kill() }

// Stop stops the process gracefully (SIGTERM) and waits for it.
func (c *Collector) Stop() {
	if c.proc != nil {
		c.proc.Stop(15 * time.Second)
	}
}

// Tier2 is an otelcol-mcpdrift instance running mcpimpact, with its store.
type Tier2 struct {
	*Collector
	Store *Store
}

// StartTier2 starts a tier-2 instance named name under dir, with a new
// Store. The configs read E2E_DIR, E2E_OTLP_PORT, E2E_HEALTH_PORT and
// E2E_STORE (the store's host:port).
func StartTier2(ctx context.Context, name, dir, bin string, configs []string) (*Tier2, error) {
	store, err := NewStore()
	if err != nil {
		return nil, err
	}
	c, err := newCollector(name, dir, bin, configs, []string{"E2E_STORE=" + store.Endpoint})
	if err == nil {
		err = c.Start(ctx)
	}
	if err != nil {
		store.Close()
		return nil, err
	}
	return &Tier2{Collector: c, Store: store}, nil
}

// Close stops the process and the store.
func (t *Tier2) Close() {
	t.Stop()
	t.Store.Close()
}

// StorageFile is the file_storage file of the instance's mcpimpact
// processor (the extension names it after the component).
func (t *Tier2) StorageFile() (string, error) {
	files, err := filepath.Glob(filepath.Join(t.Dir, "storage", "processor_mcpimpact*"))
	if err != nil || len(files) != 1 {
		return "", fmt.Errorf("%s: want one mcpimpact storage file, found %v (%v)", t.Name, files, err)
	}
	return files[0], nil
}

// Target is an MCP server tier 1 probes.
type Target struct {
	Name     string
	Endpoint string
}

// StartTier1 starts a tier-1 Collector named name that balances over
// tier2 and probes targets. It adds an overlay of its own, after configs,
// with the static resolver listing tier2 and, when there are any, the
// targets. The configs read E2E_DIR, E2E_OTLP_PORT, E2E_HEALTH_PORT and
// E2E_PROMETHEUS_PORT.
func StartTier1(ctx context.Context, name, dir, bin string, configs []string, tier2 []*Tier2, targets []Target) (*Collector, error) {
	ports, err := procs.FreePorts(1)
	if err != nil {
		return nil, err
	}
	c, err := newCollector(name, dir, bin, configs, []string{"E2E_PROMETHEUS_PORT=" + strconv.Itoa(ports[0])})
	if err != nil {
		return nil, err
	}
	overlay := filepath.Join(c.Dir, "ring.yaml")
	if err := os.WriteFile(overlay, []byte(tier1Overlay(tier2, targets)), 0o644); err != nil {
		return nil, err
	}
	c.args = append(c.args, "--config", overlay)
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// tier1Overlay is the part of tier 1's configuration only the run knows.
// Strings are written as JSON strings, which YAML reads as they are.
func tier1Overlay(tier2 []*Tier2, targets []Target) string {
	var b strings.Builder
	b.WriteString("exporters:\n  load_balancing/by_server:\n    resolver:\n      dns: null\n      static:\n        hostnames:\n")
	for _, t := range tier2 {
		fmt.Fprintf(&b, "          - %q\n", t.Endpoint())
	}
	if len(targets) > 0 {
		b.WriteString("receivers:\n  mcpdrift:\n    targets:\n")
		for _, t := range targets {
			fmt.Fprintf(&b, "      - name: %q\n        endpoint: %q\n", t.Name, t.Endpoint)
		}
	}
	return b.String()
}
