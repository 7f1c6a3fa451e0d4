//go:build e2e

package image

import (
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// TestBuiltImages reads back the layouts make image wrote (make e2e builds
// them for this machine's architecture, make image for amd64 and arm64) and
// checks every architecture's image: its configuration and labels, its
// files' owners, and that its entrypoint is an ELF executable for that
// architecture. The image of this machine's architecture is run from its
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
			imgs, archs := readLayout(t, dir, "")
			t.Logf("%s: linux/%s", c.name, strings.Join(archs, ", linux/"))
			for _, arch := range archs {
				t.Run(arch, func(t *testing.T) {
					rootfs := checkBuilt(t, imgs[arch], c.name, arch)
					if arch != runtime.GOARCH {
						return
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
		})
	}
}

// elfMachine is the ELF machine of a linux binary for each architecture
// make image builds.
var elfMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// checkBuilt checks the linux/arch image of binary name as make image built
// it and returns the root filesystem it extracted.
func checkBuilt(t *testing.T, img v1.Image, name, arch string) string {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != arch {
		t.Errorf("the config says %s/%s, the index linux/%s", cf.OS, cf.Architecture, arch)
	}
	cfg := cf.Config
	if !slices.Equal(cfg.Entrypoint, []string{"/" + name}) || cfg.User != "10001:10001" {
		t.Errorf("entrypoint %v, user %q: want /%s as 10001:10001", cfg.Entrypoint, cfg.User, name)
	}
	for _, l := range []string{"title", "version", "revision", "source", "licenses", "created"} {
		if cfg.Labels["org.opencontainers.image."+l] == "" {
			t.Errorf("no org.opencontainers.image.%s label: %v", l, cfg.Labels)
		}
	}
	rootfs := t.TempDir()
	owners := extract(t, mutate.Extract(img), rootfs)
	if owners["var/lib/mcpdrift"] != UID || owners[name] != 0 {
		t.Errorf("owners %v: the state directory belongs to the user, the binary to root", owners)
	}
	f, err := elf.Open(filepath.Join(rootfs, name))
	if err != nil {
		t.Fatalf("the entrypoint: %v", err)
	}
	defer f.Close()
	if f.Machine != elfMachine[arch] || f.Type != elf.ET_EXEC || f.OSABI != elf.ELFOSABI_NONE {
		t.Errorf("the entrypoint is an ELF %v %v (OS ABI %v), want an executable for %v", f.Type, f.Machine, f.OSABI, elfMachine[arch])
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the entrypoint has an interpreter: it is not static")
		}
	}
	return rootfs
}
