-- Who called tool {tool} of server {server} with the definition it had
-- before its latest change, in the day before that change and since,
-- per agent and session. Run with, e.g.:
--   clickhouse-client --param_server=search --param_tool=query --queries-file old-digest-callers.sql
WITH last_change AS (
    SELECT
        max(Timestamp) AS drift_time,
        argMax(JSONExtractString(LogAttributes['mcpdrift.tools.previous_digests'], {tool:String}), Timestamp) AS old_digest
    FROM otel_logs
    WHERE EventName = 'mcpdrift.drift'
      AND LogAttributes['mcpdrift.server.name'] = {server:String}
      AND JSONExtractString(LogAttributes['mcpdrift.tools.previous_digests'], {tool:String})
          != JSONExtractString(LogAttributes['mcpdrift.tools.digests'], {tool:String})
)
SELECT
    coalesce(nullIf(SpanAttributes['gen_ai.agent.name'], ''),
             nullIf(ResourceAttributes['gen_ai.agent.name'], ''), ServiceName) AS agent,
    coalesce(nullIf(SpanAttributes['gen_ai.conversation.id'], ''),
             nullIf(SpanAttributes['mcpdrift.client.session'], ''),
             nullIf(SpanAttributes['mcp.session.id'], '')) AS session,
    count()                          AS calls_with_old_digest,
    countIf(Timestamp >= drift_time) AS after_the_change,
    max(Timestamp)                   AS last_call
FROM otel_traces
CROSS JOIN last_change
WHERE SpanAttributes['mcp.method.name'] = 'tools/call'
  AND coalesce(nullIf(SpanAttributes['mcpdrift.server.name'], ''), ResourceAttributes['mcpdrift.server.name']) = {server:String}
  AND SpanAttributes['gen_ai.tool.name'] = {tool:String}
  AND SpanAttributes['mcpdrift.tool.digest'] = old_digest
  AND Timestamp >= drift_time - INTERVAL 1 DAY
GROUP BY agent, session
ORDER BY after_the_change DESC, calls_with_old_digest DESC
