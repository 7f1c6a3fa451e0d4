// Package image builds the OCI images of otelcol-mcpdrift and of the mcpdrift
// CLI without a container daemon (go-containerregistry): one static binary,
// CA certificates, an unprivileged user, an optional default configuration
// and the org.opencontainers.image labels, per platform, under one index,
// written as an OCI image layout. Every file has a fixed time and owner,
// so the same inputs give the same digests.
package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// UID is the unprivileged user (and group) the images run as.
const UID = 10001

// Spec describes one image, for every platform.
type Spec struct {
	// Binary is where the executable goes, "/otelcol-mcpdrift"; it is the
	// entrypoint.
	Binary string
	// Cmd is the default command (arguments to the entrypoint).
	Cmd []string
	// Config, when set, is a file placed at ConfigPath.
	Config     []byte
	ConfigPath string
	// CACerts is a PEM bundle placed at /etc/ssl/certs/ca-certificates.crt.
	CACerts []byte
	// Ports are exposed ("4317/tcp").
	Ports []string
	// Labels are the org.opencontainers.image annotations of the config.
	Labels map[string]string
	// Created is every file's time and the image's creation time (the
	// source commit's time keeps the build reproducible).
	Created time.Time
}

// Platform is one binary of the image, for a linux/<arch> platform.
type Platform struct {
	Arch   string // amd64, arm64
	Binary string // path of the static linux binary
}

// Build returns the multi-platform index of spec's image.
func Build(spec Spec, platforms []Platform) (v1.ImageIndex, error) {
	if !path.IsAbs(spec.Binary) {
		return nil, fmt.Errorf("binary path %q: want an absolute path in the image", spec.Binary)
	}
	if len(platforms) == 0 {
		return nil, fmt.Errorf("no platforms")
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		img, err := platformImage(spec, p)
		if err != nil {
			return nil, fmt.Errorf("linux/%s: %w", p.Arch, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: p.Arch}},
		})
	}
	return idx, nil
}

// Write writes idx as an OCI image layout in dir (which must not exist or
// be empty): its index.json names idx, tagged ref (the
// org.opencontainers.image.ref.name annotation: oci:DIR:REF in skopeo).
func Write(dir string, idx v1.ImageIndex, ref string) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref}))
}

func platformImage(spec Spec, p Platform) (v1.Image, error) {
	bin, err := os.ReadFile(p.Binary)
	if err != nil {
		return nil, err
	}
	files := []file{
		{name: "etc/passwd", mode: 0o644, data: fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\nmcpdrift:x:%d:%d:mcpdrift:/home/mcpdrift:/sbin/nologin\n", UID, UID)},
		{name: "etc/group", mode: 0o644, data: fmt.Appendf(nil, "root:x:0:\nmcpdrift:x:%d:\n", UID)},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: spec.CACerts},
		{name: strings.TrimPrefix(spec.Binary, "/"), mode: 0o755, data: bin},
		// Writable by the user: the working directory, and where file_storage
		// keeps baselines unless a volume is mounted there.
		{name: "home/mcpdrift", dir: true, mode: 0o755, owner: UID},
		{name: "var/lib/mcpdrift", dir: true, mode: 0o755, owner: UID},
		{name: "tmp", dir: true, mode: 0o1777},
	}
	if spec.Config != nil {
		files = append(files, file{name: strings.TrimPrefix(spec.ConfigPath, "/"), mode: 0o644, data: spec.Config})
	}
	layerTar, err := tarOf(files, spec.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", p.Arch
	cf.Created = v1.Time{Time: spec.Created}
	cf.Config.Entrypoint = []string{spec.Binary}
	cf.Config.Cmd = spec.Cmd
	cf.Config.User = fmt.Sprintf("%d:%d", UID, UID)
	cf.Config.WorkingDir = "/home/mcpdrift"
	cf.Config.Env = []string{"HOME=/home/mcpdrift", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
	cf.Config.Labels = spec.Labels
	if len(spec.Ports) > 0 {
		cf.Config.ExposedPorts = map[string]struct{}{}
		for _, port := range spec.Ports {
			cf.Config.ExposedPorts[port] = struct{}{}
		}
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, spec.Labels).(v1.Image), nil
}

type file struct {
	name  string
	dir   bool
	mode  int64
	owner int
	data  []byte
}

// tarOf is the layer: the files in order, their parent directories first,
// every entry with the same time.
func tarOf(files []file, at time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	seen := map[string]bool{}
	var mkdirs func(dir string) error
	mkdirs = func(dir string) error {
		if dir == "." || dir == "" || seen[dir] {
			return nil
		}
		if err := mkdirs(path.Dir(dir)); err != nil {
			return err
		}
		seen[dir] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: at, Format: tar.FormatPAX})
	}
	for _, f := range files {
		if err := mkdirs(path.Dir(f.name)); err != nil {
			return nil, err
		}
		h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: at, Uid: f.owner, Gid: f.owner, Format: tar.FormatPAX}
		if f.dir {
			seen[f.name] = true
			h.Typeflag, h.Name = tar.TypeDir, f.name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
