-- Drift events of the last 7 days, worst first, each with its changes as
-- (severity, rule, subject name) tuples.
SELECT
    Timestamp,
    LogAttributes['mcpdrift.server.name']    AS server,
    LogAttributes['mcpdrift.drift.severity'] AS severity,
    LogAttributes['mcpdrift.drift.id']       AS drift_id,
    Body                                     AS summary,
    arrayMap(c -> (JSONExtractString(c, 'severity'), JSONExtractString(c, 'rule'), JSONExtractString(c, 'name')),
             JSONExtractArrayRaw(LogAttributes['mcpdrift.drift.changes'])) AS changes
FROM otel_logs
WHERE EventName = 'mcpdrift.drift'
  AND Timestamp > now() - INTERVAL 7 DAY
ORDER BY SeverityNumber DESC, Timestamp DESC
