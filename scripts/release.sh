#!/usr/bin/env bash
# Cut release VERSION (make release RELEASE=v0.1.0): in a scratch clone of
# HEAD, make the release commit (every module requires its siblings at
# VERSION, no replace) and tag every module; fetch the tags back into this
# repository; write the modules as a Go module proxy to _build/release/VERSION.
# HEAD and the working tree are left alone. Publish with the printed git push.
set -euo pipefail
version=${1:?usage: scripts/release.sh vX.Y.Z}
# shellcheck source=scripts/clone-head.sh
. "$(dirname "$0")/clone-head.sh" "a release is cut from HEAD as committed"
out="$repo/_build/release/$version"
rm -rf "$out"
mkdir -p "$out"
go run ./dev/release/cmd/cut-release -repo "$scratch/src" -version "$version" -proxy "$out/proxy" >"$scratch/result"
commit=$(head -n1 "$scratch/result")
tags=$(tail -n +2 "$scratch/result")
# shellcheck disable=SC2046
git fetch -q "$scratch/src" $(for t in $tags; do echo "refs/tags/$t:refs/tags/$t"; done)
echo "release commit $commit, tagged:"
echo "$tags" | sed 's/^/  /'
echo "module proxy: $out/proxy"
echo "publish: git push origin $(echo $tags | tr '\n' ' ')"
