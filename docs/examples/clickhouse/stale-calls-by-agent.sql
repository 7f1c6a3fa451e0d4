-- Calls of the last 24 hours that mcpimpact marked stale (made with a tool
-- definition other than the server's), per agent, server and tool.
SELECT
    coalesce(nullIf(SpanAttributes['gen_ai.agent.name'], ''),
             nullIf(ResourceAttributes['gen_ai.agent.name'], ''), ServiceName) AS agent,
    coalesce(nullIf(SpanAttributes['mcpdrift.server.name'], ''), ResourceAttributes['mcpdrift.server.name']) AS server,
    SpanAttributes['gen_ai.tool.name']     AS tool,
    count()                                AS stale_calls,
    countIf(StatusCode = 'Error')          AS failed,
    uniqExact(coalesce(nullIf(SpanAttributes['gen_ai.conversation.id'], ''),
                       nullIf(SpanAttributes['mcpdrift.client.session'], ''),
                       nullIf(SpanAttributes['mcp.session.id'], ''))) AS sessions,
    max(Timestamp)                         AS last_stale_call
FROM otel_traces
WHERE SpanAttributes['mcpdrift.tool.stale'] = 'true'
  AND Timestamp > now() - INTERVAL 1 DAY
GROUP BY agent, server, tool
ORDER BY stale_calls DESC
