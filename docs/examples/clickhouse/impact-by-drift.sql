-- The impact records mcpimpact emitted for the drifts of the last 7 days:
-- per changed tool, which agents it hurts and how badly. Each record splits
-- the agent's calls five ways (mcpdrift.impact.digests_used): stale (planned
-- against a definition the server no longer served: the red number), before
-- (the previous definition, while the server still served it), new (the
-- current one), ahead (waiting for a prompt probe) and unknown.
SELECT
    Timestamp,
    LogAttributes['mcpdrift.drift.id']                      AS drift_id,
    LogAttributes['mcpdrift.server.name']                   AS server,
    LogAttributes['gen_ai.tool.name']                       AS tool,
    LogAttributes['gen_ai.agent.name']                      AS agent,
    LogAttributes['mcpdrift.impact.risk']                   AS risk,
    toUInt64OrZero(LogAttributes['mcpdrift.impact.calls'])    AS calls,
    toUInt64OrZero(LogAttributes['mcpdrift.impact.sessions']) AS sessions,
    JSONExtractUInt(LogAttributes['mcpdrift.impact.digests_used'], 'stale')   AS stale_calls,
    JSONExtractUInt(LogAttributes['mcpdrift.impact.digests_used'], 'before')  AS calls_before_change,
    JSONExtractUInt(LogAttributes['mcpdrift.impact.digests_used'], 'new')     AS calls_with_new_digest,
    JSONExtractUInt(LogAttributes['mcpdrift.impact.digests_used'], 'ahead')   AS ahead_calls,
    JSONExtractUInt(LogAttributes['mcpdrift.impact.digests_used'], 'unknown') AS unknown_calls,
    JSONExtract(LogAttributes['mcpdrift.impact.session_ids'], 'Array(String)') AS session_sample
FROM otel_logs
WHERE EventName = 'mcpdrift.impact'
  AND Timestamp > now() - INTERVAL 7 DAY
ORDER BY Timestamp DESC, SeverityNumber DESC, stale_calls DESC, calls DESC
