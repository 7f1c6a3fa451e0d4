#!/usr/bin/env bash
# Installs what the end-to-end and browser tests run, from Debian packages:
# prometheus (with promtool) for the backends e2e, and chromium (with a
# font) for the dashboard's tests in a real headless browser. Idempotent:
# installs only what is not on PATH yet. Needs root (CI runs as root); set
# DEBIAN_FRONTEND=noninteractive in CI.
# The Debian Prometheus service is never started: the tests start their own
# Prometheus on a loopback port with a temporary data directory.
# Jaeger is not a Debian package: scripts/backends/build-jaeger.sh builds it.
set -euo pipefail

need=()
if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
  need+=(prometheus)
fi
if ! command -v chromium >/dev/null; then
  # fonts-dejavu-core: text in the screenshots renders the same on every machine.
  need+=(chromium fonts-dejavu-core)
fi
if [ ${#need[@]} -eq 0 ]; then
  echo "backends: prometheus $(prometheus --version 2>&1 | head -1 | awk '{print $3}') and $(chromium --version 2>/dev/null) already installed"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "backends: installing ${need[*]} needs root (apt-get install ${need[*]})" >&2
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
if ! apt-get install -o Acquire::Retries=3 -y -q --no-install-recommends "${need[@]}"; then
  apt-get update -o Acquire::Retries=3 -q
  apt-get install -o Acquire::Retries=3 -y -q --no-install-recommends "${need[@]}"
fi
echo "backends: installed ${need[*]}: $(prometheus --version 2>&1 | head -1); $(chromium --version 2>/dev/null)"
