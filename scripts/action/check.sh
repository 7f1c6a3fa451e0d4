#!/usr/bin/env bash
# The GitHub Action's step (action.yml): install the mcpdrift CLI, check the
# target against the lock, and publish the result: annotations in the log
# (--format github), the Markdown report as the step's `report` output and
# in the job summary, the worst severity as `severity`, a SARIF file for
# code scanning as `sarif`. The exit status is check's: 0 under --fail-on,
# 1 at or above it, 2 on usage errors, 3 when the lock cannot be used, 4
# when the probe failed, 5 when a report could not be written.
#
# Inputs come as environment variables (the action maps them):
#   INPUT_TARGET   MCP endpoint URL (http:// or https://), or a stdio command line
#   INPUT_LOCK     lock file (default mcp.lock.json)
#   INPUT_FAIL_ON  breaking, warning, compatible, info or none (default breaking)
#   INPUT_POLICY   default, strict, lenient, or a policy file (default default)
#   INPUT_VERSION  CLI version to `go install` (empty: build from ACTION_PATH)
#   ACTION_PATH    the action's checkout (github.action_path)
#   MCPDRIFT_BIN   a CLI to use as is (tests)
# and GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_TEMP as the runner sets them.
set -euo pipefail

target=${INPUT_TARGET:?the target input is required: an MCP endpoint URL or a stdio command}
lock=${INPUT_LOCK:-mcp.lock.json}
fail_on=${INPUT_FAIL_ON:-breaking}
policy=${INPUT_POLICY:-default}
work=$(mktemp -d "${RUNNER_TEMP:-/tmp}/mcpdrift.XXXXXX")

bin=${MCPDRIFT_BIN:-}
if [[ -z "$bin" ]]; then
  bin="$work/bin/mcpdrift"
  if [[ -n "${INPUT_VERSION:-}" ]]; then
    GOBIN="$work/bin" go install "github.com/mcpdrift/mcpdrift/cmd/mcpdrift@${INPUT_VERSION}"
  else
    (cd "${ACTION_PATH:?ACTION_PATH is not set}" && CGO_ENABLED=0 go build -trimpath -o "$bin" ./cmd/mcpdrift)
  fi
fi

args=(check --lock "$lock" --fail-on "$fail_on" --format github
  --output "markdown=$work/report.md" --output "json=$work/report.json" --output "sarif=$work/report.sarif")
case "$policy" in
  default | strict | lenient) args+=(--policy "$policy") ;;
  *) args+=(--config "$policy") ;;
esac
case "$target" in
  http://* | https://*) args+=(--url "$target") ;;
  *) args+=(--stdio -- bash -c "exec $target") ;;
esac

status=0
"$bin" "${args[@]}" || status=$?

severity=none
if [[ -s "$work/report.json" ]]; then
  # The JSON report starts with its worst severity: {"severity":"breaking",...
  severity=$(sed -n '1s/^{"severity":"\([a-z]*\)".*/\1/p' "$work/report.json")
fi
if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
  delim="mcpdrift_$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
  {
    echo "severity=${severity:-none}"
    echo "sarif=$work/report.sarif"
    echo "report<<$delim"
    if [[ -s "$work/report.md" ]]; then cat "$work/report.md"; else echo "mcpdrift could not check $target (exit $status); see the log."; fi
    echo "$delim"
  } >>"$GITHUB_OUTPUT"
fi
if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
  if [[ -s "$work/report.md" ]]; then cat "$work/report.md" >>"$GITHUB_STEP_SUMMARY"; else echo "mcpdrift could not check the server (exit $status)." >>"$GITHUB_STEP_SUMMARY"; fi
fi
exit "$status"
