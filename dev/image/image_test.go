package image

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/mcpdrift/mcpdrift/dev/testkit/testservers"
)

const root = "../.."

// TestDistributionImage builds the otelcol-mcpdrift image from the
// distribution make distro built, writes it as an OCI layout, reads it back,
// checks its configuration, and runs the entrypoint's validate on the default
// configuration inside the extracted root filesystem.
func TestDistributionImage(t *testing.T) {
	bin, err := filepath.Abs(filepath.Join(root, "_build", "otelcol-mcpdrift", "otelcol-mcpdrift"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		testservers.SkipLoudly(t, "_build/otelcol-mcpdrift/otelcol-mcpdrift is not built, so the image was NOT checked; build it with: make distro")
	}
	config, err := os.ReadFile(filepath.Join(root, "docs", "examples", "image.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	spec := Spec{
		Binary: "/otelcol-mcpdrift", Cmd: []string{"--config", "/etc/otelcol-mcpdrift/config.yaml"},
		Config: config, ConfigPath: "/etc/otelcol-mcpdrift/config.yaml",
		CACerts: []byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"),
		Ports:   []string{"4317/tcp", "4318/tcp", "13133/tcp"},
		Labels:  map[string]string{"org.opencontainers.image.title": "otelcol-mcpdrift"},
		Created: created,
	}
	// Both architectures carry the host's binary here: what is checked is
	// the index, and the amd64 entry is run.
	idx, err := Build(spec, []Platform{{Arch: runtime.GOARCH, Binary: bin}, {Arch: other(runtime.GOARCH), Binary: bin}})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "layout")
	if err := Write(dir, idx, "0.1.0"); err != nil {
		t.Fatal(err)
	}

	imgs, archs := readLayout(t, dir, "0.1.0")
	img := imgs[runtime.GOARCH]
	if !slices.Equal(archs, []string{"amd64", "arm64"}) {
		t.Errorf("platforms %v, want amd64 and arm64", archs)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if !slices.Equal(c.Entrypoint, []string{"/otelcol-mcpdrift"}) || !slices.Equal(c.Cmd, spec.Cmd) {
		t.Errorf("entrypoint %v, cmd %v", c.Entrypoint, c.Cmd)
	}
	if c.User != "10001:10001" {
		t.Errorf("user %q, want 10001:10001 (not root)", c.User)
	}
	for _, p := range spec.Ports {
		if _, ok := c.ExposedPorts[p]; !ok {
			t.Errorf("port %s not exposed: %v", p, c.ExposedPorts)
		}
	}
	if c.Labels["org.opencontainers.image.title"] != "otelcol-mcpdrift" || !cf.Created.Time.Equal(created) {
		t.Errorf("labels %v, created %v", c.Labels, cf.Created)
	}

	// Same inputs, same digest: nothing of the build time or place leaks in.
	again, err := Build(spec, []Platform{{Arch: runtime.GOARCH, Binary: bin}, {Arch: other(runtime.GOARCH), Binary: bin}})
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := idx.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds of one image: digests %s and %s", d1, d2)
	}

	rootfs := t.TempDir()
	owners := extract(t, mutate.Extract(img), rootfs)
	if owners["var/lib/mcpdrift"] != UID || owners["otelcol-mcpdrift"] != 0 {
		t.Errorf("owners %v: the state directory belongs to the user, the binary to root", owners)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(rootfs, "otelcol-mcpdrift"), "validate", "--config", filepath.Join(rootfs, "etc/otelcol-mcpdrift/config.yaml")).CombinedOutput()
	if err != nil {
		t.Fatalf("the image's entrypoint, validate on its default configuration: %v\n%s", err, out)
	}
}

// readLayout reads the OCI image layout in dir back: its index.json must
// name one image index tagged ref (any tag when ref is ""), of linux images.
// It returns the image for each architecture and the architectures, sorted.
func readLayout(t *testing.T, dir, ref string) (map[string]v1.Image, []string) {
	t.Helper()
	back, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := back.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Manifests) != 1 || ref != "" && top.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != ref {
		t.Fatalf("the layout's index holds %v, want the image index, tagged %s", top.Manifests, ref)
	}
	inner, err := back.ImageIndex(top.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := inner.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	imgs := map[string]v1.Image{}
	for _, m := range im.Manifests {
		if m.Platform == nil || m.Platform.OS != "linux" {
			t.Fatalf("index entry %s has platform %v", m.Digest, m.Platform)
		}
		if imgs[m.Platform.Architecture], err = inner.Image(m.Digest); err != nil {
			t.Fatal(err)
		}
	}
	if imgs[runtime.GOARCH] == nil {
		t.Fatalf("%s has no linux/%s image (it has %v)", dir, runtime.GOARCH, slices.Sorted(maps.Keys(imgs)))
	}
	return imgs, slices.Sorted(maps.Keys(imgs))
}

func other(arch string) string {
	if arch == "amd64" {
		return "arm64"
	}
	return "amd64"
}

// extract unpacks a flattened image filesystem into dir (regular files and
// directories only: the image has nothing else) and returns each entry's
// owner.
func extract(t *testing.T, rc io.ReadCloser, dir string) map[string]int {
	t.Helper()
	defer rc.Close()
	owners := map[string]int{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return owners
		}
		if err != nil {
			t.Fatal(err)
		}
		owners[h.Name] = h.Uid
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode).Perm())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		default:
			t.Fatalf("unexpected entry %s of type %c", h.Name, h.Typeflag)
		}
	}
}
