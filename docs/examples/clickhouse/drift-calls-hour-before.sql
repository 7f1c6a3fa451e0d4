-- Each drift of the last 7 days with the calls made to its changed tools
-- (warning or breaking) in the hour before it, per agent: who was using what
-- just changed, and how many of those calls used the definition now gone.
WITH drifts AS (
    SELECT
        Timestamp                                AS drift_time,
        LogAttributes['mcpdrift.drift.id']       AS drift_id,
        LogAttributes['mcpdrift.server.name']    AS server,
        arrayJoin(arrayDistinct(arrayMap(c -> JSONExtractString(c, 'name'),
            arrayFilter(c -> JSONExtractString(c, 'subject') = 'tool'
                             AND JSONExtractString(c, 'severity') IN ('breaking', 'warning'),
                        JSONExtractArrayRaw(LogAttributes['mcpdrift.drift.changes']))))) AS tool,
        JSONExtractString(LogAttributes['mcpdrift.tools.previous_digests'], tool) AS old_digest
    FROM otel_logs
    WHERE EventName = 'mcpdrift.drift'
      AND Timestamp > now() - INTERVAL 7 DAY
),
calls AS (
    SELECT
        Timestamp,
        coalesce(nullIf(SpanAttributes['mcpdrift.server.name'], ''), ResourceAttributes['mcpdrift.server.name']) AS server,
        SpanAttributes['gen_ai.tool.name']     AS tool,
        SpanAttributes['mcpdrift.tool.digest'] AS digest,
        coalesce(nullIf(SpanAttributes['gen_ai.agent.name'], ''),
                 nullIf(ResourceAttributes['gen_ai.agent.name'], ''), ServiceName) AS agent,
        coalesce(nullIf(SpanAttributes['gen_ai.conversation.id'], ''),
                 nullIf(SpanAttributes['mcpdrift.client.session'], ''),
                 nullIf(SpanAttributes['mcp.session.id'], '')) AS session
    FROM otel_traces
    WHERE SpanAttributes['mcp.method.name'] = 'tools/call'
      AND Timestamp > now() - INTERVAL 7 DAY - INTERVAL 1 HOUR
)
SELECT
    d.drift_time,
    d.drift_id,
    d.server,
    d.tool,
    c.agent,
    count()                         AS calls,
    countIf(c.digest = d.old_digest) AS calls_with_old_digest,
    uniqExact(c.session)            AS sessions,
    max(c.Timestamp)                AS last_call
FROM drifts AS d
INNER JOIN calls AS c ON c.server = d.server AND c.tool = d.tool
WHERE c.Timestamp >= d.drift_time - INTERVAL 1 HOUR
  AND c.Timestamp < d.drift_time
GROUP BY d.drift_time, d.drift_id, d.server, d.tool, c.agent
ORDER BY d.drift_time DESC, calls DESC
