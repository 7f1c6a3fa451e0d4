#!/usr/bin/env bash
# retry.sh CMD...: runs CMD, and runs it again after a pause if it fails, up
# to RETRIES tries in all (3 by default; pauses of 5 s, then 20 s). For the
# steps that fetch from a registry (Go modules, npm packages): a cold CI run
# once ended on one TLS handshake timeout at the Go module proxy. A fetch is
# safe to repeat, and a real error fails every try and is shown each time.
set -uo pipefail
tries=${RETRIES:-3}
pause=5
for ((i = 1; ; i++)); do
  "$@" && exit 0
  rc=$?
  if ((i >= tries)); then
    echo "retry.sh: $* failed $i times (exit $rc)" >&2
    exit "$rc"
  fi
  echo "retry.sh: $* failed (exit $rc), try $((i + 1)) of $tries in ${pause}s" >&2
  sleep "$pause"
  pause=20
done
