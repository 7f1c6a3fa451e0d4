#!/usr/bin/env bash
# Builds Jaeger v2 (all-in-one) from the Go module proxy into _build/jaeger.
# The version is pinned in tools/jaeger/go.mod, a module of its own so that
# Jaeger's large dependency graph stays away from the project's other tools.
# Usage: scripts/backends/build-jaeger.sh [output]   (default _build/jaeger)
set -euo pipefail
export GOWORK=off # tools/jaeger is not one of the workspace's modules (go.work)
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/_build/jaeger}
case $out in /*) ;; *) out=$PWD/$out ;; esac
mkdir -p "$(dirname "$out")"
ver=$(go -C "$root/tools/jaeger" list -m -f '{{.Version}}' github.com/jaegertracing/jaeger)
CGO_ENABLED=0 go -C "$root/tools/jaeger" build -trimpath \
  -ldflags "-X github.com/jaegertracing/jaeger/internal/version.latestVersion=$ver" \
  -o "$out" github.com/jaegertracing/jaeger/cmd/jaeger
echo "built $out (jaeger $ver)"
