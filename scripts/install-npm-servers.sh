#!/usr/bin/env bash
# Installs the real npm MCP servers (and agent hosts, such as Claude Code) the
# tests run, at pinned versions (each from its committed package-lock.json).
# Each install lives in a directory named for its lockfile's content,
# <cache>/<name>-<first 16 hex of the lockfile's SHA-256>, under a cache shared
# by every checkout (like Go's module cache): a fresh clone reuses what an
# earlier one installed, and a changed lockfile gets a directory of its own.
# The cache is $MCPDRIFT_NPM_CACHE, else $XDG_CACHE_HOME/mcpdrift/npm, else
# ~/.cache/mcpdrift/npm; delete it to reclaim the space. Idempotent. Usage:
#   scripts/install-npm-servers.sh            # every server under testdata/npm
#   scripts/install-npm-servers.sh NAME...    # e.g. server-everything-2025.11.25
#   scripts/install-npm-servers.sh --dir NAME # print NAME's install directory only
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${MCPDRIFT_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpdrift/npm}"

# install_dir NAME: where testdata/npm/NAME's lockfile is installed.
install_dir() {
  local lock="$root/testdata/npm/$1/package-lock.json"
  [ -f "$lock" ] || { echo "install-npm-servers: no $lock" >&2; exit 1; }
  echo "$cache/$1-$(sha256sum "$lock" | cut -c1-16)"
}

if [ "${1:-}" = --dir ]; then
  [ $# -eq 2 ] || { echo "usage: $0 --dir NAME" >&2; exit 2; }
  install_dir "$2"
  exit 0
fi
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
  dst=$(install_dir "$name")
  [ -f "$src/package.json" ] || { echo "install-npm-servers: no $src/package.json" >&2; exit 1; }
  [ -f "$dst/.installed" ] && continue
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
