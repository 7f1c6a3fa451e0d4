package docscheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

// helmTemplate builds tools/helmtemplate, which renders a chart as `helm
// template` does with Helm v4's own packages (the release is pinned in its
// go.mod), into _build once per test run. Built with the flags the
// distributions are built with, it reuses the packages they compiled.
var helmTemplate = sync.OnceValues(func() (string, error) {
	bin, err := filepath.Abs(filepath.Join(root, "_build", "helmtemplate"))
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "-C", filepath.Join(root, "tools", "helmtemplate"), "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-trimpath", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building tools/helmtemplate: %v\n%s", err, out)
	}
	return bin, nil
})

// chart is a copy of the upstream opentelemetry-collector chart 0.170.0,
// vendored for this test: no registry here serves charts.
const chart = "testdata/helm/opentelemetry-collector"

// TestHelmValues renders the upstream chart with deploy/helm/values.yaml, and
// with discovery-values.yaml over it, and validates the Collector
// configuration each renders with the distribution; the workload must run
// our image's binary with that configuration.
func TestHelmValues(t *testing.T) {
	t.Parallel()
	dist := distribution(t)
	for _, c := range []struct {
		name   string
		values []string
	}{
		{"static targets", []string{"values.yaml"}},
		{"discovery", []string{"values.yaml", "discovery-values.yaml"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			relay, workload, kinds := renderChart(t, c.values...)
			container := dig(t, workload, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
			if got := container["command"].([]any)[0]; got != "/otelcol-mcpdrift" {
				t.Errorf("the chart runs %v, want /otelcol-mcpdrift", got)
			}
			if img := container["image"].(string); !strings.Contains(img, "otelcol-mcpdrift") {
				t.Errorf("the chart runs image %s", img)
			}
			if c.name == "discovery" {
				// The observer needs to watch pods: the preset's ClusterRole.
				if !strings.Contains(relay, "k8s_observer") || !strings.Contains(relay, "receiver_creator/mcpdrift") || !kinds["ClusterRole"] {
					t.Errorf("rendered kinds %v; the configuration has no k8s_observer or receiver_creator/mcpdrift:\n%s", kinds, relay)
				}
			}
			validate(t, dist, "helm-relay.yaml", []byte(relay))
		})
	}
}

// renderChart renders the vendored chart with deploy/helm's values files,
// in order, and returns the Collector configuration (the relay ConfigMap),
// the workload and the kinds of everything rendered.
func renderChart(t *testing.T, values ...string) (string, map[string]any, map[string]bool) {
	t.Helper()
	helm, err := helmTemplate()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"-namespace", "observability"}
	for _, v := range values {
		args = append(args, "-f", filepath.Join(root, "deploy", "helm", v))
	}
	cmd := exec.CommandContext(ctx, helm, append(args, "mcpdrift", filepath.Join(root, chart))...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	var relay string
	var workload map[string]any
	kinds := map[string]bool{}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("helm template's output: %v", err)
		}
		kind, _ := doc["kind"].(string)
		kinds[kind] = true
		switch kind {
		case "ConfigMap":
			if data, ok := doc["data"].(map[string]any); ok {
				if r, ok := data["relay"].(string); ok {
					relay = r
				}
			}
		case "StatefulSet", "Deployment", "DaemonSet":
			workload = doc
		}
	}
	if relay == "" || workload == nil {
		t.Fatalf("helm template rendered no relay ConfigMap or no workload:\n%s", out)
	}
	return relay, workload, kinds
}

// TestOperatorExample validates the config of deploy/operator/collector.yaml,
// the OpenTelemetryCollector resource the operator renders into the pod.
func TestOperatorExample(t *testing.T) {
	dist := distribution(t)
	src, err := os.ReadFile(filepath.Join(root, "deploy", "operator", "collector.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cr map[string]any
	if err := yaml.Unmarshal(src, &cr); err != nil {
		t.Fatal(err)
	}
	if cr["kind"] != "OpenTelemetryCollector" || !strings.Contains(dig(t, cr, "spec", "image").(string), "otelcol-mcpdrift") {
		t.Errorf("deploy/operator/collector.yaml is a %v of image %v", cr["kind"], dig(t, cr, "spec", "image"))
	}
	config, err := yaml.Marshal(dig(t, cr, "spec", "config"))
	if err != nil {
		t.Fatal(err)
	}
	validate(t, dist, "operator-config.yaml", config)
}

func distribution(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join(root, "_build", defaultDistribution, defaultDistribution))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		testservers.SkipLoudly(t, "_build/otelcol-mcpdrift/otelcol-mcpdrift is not built, so the deployment examples were NOT validated; build it with: make distro")
	}
	return bin
}

func validate(t *testing.T, dist, name string, config []byte) {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, config, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, dist, "validate", "--config", file).CombinedOutput(); err != nil {
		t.Fatalf("%s validate: %v\n%s\nconfig:\n%s", defaultDistribution, err, out, config)
	}
}

// dig walks nested maps by key.
func dig(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok || m[k] == nil {
			t.Fatalf("no %s in %v", strings.Join(keys, "."), v)
		}
		v = m[k]
	}
	return v
}
