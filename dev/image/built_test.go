//go:build e2e

package image

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// TestBuiltImages reads back the layouts make image wrote (make e2e builds
// them for this machine's architecture) and runs each entrypoint from its
// extracted root filesystem: the Collector validates its default
// configuration and lists the discovery components; the CLI prints its
// version. What TestDistributionImage checks of an image built here, this
// checks of the image as shipped.
func TestBuiltImages(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, c := range []struct {
		name string
		runs [][]string // commands run from the root filesystem, {path, args...}
		want []string   // what their output must contain, one per command
	}{
		{"otelcol-mcpdrift", [][]string{
			{"otelcol-mcpdrift", "validate", "--config", "etc/otelcol-mcpdrift/config.yaml"},
			{"otelcol-mcpdrift", "components"},
		}, []string{"", "name: receiver_creator"}},
		{"mcpdrift", [][]string{{"mcpdrift", "version"}}, []string{"mcpdrift "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, err := filepath.Abs(filepath.Join(root, "_build", "image", c.name))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
				t.Fatalf("_build/image/%s is not built: make e2e builds it (make image)", c.name)
			}
			img, archs := readLayout(t, dir, "")
			t.Logf("%s: linux/%s", c.name, strings.Join(archs, ", linux/"))
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			cfg := cf.Config
			if !slices.Equal(cfg.Entrypoint, []string{"/" + c.name}) || cfg.User != "10001:10001" {
				t.Errorf("entrypoint %v, user %q: want /%s as 10001:10001", cfg.Entrypoint, cfg.User, c.name)
			}
			for _, l := range []string{"title", "version", "revision", "source", "licenses", "created"} {
				if cfg.Labels["org.opencontainers.image."+l] == "" {
					t.Errorf("no org.opencontainers.image.%s label: %v", l, cfg.Labels)
				}
			}
			rootfs := t.TempDir()
			owners := extract(t, mutate.Extract(img), rootfs)
			if owners["var/lib/mcpdrift"] != UID || owners[c.name] != 0 {
				t.Errorf("owners %v: the state directory belongs to the user, the binary to root", owners)
			}
			for i, run := range c.runs {
				cmd := exec.CommandContext(ctx, filepath.Join(rootfs, run[0]), run[1:]...)
				cmd.Dir = rootfs
				out, err := cmd.CombinedOutput()
				if err != nil || !strings.Contains(string(out), c.want[i]) {
					t.Errorf("the image's %s: %v; want output with %q:\n%s", strings.Join(run, " "), err, c.want[i], out)
				}
			}
		})
	}
}
