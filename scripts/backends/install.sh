#!/usr/bin/env bash
# Installs the backends the end-to-end tests run from Debian packages:
# prometheus (with promtool). Idempotent: does nothing when both are on PATH.
# Needs root (CI runs as root); set DEBIAN_FRONTEND=noninteractive in CI.
# The Debian service is never started: the tests start their own Prometheus
# on a loopback port with a temporary data directory.
# Jaeger is not a Debian package: scripts/backends/build-jaeger.sh builds it.
set -euo pipefail

if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
  echo "backends: prometheus $(prometheus --version 2>&1 | head -1 | awk '{print $3}') already installed"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "backends: installing prometheus needs root (apt-get install prometheus)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive

# Keep the package's service from starting (a container has no init to stop
# it, and it would hold port 9090): policy-rc.d answering 101 forbids it.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi

# The package lists may be missing or stale on a fresh machine.
if ! apt-get install -y -q --no-install-recommends prometheus; then
  apt-get update -q
  apt-get install -y -q --no-install-recommends prometheus
fi
echo "backends: installed $(prometheus --version 2>&1 | head -1)"
