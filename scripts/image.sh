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
# IMAGE_ARCHS narrows the index (make e2e builds the host's only: a second
# architecture is a whole Collector compile more).
archs=${IMAGE_ARCHS:-amd64 arm64}
bins=_build/image/bin
DIST_PLATFORMS=$(for a in $archs; do echo "linux/$a"; done) DIST_DIR=$bins scripts/dist.sh
created=$(git show -s --format=%cI HEAD)
v=${version#v}
# platforms NAME: the -platform flags of NAME's binaries, one per architecture.
platforms() { for a in $archs; do echo "-platform" "$a=$bins/${1}_${v}_linux_$a"; done; }
image() { GOWORK=off go run ./dev/image/cmd/build-image -version "$version" -commit "$commit" -created "$created" "$@"; }
# shellcheck disable=SC2046
image -title otelcol-mcpdrift -description "OpenTelemetry Collector with MCP contract drift detection (mcpdrift) and impact analysis (mcpimpact)" \
  -binary /otelcol-mcpdrift -config docs/examples/image.yaml -config-path /etc/otelcol-mcpdrift/config.yaml \
  -cmd --config -cmd /etc/otelcol-mcpdrift/config.yaml -port 4317/tcp -port 4318/tcp -port 13133/tcp \
  $(platforms otelcol-mcpdrift) -out _build/image/otelcol-mcpdrift
# shellcheck disable=SC2046
image -title mcpdrift -description "mcpdrift CLI: contract drift checks, and mcpdrift proxy as a sidecar" \
  -binary /mcpdrift -cmd --help $(platforms mcpdrift) -out _build/image/mcpdrift
du -sh _build/image/otelcol-mcpdrift _build/image/mcpdrift
