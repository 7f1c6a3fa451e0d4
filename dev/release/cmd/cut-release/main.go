// Command cut-release makes a release of every module in a clean clone:
// scripts/release.sh runs it (see CONTRIBUTING.md, "Releases").
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/mcpdrift/mcpdrift/dev/release"
)

func main() {
	repo := flag.String("repo", "", "a clean clone to make the release commit and tags in")
	version := flag.String("version", "", "the release, such as v0.1.0")
	proxy := flag.String("proxy", "", "directory to write the modules to, as a Go module proxy")
	flag.Parse()
	if *repo == "" || *version == "" || *proxy == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: cut-release -repo DIR -version vX.Y.Z -proxy DIR")
		os.Exit(2)
	}
	abs, err := filepath.Abs(*proxy)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cut-release:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := release.Cut(ctx, release.Options{Repo: *repo, Version: *version, Proxy: abs, Log: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cut-release:", err)
		os.Exit(1)
	}
	fmt.Println(res.Commit)
	fmt.Println(strings.Join(res.Tags, "\n"))
}
