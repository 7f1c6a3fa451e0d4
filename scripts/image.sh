#!/usr/bin/env bash
# make image: OCI image layouts, without a container daemon, of otelcol-mcpdrift
# (default configuration docs/examples/image.yaml) and of the mcpdrift CLI (for
# `mcpdrift proxy` as a sidecar), each a linux/amd64 + linux/arm64 index, into
# _build/image/. The binaries are make dist's, built here for those platforms.
# Load one with any OCI tool: crane push _build/image/otelcol-mcpdrift REF,
# skopeo copy oci:_build/image/otelcol-mcpdrift docker://REF, podman load.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${VERSION:?VERSION is set by make}
commit=${COMMIT:?COMMIT is set by make}
bins=_build/image/bin
DIST_PLATFORMS="linux/amd64 linux/arm64" DIST_DIR=$bins scripts/dist.sh
created=$(git show -s --format=%cI HEAD)
v=${version#v}
image() { GOWORK=off go run ./internal/dev/image/cmd/build-image -version "$version" -commit "$commit" -created "$created" "$@"; }
image -title otelcol-mcpdrift -description "OpenTelemetry Collector with MCP contract drift detection (mcpdrift) and impact analysis (mcpimpact)" \
  -binary /otelcol-mcpdrift -config docs/examples/image.yaml -config-path /etc/otelcol-mcpdrift/config.yaml \
  -cmd --config -cmd /etc/otelcol-mcpdrift/config.yaml -port 4317/tcp -port 4318/tcp -port 13133/tcp \
  -platform "amd64=$bins/otelcol-mcpdrift_${v}_linux_amd64" -platform "arm64=$bins/otelcol-mcpdrift_${v}_linux_arm64" \
  -out _build/image/otelcol-mcpdrift
image -title mcpdrift -description "mcpdrift CLI: contract drift checks, and mcpdrift proxy as a sidecar" \
  -binary /mcpdrift -cmd --help \
  -platform "amd64=$bins/mcpdrift_${v}_linux_amd64" -platform "arm64=$bins/mcpdrift_${v}_linux_arm64" \
  -out _build/image/mcpdrift
du -sh _build/image/otelcol-mcpdrift _build/image/mcpdrift
