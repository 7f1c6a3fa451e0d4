#!/usr/bin/env bash
# Captures logs.json and traces.json: what otelcol-mcpdrift exports (file
# exporter, OTLP JSON) when the real npm server-everything drifts from
# 2025.9.25 to 2025.11.25 while three agents call it. The writer agent's
# spans carry mcpdrift.server.name on their resource only (as after tier 1's
# groupbyattrs in docs/scale-out.md), the others' on the span. The ClickHouse query
# test loads them as the contrib clickhouse exporter would. Run from the
# repository root after `make distro` and scripts/install-npm-servers.sh:
#   dev/docscheck/testdata/clickhouse/capture.sh
set -euo pipefail
root="$(pwd)"
out="$root/dev/docscheck/testdata/clickhouse"
js() { echo "$("$root/scripts/install-npm-servers.sh" --dir "server-everything-$1")/node_modules/@modelcontextprotocol/server-everything/dist/index.js"; }
for v in 2025.9.25 2025.11.25; do
  [ -f "$(js $v)" ] || { echo "capture: $(js $v) missing; run scripts/install-npm-servers.sh" >&2; exit 1; }
done
wait_for() { # wait_for DESCRIPTION COMMAND...: poll for up to 60 s
  local what=$1; shift
  for _ in $(seq 120); do "$@" && return 0; sleep 0.5; done
  echo "capture: timed out waiting for $what" >&2; cat "$work/collector.log" >&2; exit 1
}
work="$(mktemp -d)"
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir "$work/storage"
ln -s "$(js 2025.9.25)" "$work/everything.js"
port=$((20000 + RANDOM % 10000))
cat >"$work/config.yaml" <<YAML
extensions:
  file_storage:
    directory: $work/storage
receivers:
  mcpdrift:
    collection_interval: 2s
    storage: file_storage
    targets:
      - name: everything
        command: [sh, -c, 'exec node "\$EVERYTHING_JS" stdio']
        env:
          EVERYTHING_JS: $work/everything.js
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$port
processors:
  mcpimpact:
exporters:
  file/logs:
    path: $work/logs.json
  file/traces:
    path: $work/traces.json
service:
  extensions: [file_storage]
  pipelines:
    logs: {receivers: [mcpdrift], processors: [mcpimpact], exporters: [file/logs]}
    traces: {receivers: [otlp], processors: [mcpimpact], exporters: [file/traces]}
YAML
"$root/_build/otelcol-mcpdrift/otelcol-mcpdrift" --config "$work/config.yaml" >"$work/collector.log" 2>&1 &
pid=$!

digest() { # digest TOOL: the tool's digest in the latest snapshot
  jq -r --arg t "$1" '.resourceLogs[].scopeLogs[].logRecords[] | select(.eventName=="mcpdrift.snapshot")
    | .attributes[] | select(.key=="mcpdrift.tools.digests") | .value.kvlistValue.values[] | select(.key==$t) | .value.stringValue' \
    "$work/logs.json" | tail -1
}
call() { # call AGENT SESSION TOOL DIGEST [span|resource]: where mcpdrift.server.name goes
  local now server='{"key":"mcpdrift.server.name","value":{"stringValue":"everything"}}' res="" span=""
  now=$(date +%s%N)
  if [ "${5:-span}" = resource ]; then res=",$server"; else span=",$server"; fi
  curl -sf -X POST -H 'Content-Type: application/json' "http://127.0.0.1:$port/v1/traces" -d @- >/dev/null <<JSON
{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"$1"}}$res]},
"scopeSpans":[{"scope":{"name":"github.com/mcpdrift/mcpdrift/interceptor"},"spans":[{
"traceId":"$(openssl rand -hex 16)","spanId":"$(openssl rand -hex 8)","name":"tools/call $3","kind":3,
"startTimeUnixNano":"$now","endTimeUnixNano":"$((now + 4000000))",
"attributes":[{"key":"mcp.method.name","value":{"stringValue":"tools/call"}},
{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},
{"key":"gen_ai.tool.name","value":{"stringValue":"$3"}},
{"key":"gen_ai.agent.name","value":{"stringValue":"$1"}},
{"key":"gen_ai.conversation.id","value":{"stringValue":"$2"}},
{"key":"mcpdrift.tool.digest","value":{"stringValue":"$4"}}$span]}]}]}]}
JSON
}
wait_for "the first snapshot" test -s "$work/logs.json"
old=$(digest startElicitation); echo_d=$(digest echo)
call planner p-1 startElicitation "$old"
call planner p-1 startElicitation "$old"
call writer w-1 startElicitation "$old" resource
call reviewer r-1 echo "$echo_d"
ln -sfn "$(js 2025.11.25)" "$work/everything.js"
wait_for "the drift" grep -q '"mcpdrift.drift"' "$work/logs.json"
new=$(digest startElicitation)
call planner p-2 startElicitation "$old"
call writer w-1 startElicitation "$new" resource
call reviewer r-1 echo "$echo_d"
sleep 2
cp "$work/logs.json" "$work/traces.json" "$out/"
echo "captured $(wc -l <"$out/logs.json") log batches, $(wc -l <"$out/traces.json") trace batches"
