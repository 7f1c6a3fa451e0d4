-- The impact records mcpimpact emitted for the drifts of the last 7 days:
-- per changed tool, which agents it hurts and how badly.
SELECT
    Timestamp,
    LogAttributes['mcpdrift.drift.id']                      AS drift_id,
    LogAttributes['mcpdrift.server.name']                   AS server,
    LogAttributes['gen_ai.tool.name']                       AS tool,
    LogAttributes['gen_ai.agent.name']                      AS agent,
    LogAttributes['mcpdrift.impact.risk']                   AS risk,
    toUInt64OrZero(LogAttributes['mcpdrift.impact.calls'])    AS calls,
    toUInt64OrZero(LogAttributes['mcpdrift.impact.sessions']) AS sessions,
    JSONExtractUInt(LogAttributes['mcpdrift.impact.digests_used'], 'old') AS calls_with_old_digest,
    JSONExtract(LogAttributes['mcpdrift.impact.session_ids'], 'Array(String)') AS session_sample
FROM otel_logs
WHERE EventName = 'mcpdrift.impact'
  AND Timestamp > now() - INTERVAL 7 DAY
ORDER BY Timestamp DESC, SeverityNumber DESC, calls DESC
