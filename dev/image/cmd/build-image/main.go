// Command build-image writes an OCI image layout of one static binary for
// several linux platforms (make image: otelcol-mcpdrift and the mcpdrift CLI).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/dev/image"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "build-image:", err)
		os.Exit(1)
	}
}

func run() error {
	var ports, platforms, cmd list
	title := flag.String("title", "", "image title (org.opencontainers.image.title)")
	description := flag.String("description", "", "org.opencontainers.image.description")
	version := flag.String("version", "", "release (org.opencontainers.image.version)")
	commit := flag.String("commit", "", "source commit (org.opencontainers.image.revision)")
	created := flag.String("created", "", "creation time, RFC 3339 (the commit's time keeps builds reproducible)")
	binary := flag.String("binary", "", "path of the binary in the image, its entrypoint")
	config := flag.String("config", "", "a default configuration file to include")
	configPath := flag.String("config-path", "", "where the configuration goes in the image")
	cacerts := flag.String("cacerts", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle of CA certificates")
	out := flag.String("out", "", "directory to write the OCI image layout to (replaced)")
	flag.Var(&ports, "port", "an exposed port, 4317/tcp (repeatable)")
	flag.Var(&platforms, "platform", "ARCH=PATH of a static linux binary (repeatable)")
	flag.Var(&cmd, "cmd", "a default argument (repeatable)")
	flag.Parse()
	if *title == "" || *binary == "" || *out == "" || len(platforms) == 0 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	at, err := time.Parse(time.RFC3339, *created)
	if err != nil {
		return fmt.Errorf("-created: %w", err)
	}
	spec := image.Spec{
		Binary: *binary, Cmd: cmd, ConfigPath: *configPath, Ports: ports, Created: at.UTC(),
		Labels: map[string]string{
			"org.opencontainers.image.title":       *title,
			"org.opencontainers.image.description": *description,
			"org.opencontainers.image.version":     *version,
			"org.opencontainers.image.revision":    *commit,
			"org.opencontainers.image.created":     at.UTC().Format(time.RFC3339),
			"org.opencontainers.image.source":      "https://github.com/mcpdrift/mcpdrift",
			"org.opencontainers.image.licenses":    "Apache-2.0",
		},
	}
	if spec.CACerts, err = os.ReadFile(*cacerts); err != nil {
		return err
	}
	if *config != "" {
		if spec.Config, err = os.ReadFile(*config); err != nil {
			return err
		}
	}
	var plats []image.Platform
	for _, p := range platforms {
		arch, path, ok := strings.Cut(p, "=")
		if !ok {
			return fmt.Errorf("-platform %q: want ARCH=PATH", p)
		}
		plats = append(plats, image.Platform{Arch: arch, Binary: path})
	}
	idx, err := image.Build(spec, plats)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(*out); err != nil {
		return err
	}
	if err := image.Write(*out, idx, strings.TrimPrefix(*version, "v")); err != nil {
		return err
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s %s\n", *out, d)
	return nil
}
