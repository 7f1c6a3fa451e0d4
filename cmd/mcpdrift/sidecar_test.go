package main

import (
	"os"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestSidecarExampleArgs: the proxy container of deploy/sidecar/deployment.yaml
// runs a command and flags this CLI accepts.
func TestSidecarExampleArgs(t *testing.T) {
	src, err := os.ReadFile("../../deploy/sidecar/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Name string
						Args []string
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal(src, &d); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "mcpdrift-proxy" {
			args = c.Args
		}
	}
	if len(args) == 0 {
		t.Fatal("no mcpdrift-proxy container with args")
	}
	cmd, rest, err := newRootCommand().Find(args)
	if err != nil || cmd.Name() != "proxy" {
		t.Fatalf("%v finds %v (%v), want the proxy command", args, cmd.Name(), err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("mcpdrift %v: %v", args, err)
	}
	for _, f := range []string{"listen", "upstream"} {
		if !cmd.Flags().Changed(f) {
			t.Errorf("the sidecar sets no --%s", f)
		}
	}
}
