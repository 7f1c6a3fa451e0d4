#!/usr/bin/env bash
# make dist-check: are the release binaries reproducible? Builds make dist's
# DIST_PLATFORMS twice and compares every file's SHA-256: once here into
# dist/, once from a scratch clone of HEAD at another path with an empty build
# cache of its own (DIST_CHECK_GOCACHE=shared reuses yours: faster, but then
# the packages come from one cache and only the links are compared). The
# clone builds HEAD as committed, so the working tree must have no changes.
set -euo pipefail
# shellcheck source=scripts/clone-head.sh
. "$(dirname "$0")/clone-head.sh" "the second build is of HEAD as committed"

out=${DIST_DIR:-dist}
first=$(date +%s)
scripts/dist.sh
second=$(date +%s)
if [ "${DIST_CHECK_GOCACHE:-}" != shared ]; then
  export GOCACHE="$scratch/gocache"
fi
DIST_DIR="$scratch/dist" "$scratch/src/scripts/dist.sh" >/dev/null
end=$(date +%s)
echo "dist-check: built in $((second - first)) s here, $((end - second)) s in $scratch/src (GOCACHE $(go env GOCACHE))"
if diff -u "$out/SHA256SUMS" "$scratch/dist/SHA256SUMS"; then
  echo "dist-check: the two builds are byte for byte the same ($(wc -l <"$out/SHA256SUMS") files)"
else
  rm -rf _build/dist-check && mkdir -p _build && cp -r "$scratch/dist" _build/dist-check
  echo "dist-check: the builds differ (- $out/, + the clone's, kept in _build/dist-check/): compare with cmp -l, go version -m" >&2
  exit 1
fi
