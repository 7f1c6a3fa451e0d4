#!/usr/bin/env bash
# make dist: release binaries into dist/ (never committed): the mcpdrift CLI
# and the otelcol-mcpdrift distribution for every platform in DIST_PLATFORMS,
# a CycloneDX SBOM of each (from its embedded build information, with
# cyclonedx-gomod pinned in tools/; dev/sbom names our own modules in it), and
# SHA256SUMS. VERSION and COMMIT come from the Makefile. Builds are
# reproducible: no paths (-trimpath), no build id, no VCS stamp, no cgo; the
# SBOMs carry no serial number or timestamp. make dist-check builds twice and
# compares.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${VERSION:?VERSION is set by make}
commit=${COMMIT:?COMMIT is set by make}
platforms=${DIST_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}
out=${DIST_DIR:-dist}
export CGO_ENABLED=0 GOWORK=off GOFLAGS="-trimpath -buildvcs=false"
pkg=github.com/mcpdrift/mcpdrift/internal/version
ld="-s -w -buildid="

# The distribution's sources, generated once for every platform: ocb writes
# the version into main.go (otelcol-mcpdrift --version prints it). Same depth
# as make distro's output_path, so the manifest's relative replaces hold.
gen=_build/otelcol-mcpdrift-dist
mkdir -p _build
sed -e "s|^  version: .*|  version: ${version#v}+${commit}|" -e "s|^  output_path: .*|  output_path: ./$gen|" \
  builder-config.yaml >_build/builder-config-dist.yaml
go tool -modfile=tools/go.mod builder --config _build/builder-config-dist.yaml --skip-compilation >/dev/null
go -C tools build -o "$PWD/_build/tools/cyclonedx-gomod" github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod
go build -o _build/tools/sbom-fix ./dev/sbom/cmd/sbom-fix

rm -rf "$out"
mkdir -p "$out"
abs=$(cd "$out" && pwd)
for p in $platforms; do
  os=${p%/*} arch=${p#*/} ext=
  [ "$os" = windows ] && ext=.exe
  cli="mcpdrift_${version#v}_${os}_${arch}$ext"
  col="otelcol-mcpdrift_${version#v}_${os}_${arch}$ext"
  echo "dist: $cli, $col"
  GOOS=$os GOARCH=$arch go build -ldflags "$ld -X $pkg.version=$version -X $pkg.commit=$commit" -o "$abs/$cli" ./cmd/mcpdrift
  GOOS=$os GOARCH=$arch go -C "$gen" build -ldflags "$ld" -o "$abs/$col" .
  for b in "$cli" "$col"; do
    # GOOS and GOARCH: the package URLs take the platform from go env.
    GOOS=$os GOARCH=$arch _build/tools/cyclonedx-gomod bin -json -noserial -notimestamp -version "$version" -output "$abs/$b.cdx.json" "$abs/$b" 2>/dev/null
    # Our modules are directory replacements here: name them (dev/sbom).
    _build/tools/sbom-fix -version "$version" "$abs/$b" "$abs/$b.cdx.json"
  done
done
(cd "$out" && sha256sum -- * >SHA256SUMS)
echo "dist: $(find "$out" -type f | wc -l) files in $out/"
ls -l "$out" | awk 'NR > 1 && $NF !~ /json$/ {printf "  %-48s %6.1f MiB\n", $NF, $5 / 1048576}'
