package docscheck

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// componentStatus is the part of an mdatagen metadata.yaml that describes
// where a component ships and who owns it.
type componentStatus struct {
	GitHubProject string `yaml:"github_project"`
	Status        struct {
		DisableCodecovBadge bool     `yaml:"disable_codecov_badge"`
		Distributions       []string `yaml:"distributions"`
		Codeowners          struct {
			Active []string `yaml:"active"`
		} `yaml:"codeowners"`
	} `yaml:"status"`
}

// The components' metadata.yaml files agree on everything but their class
// and stability, and list the distribution builder-config.yaml builds
// (named as contrib names its: otelcol-contrib is "contrib").
func TestComponentStatusAgrees(t *testing.T) {
	var manifest struct {
		Dist struct {
			Name string `yaml:"name"`
		} `yaml:"dist"`
	}
	readYAML(t, "builder-config.yaml", &manifest)
	distribution := strings.TrimPrefix(manifest.Dist.Name, "otelcol-")
	var first componentStatus
	for i, path := range []string{"receiver/mcpdriftreceiver/metadata.yaml", "processor/mcpimpactprocessor/metadata.yaml"} {
		var st componentStatus
		readYAML(t, path, &st)
		if len(st.Status.Distributions) != 1 || st.Status.Distributions[0] != distribution {
			t.Errorf("%s: distributions %v, want [%s]", path, st.Status.Distributions, distribution)
		}
		if len(st.Status.Codeowners.Active) == 0 || st.GitHubProject == "" {
			t.Errorf("%s: no codeowners or github_project", path)
		}
		if i == 0 {
			first = st
		} else if !reflect.DeepEqual(st, first) {
			t.Errorf("%s: %+v, the receiver's: %+v", path, st, first)
		}
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
