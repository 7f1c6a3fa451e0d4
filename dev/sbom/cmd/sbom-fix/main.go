// Command sbom-fix names our own modules in the CycloneDX SBOMs make dist
// writes (package sbom says why): sbom-fix -version V BINARY SBOM rewrites
// SBOM in place.
package main

import (
	"debug/buildinfo"
	"flag"
	"fmt"
	"os"

	"github.com/mcpdrift/mcpdrift/dev/sbom"
)

func main() {
	version := flag.String("version", "", "the version the binary was built as (v0.1.0)")
	flag.Parse()
	if *version == "" || flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: sbom-fix -version V BINARY SBOM")
		os.Exit(2)
	}
	if err := run(*version, flag.Arg(0), flag.Arg(1)); err != nil {
		fmt.Fprintln(os.Stderr, "sbom-fix:", err)
		os.Exit(1)
	}
}

func run(version, binary, file string) error {
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		return err
	}
	in, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out, err := sbom.Fix(in, info, version)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return os.WriteFile(file, out, 0o644)
}
