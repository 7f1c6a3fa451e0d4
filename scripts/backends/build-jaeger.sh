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
# Listing the packages downloads the modules the build needs (not every
# module in the graph): the step that meets the network, retried alone so
# that the build after it never is.
"$root/scripts/retry.sh" go -C "$root/tools/jaeger" list -deps github.com/jaegertracing/jaeger/cmd/jaeger >/dev/null
ver=$(go -C "$root/tools/jaeger" list -m -f '{{.Version}}' github.com/jaegertracing/jaeger)
CGO_ENABLED=0 go -C "$root/tools/jaeger" build -trimpath \
  -ldflags "-X github.com/jaegertracing/jaeger/internal/version.latestVersion=$ver" \
  -o "$out" github.com/jaegertracing/jaeger/cmd/jaeger
echo "built $out (jaeger $ver)"
