// Command helmtemplate renders a local Helm chart as `helm template` does
// (client-only: default capabilities, no cluster), from Helm v4's own chart
// loader, values merging, engine and manifest sorter. The docs tests render
// the upstream Collector chart with it: the whole helm CLI compiles about 940
// packages (kubectl, cli-runtime, the registry clients) where rendering needs
// about 425, of which the distributions already compile 390 at the same
// versions (go.mod aligns them), so a cold build compiles about 35.
//
// Usage: helmtemplate [-namespace NS] [-f values.yaml]... NAME CHART
//
// It writes what `helm template NAME CHART --namespace NS -f ...` writes:
// the manifests in install order, then the hooks.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	v2loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
)

// valueFiles is the repeatable -f flag.
type valueFiles []string

func (v *valueFiles) String() string     { return strings.Join(*v, ",") }
func (v *valueFiles) Set(s string) error { *v = append(*v, s); return nil }

func main() {
	var files valueFiles
	namespace := flag.String("namespace", "default", "the release's namespace")
	flag.Var(&files, "f", "a values file (repeatable; later files win)")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: helmtemplate [-namespace NS] [-f values.yaml]... NAME CHART")
		os.Exit(2)
	}
	if err := render(os.Stdout, flag.Arg(0), flag.Arg(1), *namespace, files); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

// render follows helm's template command (pkg/cmd/template.go, install.go)
// and action.Install's client-only run (pkg/action/install.go, action.go's
// renderResources) for a local chart with values files.
func render(w io.Writer, name, chartPath, namespace string, files []string) error {
	if err := chartutil.ValidateReleaseName(name); err != nil {
		return fmt.Errorf("release name %q: %w", name, err)
	}
	vals := map[string]any{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		m, err := v2loader.LoadValues(bytes.NewReader(raw))
		if err != nil {
			return fmt.Errorf("failed to parse %s: %w", f, err)
		}
		vals = v2loader.MergeMaps(vals, m)
	}
	loaded, err := loader.Load(chartPath)
	if err != nil {
		return err
	}
	ch, ok := loaded.(*chart.Chart)
	if !ok {
		return fmt.Errorf("%s: a chart of apiVersion v1 or v2 is expected", chartPath)
	}
	if t := ch.Metadata.Type; t != "" && t != "application" {
		return fmt.Errorf("%s charts are not installable", t)
	}
	// helm template refuses a chart whose charts/ lacks a dependency it
	// declares (action.CheckDependencies, in the package this avoids).
	var missing []string
	for _, d := range ch.Metadata.Dependencies {
		if !slices.ContainsFunc(ch.Dependencies(), func(sub *chart.Chart) bool { return sub.Name() == d.Name }) {
			missing = append(missing, d.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("found in Chart.yaml, but missing in charts/ directory: %s", strings.Join(missing, ", "))
	}
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return fmt.Errorf("chart dependencies processing failed: %w", err)
	}
	caps := common.DefaultCapabilities.Copy()
	if kv := ch.Metadata.KubeVersion; kv != "" && !chartutil.IsCompatibleRange(kv, caps.KubeVersion.String()) {
		return fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", kv, caps.KubeVersion.Version)
	}
	top, err := util.ToRenderValuesWithSchemaValidation(ch, vals, common.ReleaseOptions{
		Name: name, Namespace: namespace, Revision: 1, IsInstall: true,
	}, caps, false)
	if err != nil {
		return err
	}
	var e engine.Engine
	rendered, err := e.RenderWithContext(context.Background(), ch, top)
	if err != nil {
		return err
	}
	// NOTES.txt is rendered like a template but is neither a manifest nor a hook.
	for k := range rendered {
		if strings.HasSuffix(k, "NOTES.txt") {
			delete(rendered, k)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(rendered, nil, releaseutil.InstallOrder)
	if err != nil {
		return err
	}
	var doc strings.Builder
	for _, m := range manifests {
		fmt.Fprintf(&doc, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	var out strings.Builder
	fmt.Fprintln(&out, strings.TrimSpace(doc.String()))
	for _, h := range hooks {
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	_, err = io.WriteString(w, out.String())
	return err
}
