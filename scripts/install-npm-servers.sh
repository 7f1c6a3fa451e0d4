#!/usr/bin/env bash
# Installs the real npm MCP servers (and agent hosts, such as Claude Code) the
# tests run, at pinned versions (each from its committed package-lock.json),
# into .cache/npm/<name>/. Idempotent: an install whose lockfile is unchanged
# is skipped. Usage:
#   scripts/install-npm-servers.sh            # every server under testdata/npm
#   scripts/install-npm-servers.sh NAME...    # e.g. server-everything-2025.11.25
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${MCPDRIFT_NPM_CACHE:-$root/.cache/npm}"
command -v npm >/dev/null || { echo "install-npm-servers: npm not found" >&2; exit 1; }

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for d in "$root"/testdata/npm/*/; do names+=("$(basename "$d")"); done
fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9 # tests in several packages may ask at once

pids=()
for name in "${names[@]}"; do
  src="$root/testdata/npm/$name"
  dst="$cache/$name"
  [ -f "$src/package.json" ] || { echo "install-npm-servers: no $src/package.json" >&2; exit 1; }
  if [ -f "$dst/.installed" ] && cmp -s "$src/package-lock.json" "$dst/package-lock.json"; then
    continue
  fi
  (
    rm -rf "$dst" && mkdir -p "$dst"
    cp "$src/package.json" "$src/package-lock.json" "$dst/"
    "$root/scripts/retry.sh" npm ci --prefix "$dst" --no-audit --no-fund --loglevel=error >"$dst/.npm.log" 2>&1 ||
      { echo "install-npm-servers: npm ci failed for $name:" >&2; cat "$dst/.npm.log" >&2; exit 1; }
    touch "$dst/.installed"
    echo "installed $name"
  ) &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
