# Sourced by scripts that work from HEAD as committed (release.sh,
# dist-check.sh): cd to the repository, refuse uncommitted changes (they would
# not be in the clone), and clone HEAD into $scratch/src, a new temporary
# directory removed on exit. $1 says why HEAD must be committed.
repo=$(git rev-parse --show-toplevel)
cd "$repo"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "uncommitted changes: $1; commit or stash first" >&2
  exit 1
fi
scratch=$(mktemp -d)
# A build cache in it has read-only files.
trap 'chmod -R u+w "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
git clone -q --no-checkout "$repo" "$scratch/src"
git -C "$scratch/src" fetch -q "$repo" HEAD
git -C "$scratch/src" checkout -q --detach FETCH_HEAD
